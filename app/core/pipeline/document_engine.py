"""Whole-document engines (Unlimited-OCR) inside the run: the engine reads every chosen page in one generation and
hands over its blocks as they complete; the pipeline turns them into its regions and announces them.

Who sends what (each event has one owner):
- the pipeline: RunStarted, DocumentOpened, LayoutDone, TextLayerCompared, PageFinished, RunFinished or
  RunCancelled, and the fatal ErrorRaised of a failed run;
- the engine: PhaseChanged(encoding / decoding / assembling), PageEncoded, the generation's RegionStarted,
  PrefixLaid, WindowStepped, NgramBanned and RegionFinished (its stream id, e.g. "doc"), one RegionFinished per
  block as it completes (after the block was handed over), and non-fatal ErrorRaised (a budget reached).

The engine's blocks come in the pixels of the page images it was given (e.g. 300 DPI) through `on_blocks`; the
pipeline converts them (boxes at the page's display DPI, its ids and extras, picture crops saved) and emits a
LayoutDone only when that page's layout changed. After the run the result's regions go through the same conversion.
So a page's layout grows as blocks complete and the last LayoutDone equals the output, live and replayed alike.

What must never live here: Qt, model code, the page run of region engines (app.core.pipeline.run).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from app.core.document import Document
from app.core.base.cancel import Cancelled
from app.core.record.events import Event, LayoutDone, PageFinished, PhaseChanged
from app.core.pipeline.options import PipelineError
from app.core.pipeline.output import DocumentOutput, PageOutput
from app.core.document.regions import TASKS, Region, region_id, route
from app.core.base.wording import count


class LazyPages(Sequence):
    """Pages rendered on demand through the document's bounded cache (a 500-page PDF is never all in memory)."""

    def __init__(self, document: Document, indices: list[int], dpi: float) -> None:
        self.document, self.indices, self.dpi = document, indices, dpi

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.document.render(self.indices[i], self.dpi)


class BlockIntake:
    """Turns the engine's blocks into the pipeline's regions and announces each page's layout when it changed."""

    def __init__(self, indices: Sequence[int], output: DocumentOutput, *, engine_name: str, engine_dpi: float,
                 native_dpi: Callable[[int], float | None], page_dpi: Callable[[int], float],
                 keep_pictures: Callable[[Sequence[Region]], None], emit: Callable[[Event], None]) -> None:
        """`native_dpi(page)`: a scanned page's own DPI (None: vector); `page_dpi(page)`: the display DPI of the
        regions' pixel boxes; `keep_pictures(regions)` saves their picture crops."""
        self.indices = list(indices)
        self.output, self.engine_name, self.engine_dpi = output, engine_name, float(engine_dpi)
        self.native_dpi, self.page_dpi, self.save_pictures, self.emit = native_dpi, page_dpi, keep_pictures, emit
        self.sent: dict[int, list[dict[str, Any]]] = {}  # page → the regions of the last LayoutDone emitted
        self._pictures: dict[tuple, str | None] = {}  # (id, box_pt) → saved crop (None: saving failed)

    def page_of(self, position: int) -> int:
        """The document page of a position in the engine's page sequence (clamped, for a runaway `<PAGE>`)."""
        return self.indices[min(max(position, 0), len(self.indices) - 1)]

    def __call__(self, position: int, regions: list[Region]) -> None:
        page = self.page_of(position)
        self.publish(self.output.page(page), [self.convert(r, page, k) for k, r in enumerate(regions)])

    def convert(self, r: Region, page: int, order: int) -> Region:
        """An engine region on document page `page` → the pipeline's region (display DPI, pipeline id)."""
        native = self.native_dpi(page)
        src_dpi = float(r.dpi) if r.dpi and r.dpi != 72.0 else (native or self.engine_dpi)
        dst_dpi = self.page_dpi(page)
        box_pt = tuple(round(v * 72.0 / src_dpi, 2) for v in r.box)
        extra = {**r.extra, "native_label": r.extra.get("native_label", r.label), "engine": self.engine_name,
                 "stats": {}, "engine_region_id": r.id}
        return Region(
            id=region_id(page, order), page=page, box=tuple(v * dst_dpi / 72.0 for v in box_pt),  # type: ignore[arg-type]
            label=r.label, task=r.task if r.task in TASKS else route(r.label), order=order,
            box_pt=box_pt, dpi=dst_dpi, score=r.score, text=r.text,  # type: ignore[arg-type]
            source=self.engine_name, flags=list(r.flags), extra=extra,
        )

    def keep_pictures(self, regions: Sequence[Region]) -> None:
        """Picture crops saved once per region and box (a growing layout re-announces the same pictures)."""
        for r in regions:
            if r.task != "picture":
                continue
            key = (r.id, tuple(r.box_pt))
            if key not in self._pictures:
                self.save_pictures([r])
                self._pictures[key] = r.extra.get("picture_path")
            elif self._pictures[key]:
                r.extra["picture_path"] = self._pictures[key]

    def publish(self, page: PageOutput, regions: list[Region]) -> None:
        """Make `regions` page `page`'s layout and emit it unless it is the one last sent."""
        self.keep_pictures(regions)
        page.regions = regions
        dicts = [r.to_dict() for r in regions]
        if self.sent.get(page.index) != dicts:
            self.sent[page.index] = dicts
            self.emit(LayoutDone(page.index, dicts, page.layout, **page.frame()))


def run_document_engine(pipe, indices: list[int]) -> None:
    """Read pages `indices` with the pipeline's whole-document engine; fills `pipe.output` and emits the page
    events. Raises Cancelled when the run was cancelled, PipelineError when the engine failed."""
    doc, out = pipe.document, pipe.output
    for i in indices:
        out.pages.append(pipe.new_page(i, pipe.page_dpi(i), pipe.engine_name))
    pipe.emit(PhaseChanged("decoding", detail=count(len(indices), "page"), current=0, total=len(indices)))
    intake = BlockIntake(indices, out, engine_name=pipe.engine_name, engine_dpi=pipe.engine.input_dpi,
                         native_dpi=doc.native_dpi, page_dpi=pipe.page_dpi, keep_pictures=pipe.keep_pictures,
                         emit=pipe.emit)
    try:
        result = pipe.engine.decode_document(LazyPages(doc, indices, intake.engine_dpi), emit=pipe.emit,
                                             cancel=pipe.cancel, on_blocks=intake)
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - the whole document is one decode: its failure is fatal
        reason = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        raise PipelineError(f"{doc.name}: engine {pipe.engine_name!r} failed ({reason})", "engine") from exc
    by_page: dict[int, list[Region]] = {i: [] for i in indices}
    for r in result.regions:  # the result's `page` indexes the page sequence
        actual = intake.page_of(r.page)
        by_page[actual].append(intake.convert(r, actual, len(by_page[actual])))
    for page in out.pages:
        intake.publish(page, by_page[page.index])
        page.decoded = True
        pipe.compare_page(page)
        pipe.emit(PageFinished(page.index, len(page.regions)))
    out.stats["engine_stats"] = dict(result.stats)
    if result.cancelled:
        raise Cancelled()
