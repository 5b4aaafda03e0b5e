"""What every OCR engine offers the pipeline, and the registry of engines by name.

Two shapes of engine exist:
- region engines read one crop for one task (GravityOCR self-spec, GLM-OCR AR, classic RapidOCR, built-in);
- document engines read whole pages in one generation and return regions (Unlimited-OCR).

Engines are created lazily from "module:function" strings so that nothing heavy is imported before a model is
needed. Engines emit events (app.core.events) through the `emit` callable and check `cancel` between forwards.
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from app.core.events import Event
    from app.core.regions import Region

Emit = Callable[["Event"], None]


def no_emit(_event: "Event") -> None:
    """The emit callable for callers that do not listen."""


class Cancelled(Exception):
    """Raised inside an engine when its CancelToken is set; engines turn it into a partial result."""


class CancelToken:
    """Set from any thread; checked by the worker between two forwards."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()


@dataclass
class RegionResult:
    region_id: str
    text: str
    tokens: list[int] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False


@dataclass
class DocumentResult:
    regions: list["Region"]  # with .text filled, pages in order
    raw_text: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False


class RegionEngine(Protocol):
    name: str
    kind: str  # "region"

    def decode_region(
        self, image: "Image.Image", task: str, *, region_id: str, emit: Emit = no_emit, cancel: CancelToken | None = None
    ) -> RegionResult: ...


class DocumentEngine(Protocol):
    name: str
    kind: str  # "document"

    def decode_document(
        self, pages: Sequence["Image.Image"], *, emit: Emit = no_emit, cancel: CancelToken | None = None
    ) -> DocumentResult: ...


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
        EngineSpec("gravity", "GravityOCR, self-speculative", "region", "app.core.decoding.glmocr_engine:open_selfspec", "gravityocr", "rounds"),
        EngineSpec("gravity-ar", "GravityOCR, autoregressive", "region", "app.core.decoding.glmocr_engine:open_ar", "gravityocr", ""),
        EngineSpec("glm", "GLM-OCR, autoregressive", "region", "app.core.decoding.glmocr_engine:open_ar", "glm-ocr", ""),
        EngineSpec("unlimited", "Unlimited-OCR, whole document (R-SWA)", "document", "app.core.decoding.unlimited_engine:open_engine", "unlimited-ocr", "window"),
        EngineSpec("builtin", "Built-in model (self-speculative)", "region", "app.core.builtin_engine:open_engine", "builtin", "rounds"),
        EngineSpec("classic", "Classic OCR (RapidOCR, CPU)", "region", "app.core.classic_ocr:open_engine", "", ""),
    )
}


class EngineUnavailable(RuntimeError):
    """The engine cannot run here; the message says why and what to install or download."""


def open_engine(name: str, **options: Any) -> RegionEngine | DocumentEngine:
    """Create an engine by registry name. Options: model_path, device, dtype, block_size, ... (engine-specific);
    `manifest` (the models/*.json name) and `engine` (the registry name) are filled in from the spec.
    Slow (loads weights): call it on the worker thread."""
    try:
        spec = ENGINES[name]
    except KeyError:
        raise EngineUnavailable(f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}") from None
    module_name, func_name = spec.factory.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("app."):
            raise EngineUnavailable(f"engine {name!r} is not part of this build ({exc.name} missing)") from exc
        raise
    options.setdefault("manifest", spec.manifest)
    options.setdefault("engine", spec.name)
    return getattr(module, func_name)(**options)
