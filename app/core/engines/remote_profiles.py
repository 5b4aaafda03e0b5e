"""The remote engine's model families (how each is asked) and its defaults, apart from the HTTP code so that the
engine registry (app.core.engines) can declare the remote options and say which kind of engine a profile makes
without importing the client.

What must never live here: HTTP, events.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from app.core.document.regions import TASK_PROMPTS
from app.core.engines.spec import EngineOption, EngineSpec

DEFAULT_KEY_VARIABLE = "SCRIPTORIUM_API_KEY"
DEFAULT_CONCURRENCY = 8  # requests in flight per server
DEFAULT_PROFILE = "glmocr"


@dataclass(frozen=True)
class Profile:
    """How one model family is asked: prompts per task, the order of image and text, server-specific extras."""

    name: str
    title: str
    prompts: dict[str, str]
    text_first: bool = False
    whole_page: bool = False  # one request per page, answered with `<|det|>` blocks (app.core.engines.remote_pages)
    gravity: bool = False  # GravityOCR's SGLang worker: tokens per forward = accept length / 2
    sglang_extra: dict[str, Any] = field(default_factory=dict)
    vllm_extra: dict[str, Any] = field(default_factory=dict)


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("glmocr", "GLM-OCR (regions)", dict(TASK_PROMPTS)),
    Profile("gravity", "GravityOCR on its SGLang patch (regions)", dict(TASK_PROMPTS), gravity=True),
    # Unlimited-OCR reads a whole page per request (baidu/Unlimited-OCR infer.py): the text first, its n-gram
    # blocker with the single-page window; SGLang runs the real sliding window, vLLM its masked variant
    Profile("unlimited", "Unlimited-OCR (one page per request)", {"text": "document parsing."}, text_first=True,
            whole_page=True,
            sglang_extra={"skip_special_tokens": False, "images_config": {"image_mode": "gundam"},
                          "custom_params": {"ngram_size": 35, "window_size": 128}},
            vllm_extra={"skip_special_tokens": False}),
)}


def remote_kind(options: Mapping[str, Any]) -> str:
    """The kind of engine the remote engine is under `options`: whole-page profiles (Unlimited-OCR) read pages and
    report blocks with their boxes, a document engine; the others read regions."""
    profile = PROFILES.get(str(options.get("profile") or DEFAULT_PROFILE))
    return "document" if profile is not None and profile.whole_page else "region"


REMOTE_OPTIONS = (
    EngineOption("servers", list, [], "OCR server for --engine remote (OpenAI-compatible, e.g. "
                 "http://host:30000/v1); repeatable", flag="--server", metavar="URL", required=True,
                 label="Server URLs (space-separated, e.g. http://gpu1:30000/v1)"),
    EngineOption("remote_model", str, "", "the served model's name (default: the first the server lists)",
                 metavar="NAME", label="Served model name (empty: the first the server lists)"),
    EngineOption("profile", str, DEFAULT_PROFILE, "prompts of the model family", choices=tuple(PROFILES),
                 flag="--remote-profile", label="Model family's prompts", setting="remote_profile"),
    EngineOption("concurrency", int, DEFAULT_CONCURRENCY, f"requests in flight per server (default "
                 f"{DEFAULT_CONCURRENCY})", minimum=1, maximum=512, metavar="N", changes_text=False,
                 label="Requests in flight per server"),
    EngineOption("api_key_env", str, DEFAULT_KEY_VARIABLE, "environment variable holding the servers' API "
                 f"key (default {DEFAULT_KEY_VARIABLE})", metavar="VAR", changes_text=False,
                 label="Environment variable holding the API key (the key itself is never stored)"),
    EngineOption("stream", bool, True, "whole answers instead of streamed text (SGLang then reports "
                 "per-request draft statistics)", changes_text=False, label="Stream the text as it is written"),
)


# the remote engine's registration (pyproject's scriptorium.engines entry points name it)
REMOTE = EngineSpec("remote", "Remote server (SGLang, vLLM, OpenAI-compatible)", remote_kind,
                    "app.core.engines.remote:open_engine", options=REMOTE_OPTIONS, group="Servers")
