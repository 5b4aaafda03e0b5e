"""What every OCR engine is to the pipeline: the two Protocols and their results.

Two shapes of engine exist:
- region engines read one crop for one task (GravityOCR self-spec, GLM-OCR AR, classic RapidOCR, built-in);
- document engines read whole pages in one generation and report their blocks as they complete (Unlimited-OCR).

The Protocols list everything the pipeline uses; every engine implements all of it (no `getattr` with a default,
no signature inspection). Event contract of a region engine: for every `decode_region` that returns, it has emitted
exactly one RegionFinished for `region_id`, after a RegionStarted (a remote engine that retries a request starts the
region again); when it raises, the pipeline reports the failure.
A document engine emits its generation's events under its own stream id and hands each completed block to
`on_blocks` (plain Regions in the pixels of the page images it was given); it never emits LayoutDone or run
lifecycle events: the pipeline owns those.

What must never live here: model code, Qt, the registry (app.core.engines).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence, runtime_checkable

from app.core.base.cancel import CancelToken

if TYPE_CHECKING:  # pragma: no cover
    from contextlib import AbstractAsyncContextManager

    from PIL import Image

    from app.core.record.events import Event
    from app.core.document.regions import Region

Emit = Callable[["Event"], None]
# a document engine's completed blocks: (index into the page sequence, that page's regions so far)
BlocksCallback = Callable[[int, list["Region"]], None]


def no_emit(_event: "Event") -> None:
    """The emit callable for callers that do not listen."""


def no_blocks(_page: int, _regions: list["Region"]) -> None:
    """The block callback for callers that only want the final result."""


class EngineUnavailable(RuntimeError):
    """The engine cannot run here; the message says why and what to install or download."""


@dataclass
class RegionResult:
    region_id: str
    text: str
    tokens: list[int] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    # the log-probability the model gave each output token (same length as `tokens`), or empty when the engine
    # (or the server) reports none: block confidence is derived from it, never invented
    logprobs: list[float] = field(default_factory=list)


@dataclass
class DocumentResult:
    regions: list["Region"]  # with .text filled, pages in order
    raw_text: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False


class Engine(Protocol):
    name: str  # the registry name the engine was opened as
    kind: str  # "region" | "document"
    device: str  # where it computes ("cpu", "cuda:0", …)
    input_dpi: float  # the DPI the pipeline renders its input at (crops for region engines, pages for document ones)
    concurrency: int  # regions it reads at once: 1 for a local model (one lane), N for servers (the scheduler's cap)

    def close(self) -> None:
        """Release the model (the worker drops an engine when the person picks another)."""


class RegionEngine(Engine, Protocol):
    def decode_region(
        self, image: "Image.Image", task: str, *, region_id: str, page: int = 0, emit: Emit = no_emit,
        cancel: CancelToken | None = None,
    ) -> RegionResult: ...


@runtime_checkable
class LineRegionEngine(RegionEngine, Protocol):
    """A region engine that can read text lines another step already found (the layout's OCR on a scanned page)
    instead of finding them again: one detection pass per page. `lines` are boxes (x0, y0, x1, y1, …) in the pixels
    of `image`, in any order; the events and the result are those of decode_region. The pipeline checks
    `isinstance(engine, LineRegionEngine)` (app.core.pipeline.text_source)."""

    def decode_lines(
        self, image: "Image.Image", task: str, lines: Sequence[Sequence[float]], *, region_id: str, page: int = 0,
        emit: Emit = no_emit, cancel: CancelToken | None = None,
    ) -> RegionResult: ...


@runtime_checkable
class PageLineEngine(LineRegionEngine, Protocol):
    """A line engine that can read a whole scanned page's lines at once (detected once, recognised once, batched),
    so the layout, the orientation check and its own regions share them (app.core.pipeline.page_ocr): `read_page`
    returns the page's lines (app.core.engines.builtin.page_lines.PageLine), `detect_page` the detector's boxes
    alone (`read_page(dets=...)` then reads those, detecting nothing again); `decode_lines(known=...)` takes a
    region's lines with their readings and reads none of them again."""

    def read_page(self, image: "Image.Image", page: int = 0, dets: Sequence[Sequence[float]] | None = None
                  ) -> list[Any]: ...

    def detect_page(self, image: "Image.Image") -> list[tuple[float, float, float, float]]: ...

    def decode_lines(
        self, image: "Image.Image", task: str, lines: Sequence[Sequence[float]], *, region_id: str, page: int = 0,
        emit: Emit = no_emit, cancel: CancelToken | None = None, known: Sequence[Any] | None = None,
    ) -> RegionResult: ...


class ConcurrentRegionEngine(RegionEngine, Protocol):
    """A region engine with `concurrency` > 1 (servers): the region scheduler runs its reads on an asyncio loop."""

    def session(self) -> "AbstractAsyncContextManager[Any]":
        """The connections of one run, opened on the running loop."""

    def server_stats(self) -> list[dict[str, Any]]:
        """Per server: requests, failures and the speculative statistics it reports (None when it reports none)."""

    async def decode_region_async(
        self, image: "Image.Image", task: str, *, region_id: str, page: int = 0, emit: Emit = no_emit,
        cancel: CancelToken | None = None,
    ) -> RegionResult: ...


class DocumentEngine(Engine, Protocol):
    def decode_document(
        self, pages: Sequence["Image.Image"], *, emit: Emit = no_emit, cancel: CancelToken | None = None,
        on_blocks: BlocksCallback = no_blocks,
    ) -> DocumentResult: ...
