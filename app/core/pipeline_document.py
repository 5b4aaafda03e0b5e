"""Whole-document engines (Unlimited-OCR) inside the page pipeline: the engine reads every chosen page in one
generation and names its regions as they complete; the pipeline decides what the rest of the app sees.

One owner per event:
- the pipeline: RunStarted, DocumentOpened, LayoutDone, TextLayerCompared, PageFinished, RunFinished or
  RunCancelled, and the fatal ErrorRaised of a failed run (unless the engine already reported the cause itself);
- the engine: PhaseChanged(encoding / decoding / assembling), PageEncoded, the generation's RegionStarted,
  PrefixLaid, WindowStepped, NgramBanned and RegionFinished (region id "doc"), one RegionFinished per block as it
  completes, and its own ErrorRaised (a refused document, a budget reached).

The engine announces a page's regions as blocks complete (LayoutDone, boxes in pixels of the page images it was
given, e.g. 300 DPI). Those never leave the pipeline as they are: `DocumentRelay` converts each into the pipeline's
regions (boxes at the page's display DPI, the pipeline's ids and extras, picture crops saved) and emits a LayoutDone
only when that page's layout changed. After the run the result's regions go through the same conversion, and a
page's layout is emitted again only if it differs from the last one sent. So every LayoutDone a listener sees is in
the page view's coordinates; a page's layout grows as blocks complete (each one extends the previous) and the last
one equals the output, live and in a replayed trace alike. Run-lifecycle events an engine might emit itself
(RunStarted, RunFinished, RunCancelled, PageFinished, DocumentOpened) are dropped: the pipeline reports those.

What must never live here: Qt, model code, the page pipeline for region engines (app.core.pipeline).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from app.core.assembly import route
from app.core.events import (
    DocumentOpened, ErrorRaised, Event, LayoutDone, PageFinished, PhaseChanged, RunCancelled, RunFinished, RunStarted,
)
from app.core.regions import TASKS, Region

if TYPE_CHECKING:  # pragma: no cover
    from app.core.pipeline import Pipeline

PIPELINE_OWNED = (RunStarted, RunFinished, RunCancelled, PageFinished, DocumentOpened)


class DocumentRelay:
    """The `emit` a whole-document engine gets from the pipeline (see the module docstring)."""

    def __init__(self, pipe: "Pipeline", indices: Sequence[int], engine_dpi: float) -> None:
        self.pipe = pipe
        self.indices = list(indices)
        self.engine_dpi = float(engine_dpi)
        self.sent: dict[int, list[dict[str, Any]]] = {}  # page → the regions of the last LayoutDone emitted
        self.engine_reported_fatal = False
        self._pictures: dict[tuple, str | None] = {}  # (id, box_pt) → saved crop (None: saving failed)

    def __call__(self, event: Event) -> None:
        if isinstance(event, PIPELINE_OWNED):
            return
        if isinstance(event, LayoutDone):
            page = int(event.page)
            regions = [self.convert(Region.from_dict(d), page, k) for k, d in enumerate(event.regions)]
            self.publish(page, regions)
            return
        if isinstance(event, ErrorRaised) and event.fatal:
            self.engine_reported_fatal = True
        self.pipe.emit(event)

    def convert(self, r: Region, page: int, order: int) -> Region:
        """An engine region on document page `page` → the pipeline's region (display DPI, pipeline id)."""
        from app.core.layout import region_id

        doc = self.pipe.document
        native = doc.native_dpi(page)
        src_dpi = float(r.dpi) if r.dpi and r.dpi != 72.0 else (native or self.engine_dpi)
        dst_dpi = self.pipe.page_dpi(page)
        box_pt = tuple(round(v * 72.0 / src_dpi, 2) for v in r.box)
        extra = {**r.extra, "native_label": r.extra.get("native_label", r.label), "engine": self.pipe.engine_name,
                 "stats": {}, "engine_region_id": r.id}
        return Region(
            id=region_id(page, order), page=page, box=tuple(v * dst_dpi / 72.0 for v in box_pt),  # type: ignore[arg-type]
            label=r.label, task=r.task if r.task in TASKS else route(r.label), order=order,
            box_pt=box_pt, dpi=dst_dpi, score=r.score, text=r.text,  # type: ignore[arg-type]
            source=self.pipe.engine_name, flags=list(r.flags), extra=extra,
        )

    def keep_pictures(self, regions: Sequence[Region]) -> None:
        """Picture crops saved once per region and box (a growing layout re-announces the same pictures)."""
        for r in regions:
            if r.task != "picture":
                continue
            key = (r.id, tuple(r.box_pt))
            if key not in self._pictures:
                self.pipe.keep_pictures([r])
                self._pictures[key] = r.extra.get("picture_path")
            elif self._pictures[key]:
                r.extra["picture_path"] = self._pictures[key]

    def publish(self, page: int, regions: Sequence[Region]) -> None:
        """Emit page `page`'s layout unless it is the one last sent."""
        self.keep_pictures(regions)
        dicts = [r.to_dict() for r in regions]
        if self.sent.get(page) != dicts:
            self.sent[page] = dicts
            self.pipe.emit(LayoutDone(page, dicts, self.pipe.engine_name))


def run_document_engine(pipe: "Pipeline", indices: list[int]) -> bool:
    """Read pages `indices` with the pipeline's whole-document engine; fills `pipe.output` and emits the page
    events. Returns whether the run was cancelled."""
    from app.core.pipeline import LazyPages
    from app.core.pipeline_output import PageOutput

    doc, out = pipe.document, pipe.output
    engine_dpi = float(getattr(pipe.engine, "render_dpi", None) or 300.0)
    for i in indices:
        dpi = pipe.page_dpi(i)
        out.pages.append(PageOutput(i, *doc.page_size_pt(i), dpi, *doc.page_size_px(i, dpi), layout=pipe.engine_name,
                                    has_text_layer=bool(pipe.text_words(i))))
    pipe.emit(PhaseChanged("decoding", detail=f"{len(indices)} pages", current=0, total=len(indices)))
    relay = pipe.document_relay = DocumentRelay(pipe, indices, engine_dpi)
    result = pipe.engine.decode_document(LazyPages(doc, indices, engine_dpi), emit=relay, cancel=pipe.cancel)
    by_page: dict[int, list[Region]] = {i: [] for i in indices}
    for r in result.regions:  # the result's `page` indexes the page sequence
        actual = indices[r.page] if 0 <= r.page < len(indices) else indices[-1]
        by_page[actual].append(relay.convert(r, actual, len(by_page[actual])))
    for page in out.pages:
        page.regions = by_page[page.index]
        relay.publish(page.index, page.regions)
        page.decoded = True
        pipe._compare_page(page)
        pipe.emit(PageFinished(page.index, len(page.regions)))
    out.stats["engine_stats"] = dict(result.stats)
    return bool(result.cancelled)
