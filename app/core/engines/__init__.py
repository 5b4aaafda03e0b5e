"""The engines: their registry by name, and the one place to add an engine.

Adding an engine = one module in this package (a class implementing app.core.engines.base's Protocol and an
`open_engine(**options)` factory) + an `EngineSpec` line below (app.core.engines.spec: its title, kind, options)
+ a manifest in models/ when it needs weights. `convert`'s flags, the window's engine box and the Preferences rows
are generated from the specs.

Engines are created lazily from "module:function" strings so that nothing heavy is imported before a model is
needed. Engines emit events (app.core.record.events) through the `emit` callable and check `cancel` between forwards.

What must never live here: model code (the engine modules), the pipeline (app.core.pipeline).
"""
from __future__ import annotations

import importlib
from typing import Any

from app.core.engines.base import (  # noqa: F401 - the engine vocabulary, importable from the package
    BlocksCallback,
    DocumentEngine,
    DocumentResult,
    Emit,
    Engine,
    EngineUnavailable,
    LineRegionEngine,
    RegionEngine,
    RegionResult,
    no_blocks,
    no_emit,
)
from app.core.engines.remote_profiles import (
    DEFAULT_CONCURRENCY, DEFAULT_KEY_VARIABLE, DEFAULT_PROFILE, PROFILES, remote_kind,
)
from app.core.engines.spec import EngineOption, EngineSpec  # noqa: F401 - the registry's vocabulary


REMOTE_OPTIONS = (
    EngineOption("servers", list, [], "OCR server for --engine remote (OpenAI-compatible, e.g. http://host:30000/v1); "
                 "repeatable", flag="--server", metavar="URL", required=True,
                 label="Server URLs (space-separated, e.g. http://gpu1:30000/v1)"),
    EngineOption("remote_model", str, "", "the served model's name (default: the first the server lists)",
                 metavar="NAME", label="Served model name (empty: the first the server lists)"),
    EngineOption("profile", str, DEFAULT_PROFILE, "prompts of the model family", choices=tuple(PROFILES),
                 flag="--remote-profile", label="Model family's prompts", setting="remote_profile"),
    EngineOption("concurrency", int, DEFAULT_CONCURRENCY, f"requests in flight per server (default "
                 f"{DEFAULT_CONCURRENCY})", minimum=1, maximum=512, metavar="N", changes_text=False,
                 label="Requests in flight per server"),
    EngineOption("api_key_env", str, DEFAULT_KEY_VARIABLE, "environment variable holding the servers' API key "
                 f"(default {DEFAULT_KEY_VARIABLE})", metavar="VAR", changes_text=False,
                 label="Environment variable holding the API key (the key itself is never stored)"),
    EngineOption("stream", bool, True, "whole answers instead of streamed text (SGLang then reports per-request draft "
                 "statistics)", changes_text=False, label="Stream the text as it is written"),
)

ENGINES: dict[str, EngineSpec] = {}


