"""Where the app's own files are: bundled resources, model manifests, user data. Works from a source checkout,
an installed package and a PyInstaller bundle alike."""
from __future__ import annotations

import os
import sys
from pathlib import Path


def project_root() -> Path:
    """The folder holding resources/ and models/: the bundle dir when frozen, else the source checkout."""
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen)
    return Path(__file__).resolve().parents[3]  # app/core/base/paths.py


def resources_dir() -> Path:
    return project_root() / "resources"


def models_dir() -> Path:
    return project_root() / "models"


def sample_document() -> Path:
    return resources_dir() / "samples" / "sample.pdf"


def degraded_sample() -> Path:
    """A scan of a faded carbon copy (app.core.document.sample_documents.degraded_text_image): the built-in model's drafts
    are rejected often on it, so the rounds view and its reject inspector have something to show."""
    return resources_dir() / "samples" / "carbon-copy.jpg"


def user_data_dir() -> Path:
    """Per-user state (journal, traces): $SCRIPTORIUM_HOME or the XDG data dir."""
    env = os.environ.get("SCRIPTORIUM_HOME")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "scriptorium"


def cache_dir() -> Path:
    """Files the app can make again (the llama.cpp build, the recogniser's 8-bit copy): $SCRIPTORIUM_CACHE, else
    $XDG_CACHE_HOME/scriptorium, else ~/.cache/scriptorium."""
    env = os.environ.get("SCRIPTORIUM_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scriptorium"


def user_models_dir() -> Path:
    """Extra local model folders (<dir>/<manifest name>/): $SCRIPTORIUM_MODELS or <user data>/models."""
    env = os.environ.get("SCRIPTORIUM_MODELS")
    return Path(env) if env else user_data_dir() / "models"
