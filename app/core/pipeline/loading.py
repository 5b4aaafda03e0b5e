"""Opening what a run reads with: the engine (its device and dtype checked first, its options gathered from
the run's options) and the layout (PyMuPDF's when the automatic one cannot be used). Every failure becomes a
PipelineError a person can read.

What must never live here: reading pages or regions (app.core.pipeline.run), the engines' own loading code
(app.core.engines), the layouts themselves (app.core.layout)."""
from __future__ import annotations

from typing import Any

from app.core.engines import Emit, EngineUnavailable
from app.core.pipeline.options import PipelineError, PipelineOptions
from app.core.record.events import ErrorRaised, PhaseChanged


def load_engine(options: PipelineOptions, engine_name: str, emit: Emit):
    """Open engine `engine_name` as `options` ask (emits PhaseChanged(loading_model))."""
    from app.core.checkpoints.loader import ModelError, check_device_name, check_dtype_name
    from app.core.engines import open_engine

    o = options
    try:  # for every engine, also one that runs on neither (classic): a typo must not pass silently
        check_device_name(o.device)
        check_dtype_name(o.dtype)
    except ModelError as exc:
        raise PipelineError(str(exc), "engine") from None
    emit(PhaseChanged("loading_model", detail=engine_name))
    given = dict(model_path=o.model_path, device=o.device, dtype=o.dtype, block_size=o.block_size,
                 cache=o.cache)
    opts: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if o.keep_headers:
        opts["keep_headers"] = True  # whole-document engines route labels themselves
    opts.update(o.engine_options)
    try:
        return open_engine(engine_name, **opts)
    except Exception as exc:  # EngineUnavailable, ModelError, ImportError: all fatal and for a person
        plain = isinstance(exc, (EngineUnavailable, RuntimeError))
        msg = str(exc) if plain else f"{type(exc).__name__}: {exc}"
        raise PipelineError(f"engine {engine_name!r} cannot be used: {msg}", "engine") from exc


def load_layout(options: PipelineOptions, emit: Emit):
    """Open the layout `options` name; the automatic one falls back to PyMuPDF's (said as a non-fatal error).
    """
    from app.core.layout import open_layout

    o = options
    try:
        return open_layout(o.layout, model_path=o.layout_model_path, device=o.device)
    except Exception as exc:  # noqa: BLE001 - a broken layout model is fatal only when asked for by name
        msg = f"layout {o.layout!r} cannot be used: {exc}"
        if o.layout != "auto" or o.layout_model_path:
            raise PipelineError(msg, "layout") from exc
        emit(ErrorRaised(f"{msg}; using PyMuPDF's layout instead", where="layout", fatal=False))
        return open_layout("pymupdf")