def register(spec: EngineSpec) -> EngineSpec:
    """Add `spec` to the registry (the one line that makes an engine known to convert, the window and Preferences);
    a name already taken is refused."""
    if spec.name in ENGINES or spec.name == "auto":
        raise ValueError(f"an engine named {spec.name!r} is already registered")
    ENGINES[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Take an engine out of the registry (a test's toy engine, once the test is done)."""
    ENGINES.pop(name, None)


LLAMACPP_OPTIONS = (
    EngineOption("gguf", str, "", "the model's GGUF file (default: the one in --model DIR or the glm-ocr-gguf folder)",
                 metavar="FILE", label="Model GGUF file (empty: the glm-ocr-gguf models folder)"),
    EngineOption("mmproj", str, "", "the vision projector's GGUF (default: mmproj*.gguf beside the model)",
                 metavar="FILE", label="Vision projector GGUF (empty: mmproj*.gguf beside the model)"),
    EngineOption("llama_server", str, "", "the llama-server binary (default: $SCRIPTORIUM_LLAMA_SERVER, PATH, or the "
                 "build of `python3 make.py llama-server`)", metavar="FILE", changes_text=False,
                 label="llama-server binary (empty: found or built)"),
    EngineOption("parallel", int, 2, "server slots = regions read at once (default 2)", flag="--llama-parallel",
                 minimum=1, maximum=64, metavar="N", changes_text=False, label="Server slots (regions at once)"),
    EngineOption("threads", int, 0, "CPU threads of the server (default 0: llama.cpp's choice)",
                 flag="--llama-threads", minimum=0, maximum=512, metavar="N", changes_text=False,
                 label="Server CPU threads (0: llama.cpp's choice)"),
    EngineOption("ctx_size", int, 0, "context tokens shared by all slots (default 0: slots x 8192)",
                 flag="--llama-ctx", minimum=0, metavar="N", changes_text=False,
                 label="Context tokens (0: slots x 8192)"),
    EngineOption("gpu_layers", int, -1, "layers offloaded to a GPU (default -1: llama.cpp's choice; 0: CPU only)",
                 flag="--llama-gpu-layers", minimum=-1, metavar="N", changes_text=False,
                 label="GPU layers (-1: llama.cpp's choice)"),
)

for _spec in (
    EngineSpec("gravity", "GravityOCR, self-speculative", "region", "app.core.engines.glm_engine:open_selfspec", "gravityocr", "rounds"),
    EngineSpec("gravity-ar", "GravityOCR, autoregressive", "region", "app.core.engines.glm_engine:open_ar", "gravityocr", ""),
    EngineSpec("glm", "GLM-OCR, autoregressive", "region", "app.core.engines.glm_engine:open_ar", "glm-ocr", ""),
    EngineSpec("unlimited", "Unlimited-OCR, whole document (R-SWA)", "document", "app.core.engines.unlimited:open_engine", "unlimited-ocr", "window"),
    # the built-in model reads printed lines, not LaTeX: a formula's text-layer text beats its reading
    EngineSpec("builtin", "Built-in model (self-speculative)", "region", "app.core.engines.builtin:open_engine", "builtin",
               "rounds", reads_formulas=False),
    EngineSpec("builtin-ar", "Built-in model, autoregressive", "region", "app.core.engines.builtin:open_ar", "builtin", "",
               reads_formulas=False),
    EngineSpec("classic", "Classic OCR (RapidOCR, CPU)", "region", "app.core.engines.classic:open_engine",
               fallback=True, reads_layout_lines=True, reads_formulas=False),
    EngineSpec("llamacpp", "llama.cpp (local)", "region", "app.core.engines.llamacpp:open_engine", "glm-ocr-gguf",
               options=LLAMACPP_OPTIONS, group="llama.cpp"),
    EngineSpec("remote", "Remote server (SGLang, vLLM, OpenAI-compatible)", remote_kind,
               "app.core.engines.remote:open_engine", options=REMOTE_OPTIONS, group="Servers"),
):
    register(_spec)


def fallback_engine() -> EngineSpec:
    """The engine "auto" settles for when no model weights are found (it needs none)."""
    return next(spec for spec in ENGINES.values() if spec.fallback)


def resolve_engine_name(name: str = "auto", model_path: str | None = None) -> str:
    """The engine "auto" stands for here (docs/engines.md, Automatic choice): GravityOCR when its weights are found (or
    a model folder is given), else the built-in model when installed, else the fallback engine (classic RapidOCR)."""
    if name and name != "auto":
        return name
    if model_path:
        return "gravity"
    from app.core.checkpoints.loader import find_model_dir

    if find_model_dir("gravityocr") is not None:
        return "gravity"
    if find_model_dir("builtin") is not None:
        return "builtin"
    return fallback_engine().name


def open_engine(name: str, **options: Any) -> RegionEngine | DocumentEngine:
    """Create an engine by registry name. Options: model_path, device, dtype, block_size, ... (engine-specific);
    `manifest` (the models/*.json name) and `engine` (the registry name) are filled in from the spec.
    Slow (loads weights): call it on the worker thread."""
    try:
        spec = ENGINES[name]
    except KeyError:
        raise EngineUnavailable(f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}") from None
    module_name, func_name = spec.factory.split(":")
    module = importlib.import_module(module_name)
    options.setdefault("manifest", spec.manifest)
    options.setdefault("engine", spec.name)
    engine = getattr(module, func_name)(**options)
    if engine.kind != spec.kind_for(options):  # the registry's word is what the pipeline and the review trust
        engine.close()
        raise RuntimeError(f"engine {name!r} opened as a {engine.kind} engine; its spec says {spec.kind_for(options)}")
    return engine
