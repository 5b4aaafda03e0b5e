"""The engines: their registry by name, and the one place to add an engine.

Adding an engine = one module (a class implementing app.core.engines.base's Protocol, an
`open_engine(**options)` factory and its `EngineSpec`: title, kind, options) and one entry point naming the
spec in the `scriptorium.engines` group (docs/engines.md, Add an engine in one file); Scriptorium's own
engines are registered the same way, in pyproject.toml. `convert`'s flags, the window's engine box and the
Preferences rows are generated from the specs.

Engines are created lazily from "module:function" strings so that nothing heavy is imported before a model is
needed. Engines emit events (app.core.record.events) through the `emit` callable and check `cancel` between
forwards.

What must never live here: model code (the engine modules), the pipeline (app.core.pipeline)."""
from __future__ import annotations

import importlib
import logging
from collections.abc import MutableMapping
from typing import Any

from app.core.engines.base import (  # noqa: F401 - the engine vocabulary, importable from the package
    BlocksCallback,
    DocumentEngine,
    DocumentResult,
    Emit,
    Engine,
    EngineUnavailable,
    LineRegionEngine,
    PageLineEngine,
    RegionEngine,
    RegionResult,
    no_blocks,
    no_emit,
)
from app.core.engines.spec import EngineOption, EngineSpec  # noqa: F401 - the registry's vocabulary


ENTRY_POINTS = "scriptorium.engines"  # the entry-point group every engine is registered in, ours too
_log = logging.getLogger(__name__)


class EngineRegistry(MutableMapping):
    """Engine name → EngineSpec. Filled on first use from the installed distributions' `scriptorium.engines`
    entry points (each names an EngineSpec; Scriptorium's own engines first, in pyproject's order), so an
    engine package installed beside Scriptorium is offered by `convert`, the window's engine box and
    Preferences."""

    def __init__(self, group: str = ENTRY_POINTS) -> None:
        self.group = group
        self._specs: dict[str, EngineSpec] | None = None
        self.refused: list[str] = []  # entry points that did not load, and why

    def _loaded(self) -> dict[str, EngineSpec]:
        if self._specs is None:
            self._specs = {}
            for point in _entry_points(self.group):
                try:
                    spec = point.load()
                    if not isinstance(spec, EngineSpec) or spec.name != point.name:
                        raise TypeError(f"it names {spec!r}, not the EngineSpec of engine {point.name!r}")
                    self.add(spec)
                except Exception as exc:  # noqa: BLE001 - a broken plugin must not take the others with it
                    self.refused.append(f"{point.name} ({point.value}): {exc}")
                    _log.warning("engine entry point %s = %s not loaded: %s", point.name, point.value, exc)
        return self._specs

    def add(self, spec: EngineSpec) -> EngineSpec:
        specs = self._loaded()
        if spec.name in specs or spec.name == "auto":
            raise ValueError(f"an engine named {spec.name!r} is already registered")
        specs[spec.name] = spec
        return spec

    def __getitem__(self, name: str) -> EngineSpec:
        return self._loaded()[name]

    def __setitem__(self, name: str, spec: EngineSpec) -> None:
        if name != spec.name:
            raise ValueError(f"engine {spec.name!r} registered as {name!r}")
        self.add(spec)

    def __delitem__(self, name: str) -> None:
        del self._loaded()[name]

    def __iter__(self):
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def _entry_points(group: str) -> list:
    """The group's entry points, Scriptorium's own first (in their declared order), then the plugins' by name.
    """
    from importlib.metadata import entry_points

    points = list(entry_points(group=group))
    ours = [p for p in points if p.dist is not None and p.dist.name == "scriptorium"]
    return ours + sorted((p for p in points if p not in ours), key=lambda p: p.name)


ENGINES = EngineRegistry()


def register(spec: EngineSpec) -> EngineSpec:
    """Add `spec` to the registry by hand (a test's toy engine; installed engines come through entry points);
    a name already taken is refused."""
    return ENGINES.add(spec)


def unregister(name: str) -> None:
    """Take an engine out of the registry (a test's toy engine, once the test is done)."""
    ENGINES.pop(name, None)


def fallback_engine() -> EngineSpec:
    """The engine "auto" settles for when no model weights are found (it needs none)."""
    return next(spec for spec in ENGINES.values() if spec.fallback)


def resolve_engine_name(name: str = "auto", model_path: str | None = None) -> str:
    """The engine "auto" stands for here (docs/engines.md, Automatic choice): GravityOCR when its weights are
    found (or a model folder is given), else the built-in model when installed, else the fallback engine
    (classic RapidOCR)."""
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
    """Create an engine by registry name. Options: model_path, device, dtype, block_size, ...
    (engine-specific); `manifest` (the models/*.json name) and `engine` (the registry name) are filled in from
    the spec. Slow (loads weights): call it on the worker thread."""
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
