"""The run (docs/architecture.md, The page pipeline): document → pages → layout → regions → crops → decode,
and re-runs of pages or regions. Qt-free; the GUI's worker thread and `scriptorium convert` drive exactly
this code.

    pipe = Pipeline(PipelineOptions(engine="auto", pages="1-5"), emit=print, cancel=CancelToken())
    out = pipe.run("report.pdf")             # DocumentOutput; raises PipelineError on a fatal error
    pipe.write(out_dir)                      # the one writer: <stem>.md, <stem>.json, <stem>_images/
    pipe.rerun(pages=[0], keep={"p1-r03"})   # read page 1 again with the loaded model, an edited block kept
    pipe.rerun(region_ids=["p1-r04"])        # read chosen regions again
    pipe.close()

Events (app.core.record.events), in order: RunStarted, PhaseChanged(opening), DocumentOpened,
PhaseChanged(loading_model), then per page PhaseChanged(rendering) + PageRendered, PhaseChanged(layout) +
LayoutDone (the page's frame and regions), PhaseChanged(decoding, current=k, total=n) + the engine's
RegionStarted/…/RegionFinished per decoded region (a local engine with `decode_batch`: a few regions at a
time, their events interleaved; app.core.pipeline.batching), TextLayerCompared (PDF pages with a text layer),
PageFinished; finally PhaseChanged(assembling) and RunFinished or RunCancelled (both with the document's
stats), or a fatal ErrorRaised when the run failed. This class is the only sender of the run's lifecycle
events (RunStarted, DocumentOpened, LayoutDone, PageFinished, RunFinished, RunCancelled); engines send their
region events (app.core.engines.base: the event contract). Whole-document engines (kind "document", e.g.
unlimited) replace layout: app.core.pipeline.document_engine.

Coordinates: every region's `box` is in pixels of the page rendered at `options.dpi` (images: their native
DPI), `box_pt` in PDF points. OCR crops are rendered at the engine's `input_dpi` (images: native)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from app.core.document import RUN_RENDERS, Document, DocumentError, open_document
from app.core.engines import Emit, no_emit, resolve_engine_name
from app.core.base.cancel import CancelToken, Cancelled
from app.core.base.heap import release_free_memory
from app.core.record.events import (
    DocumentOpened,
    ErrorRaised,
    LayoutDone,
    PageFinished,
    PageRendered,
    PhaseChanged,
    RunCancelled,
    RunFinished,
    RunStarted,
)
from app.core.pipeline.batching import batch_size, read_in_batches
from app.core.pipeline.loading import load_engine, load_layout
from app.core.pipeline.options import PipelineError, PipelineOptions, layout_budget, parse_pages
from app.core.pipeline.orient import orient_page
from app.core.pipeline.output import DocumentOutput, PageOutput, write_document
from app.core.pipeline.quality import mark_page_script
from app.core.pipeline.pictures import keep_pictures as keep_crops
from app.core.pipeline.pictures import save_crop, turn_as_read
from app.core.pipeline.page_reader import Pages, decode_concurrently, read_pages
from app.core.pipeline.page_stages import page_stages, timing_page
from app.core.pipeline.reading import ReadContext, record_failure
from app.core.pipeline.run_outcome import document_stats, final_stats, warn_empty_pages
from app.core.pipeline.searchable_pdf import crop_note, noting_crop
from app.core.pipeline.text_compare import compare_with_layer
from app.core.pipeline.text_source import TextSource
from app.core.document.regions import DECODED_TASKS, TASKS, Region, record_result, route

_WHERE = {"document": "open", "engine": "loading_model"}  # PipelineError kind → ErrorRaised.where


class Pipeline:
    """One document, one engine, one layout. Keeps the document and models open after `run` so that pages or
    regions can be read again; `close()` releases the document (the engine belongs to whoever handed it in).
    """

    def __init__(self, options: PipelineOptions | None = None, emit: Emit = no_emit,
                 cancel: CancelToken | None = None, *, engine=None, layout=None, seat=None) -> None:
        self.options = options or PipelineOptions()
        self.emit = emit
        self.cancel = cancel or CancelToken()
        self.document: Document | None = None
        self.engine = engine  # an already-open engine may be handed in (the GUI keeps one loaded)
        self.layout = layout
        self.engine_name = (engine.name if engine is not None
                            else resolve_engine_name(self.options.engine, self.options.model_path))
        self.output: DocumentOutput | None = None
        self._words_cache: dict[int, list] = {}
        # pages a person laid out: read their regions, no layout
        self.fixed_layouts: dict[int, list[Region]] = {}
        # pages read turned as a person said (app.core.pipeline.orient)
        self.page_turns: dict[int, tuple[int, float]] = {}
        # the text layer or the layout's OCR instead of the engine, per region
        self.text_source = TextSource(self)
        self.seat = seat  # a Seat in a batch's shared region queue (app.core.engines.region_queue), or None

    # -- setup -----------------------------------------------------------------------------------------------
    def open(self, path) -> Document:
        self.emit(PhaseChanged("opening", detail=str(path)))
        try:
            doc = open_document(path, self.options.password, cache_pages=RUN_RENDERS)
        except DocumentError as exc:
            raise PipelineError(str(exc), "document") from exc
        self.document = doc
        self._words_cache.clear()
        self.emit(DocumentOpened(str(path), doc.page_count, doc.title, warnings=list(doc.warnings)))
        for w in doc.warnings:
            self.emit(ErrorRaised(w, where="open", fatal=False))
        return doc

    def load_engine(self):
        if self.engine is None:  # app.core.pipeline.loading
            self.engine = load_engine(self.options, self.engine_name, self.emit)
        return self.engine

    def load_layout(self):
        if self.layout is None:
            self.layout = load_layout(self.options, self.emit)
        return self.layout

    @property
    def is_document_engine(self) -> bool:
        return self.engine.kind == "document"

    def page_dpi(self, index: int) -> float:
        native = self.document.native_dpi(index)
        return float(native) if native else float(self.options.dpi)

    def reading(self) -> ReadContext:  # what the region-reading helpers are given (app.core.pipeline.reading)
        return ReadContext(self.engine, self.engine_name, self.document.name, self.emit, self.cancel,
                           self.ocr_dpi, self.document.crop)

    def _pages(self) -> Pages:
        return Pages(self.output, self.layout_page, self.regions_to_read, self.finish_page)

    def ocr_dpi(self, index: int, boosted: bool = True) -> float:  # boosted: small text read larger, page_ocr
        native = self.document.native_dpi(index) or self.options.ocr_dpi  # no engine: only restored pages
        dpi = float(native or (self.options.dpi if self.engine is None else self.engine.input_dpi))
        return dpi * self.text_source.scan.boost(index) if boosted else dpi

    # -- runs ------------------------------------------------------------------------------------------------
    def run(self, path) -> DocumentOutput:
        """Read the document at `path` (the pages `options.pages` names)."""
        return self._lifecycle(str(path), lambda: self._first_run(path))

    def rerun(self, pages: Sequence[int] | None = None, region_ids: Sequence[str] | None = None,
              keep: Sequence[str] = ()) -> DocumentOutput:
        """Read laid-out pages (or chosen regions) of the open document again with the loaded model; their
        layout and region ids stay. `keep`: region ids not to read again (e.g. blocks a person edited)."""
        if self.output is None or self.document is None or self.engine is None:
            raise RuntimeError("rerun() needs a completed run() first")

        def body() -> None:
            # the document and the unchanged layout again, so that a trace of this run replays on its own
            doc = self.document
            self._new_reading()
            self.emit(DocumentOpened(self.output.path, doc.page_count, doc.title,
                                     warnings=list(doc.warnings)))
            chosen = list(pages if pages is not None else [p.index for p in self.output.pages])
            if region_ids:
                chosen = sorted({self.output.region(rid).page for rid in region_ids})
            for i in chosen:
                self._announce_layout(self.output.page(i))
            if region_ids:
                self.decode_regions(region_ids)
            else:
                for i in chosen:
                    self.cancel.check()
                    self.decode_page(i, keep)

        return self._lifecycle(self.output.path, body)

    def _lifecycle(self, path: str, body) -> DocumentOutput:
        """RunStarted, the body, then RunFinished / RunCancelled, or a fatal ErrorRaised and PipelineError."""
        t0 = time.perf_counter()
        o = self.options
        self.emit(RunStarted(engine=self.engine_name, document=path, model=str(o.model_path or ""),
                             device=o.device or "", dtype=o.dtype or "", block_size=int(o.block_size or 0)))
        cancelled = False
        try:
            body()
        except Cancelled:
            cancelled = True
        except PipelineError as exc:
            self.emit(ErrorRaised(str(exc), where=_WHERE.get(exc.kind, exc.kind)))
            raise
        out = self.output
        out.cancelled = cancelled
        warn_empty_pages(out, self.document.name if self.document else out.path, self.text_source.lost_text,
                         self.emit)
        self.emit(PhaseChanged("assembling"))
        out.stats = final_stats(out, time.perf_counter() - t0)  # app.core.pipeline.run_outcome
        if cancelled:
            self.emit(RunCancelled(where="decoding", stats=out.stats))
        else:
            self.emit(RunFinished(stats=out.stats, ms=round((time.perf_counter() - t0) * 1000, 1)))
        return out

    def _first_run(self, path) -> None:
        o = self.options
        doc = self.open(path)
        try:
            for what, value in (("rendering DPI", o.dpi), ("OCR DPI", o.ocr_dpi if o.ocr_dpi else 1.0)):
                if not value > 0:  # an OCR DPI of 0/None means the engine's own
                    raise ValueError(f"the {what} must be above 0, not {value:g}")
            indices = parse_pages(o.pages, doc.page_count)
        except ValueError as exc:
            raise PipelineError(f"{doc.name}: {exc}", "options") from exc
        self.load_engine()
        self._new_reading()
        layout_name = self.engine_name if self.is_document_engine else self.load_layout().name
        self.output = DocumentOutput(str(path), self.engine_name, layout_name, doc.page_count,
                                     warnings=list(doc.warnings))
        if self.is_document_engine:
            from app.core.pipeline.document_engine import run_document_engine

            run_document_engine(self, indices)
            return
        if self.engine.concurrency > 1:  # servers: the region scheduler reads pages as they are laid out
            read_pages(self.reading(), self._pages(), indices, self.seat, self.layout)
            return
        for n, i in enumerate(indices):
            self.cancel.check()
            with timing_page():  # the page's stage milliseconds (app.core.pipeline.page_stages)
                self.output.pages.append(self.layout_page(i, current=n + 1, total=len(indices)))
                self.decode_page(i)

    def _new_reading(self) -> None:
        """Engines keeping a page's script estimate start afresh (another document's page 0 is a new page)."""
        if hasattr(self.engine, "start_page"):
            self.engine.start_page(None)

    def document_stats(self, seconds: float) -> dict[str, Any]:
        """The run's counts over the output as it stands now (e.g. after pages restored from a checkpoint)."""
        return document_stats(self.output, seconds)

    # -- per page --------------------------------------------------------------------------------------------
    def text_words(self, index: int) -> list:
        """The text-layer words of page `index` (app.core.document.TextWord; [] without one or when not
        compared)."""
        if index not in self._words_cache:
            o = self.options
            compared = o.compare_text_layer and o.text_layer != "ignore"
            words = self.text_source.layer(index).words if compared else []
            self._words_cache = {index: words}  # one page at a time is enough; keeps memory flat
        return self._words_cache[index]

    def new_page(self, index: int, dpi: float, layout: str, ms: float = 0.0) -> PageOutput:
        doc = self.document
        turn, skew = doc.orientation(index)
        return PageOutput(index, *doc.page_size_pt(index), dpi, *doc.page_size_px(index, dpi), layout=layout,
                          has_text_layer=bool(self.text_words(index)), ms=ms, rotation=turn,
                          skew=round(skew, 2))

    def _announce_layout(self, page: PageOutput) -> None:
        self.emit(LayoutDone(page.index, [r.to_dict() for r in page.regions], page.layout, **page.frame()))

    def layout_page(self, index: int, *, current: int = 0, total: int = 0) -> PageOutput:
        """Render page `index` and lay it out (emits PageRendered and LayoutDone)."""
        doc = self.document
        # the right way up first: the layout, crops and boxes are of the page as read
        orient_page(self, index)
        dpi = self.page_dpi(index)
        # a person's regions are the page's layout (app.core.review.region_edits)
        if index in self.fixed_layouts:
            page = self.new_page(index, dpi, "person")
            page.regions = sorted(self.fixed_layouts[index], key=lambda r: r.order)
            self.keep_pictures(page.regions)
            self._announce_layout(page)
            return page
        self.emit(PhaseChanged("rendering", detail=f"page {index + 1}", current=current, total=total))
        t0 = time.perf_counter()
        try:
            image = doc.render(index, dpi)
        except DocumentError as exc:
            self.emit(ErrorRaised(str(exc), where="rendering", fatal=False))
            page = self.new_page(index, dpi, "none", (time.perf_counter() - t0) * 1000)
            self._announce_layout(page)
            return page
        self.emit(PageRendered(index, image.width, image.height, dpi))
        self.emit(PhaseChanged("layout", detail=f"page {index + 1}", current=current, total=total))
        layout = self.load_layout()
        source = layout.name
        from app.core.layout.budget import LayoutTimeout

        budget = layout_budget(self.options.layout_timeout, doc, index, doc.has_text_layer(index))
        try:
            kw = self.text_source.scan.layout_kw(index)  # a scan's lines, read once (page_ocr.py)
            if getattr(layout, "overlaps", False):  # its child lays out while this process reads the layer
                kw["meanwhile"] = lambda: self.text_source.meanwhile(index)
            regions = layout.analyse(doc, index, image, dpi, keep_headers=self.options.keep_headers,
                                     cancel=self.cancel, timeout=budget, **kw)
        except Cancelled:
            raise
        except LayoutTimeout:
            self.emit(ErrorRaised(f"{doc.name}: the layout of page {index + 1} took longer than {budget:g} s "
                                  "(a page of thousands of drawings?); the whole page is read as one region",
                                  where="layout", fatal=False))
            regions, source = self._whole_page(index, image, dpi), "page"
        except Exception as exc:  # noqa: BLE001 - a layout failure on one page falls back to the whole page
            self.cancel.check()  # an interrupt native code turned into another exception is still a cancel
            self.emit(ErrorRaised(f"{doc.name}: layout failed on page {index + 1} ({exc}); the whole page is "
                                  "read as one region", where="layout", fatal=False))
            regions, source = self._whole_page(index, image, dpi), "page"
        if not regions and source == "pymupdf":
            # PyMuPDF's layout found nothing (a rotated page, a scan it could not read, a blank page): the
            # last
            # resort reads the whole page; on a blank page that costs one short decode and adds no block
            regions, source = self._whole_page(index, image, dpi), "page"
            for r in regions:
                r.flags.append("fallback")
        if source != "page" and not self.text_words(index):  # a scan: ink no region holds is lost text
            regions = self._recover_lost_lines(index, image, dpi, regions)
        self.keep_pictures(regions)
        page = self.new_page(index, dpi, source)
        page.regions = regions
        page.ms = (time.perf_counter() - t0) * 1000
        self._announce_layout(page)
        return page

    def _recover_lost_lines(self, index: int, image, dpi: float, regions: list[Region]) -> list[Region]:
        from app.core.layout.lost_lines import recover_lost_lines

        regions, lost = recover_lost_lines(image, dpi, regions)
        if lost:
            self.emit(ErrorRaised(f"{self.document.name}: page {index + 1}: the layout missed {lost} line"
                                  f"{'s' if lost > 1 else ''} of text; read as plain text", where="layout",
                                  fatal=False))
        return regions

    def _whole_page(self, index: int, image, dpi: float) -> list[Region]:
        from app.core.layout import PageLayout

        return PageLayout().analyse(self.document, index, image, dpi, keep_headers=self.options.keep_headers)

    def set_regions(self, index: int, regions: list[Region]) -> PageOutput:
        """Replace the regions of a laid-out page (layout edits). Regions keep their task when it is one of
        TASKS, else it follows the label; they are kept in `order`."""
        page = self.output.page(index)
        for r in regions:
            if r.task not in TASKS:  # a task the person chose stays; a missing one follows the label
                r.task = route(r.label, self.options.keep_headers)
        page.regions = sorted(regions, key=lambda r: r.order)
        self.keep_pictures(page.regions)
        return page

    def decode_page(self, index: int, keep: Sequence[str] | set[str] = ()) -> PageOutput:
        """(Re)decode the regions of page `index` (already laid out), except the ids in `keep`."""
        page = self.output.page(index)
        keep = set(keep)
        if self.load_engine().concurrency > 1:
            decode_concurrently(self.reading(), self._pages(), [index], keep, self.seat)
            return page
        todo = self.regions_to_read(page, keep)
        t0 = time.perf_counter()
        # several regions in one forward (batching)
        if (size := batch_size(self.engine, self.options.batch)) > 1:
            read_in_batches(self.reading(), size, index, todo)
            return self.finish_page(page, t0)
        for k, r in enumerate(todo):
            self.cancel.check()
            self.emit(PhaseChanged("decoding", detail=f"page {index + 1}", current=k + 1, total=len(todo)))
            started = time.perf_counter()
            self._decode_one(r)
            release_free_memory(took=time.perf_counter() - started)  # a long one: app.core.base.heap
        return self.finish_page(page, t0)

    def regions_to_read(self, page: PageOutput, keep: set[str] | Sequence[str] = ()) -> list[Region]:
        """The page's regions the engine must read (in order); the others got their text from the text layer
        or the layout's OCR on the way (TextSource.take)."""
        return [r for r in page.regions
                if r.task in DECODED_TASKS and r.id not in keep and not self.text_source.take(r)]

    def finish_page(self, page: PageOutput, t0: float) -> PageOutput:
        """A page's regions are all read: compare it with its text layer and announce it."""
        page.decoded = True
        mark_page_script(page.regions)
        self.compare_page(page)
        page.ms += (time.perf_counter() - t0) * 1000
        page.stages = page_stages() or page.stages
        self.emit(PageFinished(page.index, len(page.regions), round(page.ms, 1), stages=page.stages))
        release_free_memory()  # the page's freed heap back to the system (app.core.base.heap)
        return page

    def decode_regions(self, region_ids: Sequence[str]) -> list[Region]:
        """(Re)decode chosen regions of an already laid-out document."""
        done = []
        wanted = [self.output.region(rid) for rid in region_ids]
        wanted = [r for r in wanted if r.task in DECODED_TASKS]
        for k, r in enumerate(wanted):
            self.cancel.check()
            self.emit(PhaseChanged("decoding", detail=r.id, current=k + 1, total=len(wanted)))
            self._decode_one(r)
            self.compare_page(self.output.page(r.page))
            done.append(r)
        return done

    def _decode_one(self, region: Region) -> None:
        try:
            # the engine reads the crop, or the layout's OCR lines in it when it reads given lines; the crop's
            # DPI and origin go with the result (line boxes in crop pixels → page points: the searchable PDF)
            dpi = self.ocr_dpi(region.page)
            note = crop_note(region.box_pt, dpi)
            result = self.text_source.read(region, self.load_engine(), dpi, emit=noting_crop(self.emit, note))
            result.stats.setdefault("crop", note)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - one failing region must not end the document
            record_failure(self.reading(), region, exc)
            return
        record_result(region, result.text, result.stats, cancelled=result.cancelled, engine=self.engine_name,
                      logprobs=result.logprobs)
        if result.cancelled:
            raise Cancelled()

    def compare_page(self, page: PageOutput) -> None:
        """Per block and per page CER of the OCR text against the text layer (when the page has one), stored
        in `Region.extra` / `page.cer` and announced as one TextLayerCompared event."""
        self.text_source.settle_page(page.regions)  # handwriting marked
        if not self.options.compare_text_layer or self.document.kind != "pdf":
            return
        compare_with_layer(page, self.text_words(page.index), self.text_source.comparable, self.emit)

    # -- pictures and output ---------------------------------------------------------------------------------
    def _picture_failed(self, region: Region, message: str) -> None:
        self.emit(ErrorRaised(message, where="pictures", region_id=region.id, fatal=False))

    def keep_pictures(self, regions: Sequence[Region]) -> None:
        """With `options.picture_dir` (the window's working folder): save picture crops there at layout time.
        """
        if self.options.picture_dir:
            keep_crops(self.document, regions, self.options.picture_dir, self.ocr_dpi, self._picture_failed)

    def save_pictures(self, output: DocumentOutput, out_dir: Path, image_dir: str) -> dict[str, str]:
        """Render picture regions as PNG crops under out_dir/image_dir; returns id → relative path."""
        turn_as_read(self.document, output.pages)  # pages read in another process: cut as they were read
        rel = {r.id: f"{image_dir}/{r.id}.png" for r in output.regions() if r.task == "picture"}
        return {r.id: rel[r.id] for r in output.regions() if r.id in rel and save_crop(
            self.document, r, self.ocr_dpi(r.page, False), out_dir / rel[r.id], self._picture_failed)}

    def write(self, out_dir, stem: str | None = None) -> dict[str, Path]:
        """Write the output set (`options.formats`: <stem>.md, .json, .html, .pdf, .docx, …) and
        <stem>_images/ into out_dir as a unit (app.core.pipeline.output)."""
        stem = stem or Path(self.output.path).stem
        try:
            return write_document(self.output, Path(out_dir), stem, self.save_pictures, self.options.formats,
                                  self.options.password, self.options.alto_version)
        except OSError as exc:
            raise PipelineError(str(exc) if "cannot write" in str(exc) else f"cannot write into {out_dir}: "
                                f"{exc.strerror or exc}", kind="output") from None

    def close(self) -> None:
        if self.document is not None:
            self.document.close()
            self.document = None

