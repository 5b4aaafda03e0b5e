"""The engines: their registry by name, and the one place to add an engine.

Adding an engine = one module in this package (a class implementing app.core.engines.base's Protocol and an
`open_engine(**options)` factory) + an `EngineSpec` line below + a manifest in models/ when it needs weights.

Engines are created lazily from "module:function" strings so that nothing heavy is imported before a model is
needed. Engines emit events (app.core.events) through the `emit` callable and check `cancel` between forwards.

What must never live here: model code (the engine modules), the pipeline (app.core.pipeline).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
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


@dataclass(frozen=True)
class EngineSpec:
    name: str
    title: str
    kind: str  # region | document
    factory: str  # "module:function"; function(**options) -> engine
    manifest: str = ""  # models/<manifest>.json whose weights it needs ("" = none)
    shows: str = ""  # rounds | window | "" (what the live views can show for it)


ENGINES: dict[str, EngineSpec] = {
    spec.name: spec
    for spec in (
        EngineSpec("gravity", "GravityOCR, self-speculative", "region", "app.core.engines.glmocr:open_selfspec", "gravityocr", "rounds"),
        EngineSpec("gravity-ar", "GravityOCR, autoregressive", "region", "app.core.engines.glmocr:open_ar", "gravityocr", ""),
        EngineSpec("glm", "GLM-OCR, autoregressive", "region", "app.core.engines.glmocr:open_ar", "glm-ocr", ""),
        EngineSpec("unlimited", "Unlimited-OCR, whole document (R-SWA)", "document", "app.core.engines.unlimited:open_engine", "unlimited-ocr", "window"),
        EngineSpec("builtin", "Built-in model (self-speculative)", "region", "app.core.engines.builtin:open_engine", "builtin", "rounds"),
        EngineSpec("builtin-ar", "Built-in model, autoregressive", "region", "app.core.engines.builtin:open_ar", "builtin", ""),
        EngineSpec("classic", "Classic OCR (RapidOCR, CPU)", "region", "app.core.engines.classic:open_engine", "", ""),
        EngineSpec("remote", "Remote server (SGLang, vLLM, OpenAI-compatible)", "region", "app.core.engines.remote:open_engine", "", ""),
    )
}


def resolve_engine_name(name: str = "auto", model_path: str | None = None) -> str:
    """The engine "auto" stands for here (docs/engines.md, Automatic choice): GravityOCR when its weights are found (or
    a model folder is given), else the built-in model when installed, else classic RapidOCR."""
    if name and name != "auto":
        return name
    if model_path:
        return "gravity"
    from app.core.loader import find_model_dir

    if find_model_dir("gravityocr") is not None:
        return "gravity"
    if find_model_dir("builtin") is not None:
        return "builtin"
    return "classic"


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
    return getattr(module, func_name)(**options)
