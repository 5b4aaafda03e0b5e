"""The run (docs/architecture.md, The page pipeline): document → pages → layout → regions → crops → decode, and re-runs
of pages or regions.

Qt-free; the GUI's worker thread and `scriptorium convert` drive exactly this code.

    pipe = Pipeline(PipelineOptions(engine="auto", pages="1-5"), emit=print, cancel=CancelToken())
    out = pipe.run("report.pdf")             # DocumentOutput; raises PipelineError on a fatal error
    pipe.write(out_dir)                      # the one writer: <stem>.md, <stem>.json, <stem>_images/
    pipe.rerun(pages=[0], keep={"p1-r03"})   # read page 1 again with the loaded model, keeping an edited block
    pipe.rerun(region_ids=["p1-r04"])        # read chosen regions again
    pipe.close()

Events (app.core.record.events), in order: RunStarted, PhaseChanged(opening), DocumentOpened, PhaseChanged(loading_model),
then per page PhaseChanged(rendering) + PageRendered, PhaseChanged(layout) + LayoutDone (the page's frame and
regions), PhaseChanged(decoding, current=k, total=n) + the engine's RegionStarted/…/RegionFinished per decoded
region (a local engine with `decode_batch`: a few regions at a time, their events interleaved;
app.core.pipeline.batching), TextLayerCompared (PDF pages with a text layer), PageFinished; finally
PhaseChanged(assembling) and RunFinished or RunCancelled (both with the document's stats), or a fatal ErrorRaised
when the run failed.
This class is the only sender of the run's lifecycle events (RunStarted, DocumentOpened, LayoutDone, PageFinished,
RunFinished, RunCancelled); engines send their region events (app.core.engines.base: the event contract).

Whole-document engines (kind "document", e.g. unlimited) replace layout: app.core.pipeline.document_engine.

Coordinates: every region's `box` is in pixels of the page rendered at `options.dpi` (images: their native DPI),
`box_pt` in PDF points. OCR crops are rendered at the engine's `input_dpi` (images: native).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from app.core.document import Document, DocumentError, open_document
from app.core.engines import Emit, EngineUnavailable, no_emit, resolve_engine_name
from app.core.base.cancel import CancelToken, Cancelled
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
    TextLayerCompared,
)
from app.core.pipeline.batching import batch_size, read_in_batches
from app.core.pipeline.options import PipelineError, PipelineOptions, layout_budget, parse_pages
from app.core.pipeline.orient import orient_page
from app.core.pipeline.output import DocumentOutput, PageOutput, rounded, write_document
from app.core.pipeline.quality import mark_page_script
from app.core.pipeline.pictures import keep_pictures as keep_crops
from app.core.pipeline.pictures import save_crop
from app.core.pipeline.page_reader import Pages, decode_concurrently, read_pages
from app.core.pipeline.reading import ReadContext, record_failure
from app.core.pipeline.searchable_pdf import crop_note, noting_crop
from app.core.pipeline.text_source import TEXT_LAYER, TextSource, text_source
from app.core.document.regions import DECODED_TASKS, MARGIN_LABELS, TASKS, Region, record_result, route

CER_TASKS = ("text", "table")  # LaTeX against a text layer says nothing useful
_WHERE = {"document": "open", "engine": "loading_model"}  # PipelineError kind → ErrorRaised.where


class Pipeline:
    """One document, one engine, one layout. Keeps the document and models open after `run` so that pages or
    regions can be read again; `close()` releases the document (the engine belongs to whoever handed it in)."""

    def __init__(self, options: PipelineOptions | None = None, emit: Emit = no_emit, cancel: CancelToken | None = None,
                 *, engine=None, layout=None, seat=None) -> None:
        self.options = options or PipelineOptions()
        self.emit = emit
        self.cancel = cancel or CancelToken()
        self.document: Document | None = None
        self.engine = engine  # an already-open engine may be handed in (the GUI keeps one loaded)
        self.layout = layout
        self.engine_name = engine.name if engine is not None else resolve_engine_name(self.options.engine,
                                                                                         self.options.model_path)
        self.output: DocumentOutput | None = None
        self._words_cache: dict[int, list] = {}
        self.fixed_layouts: dict[int, list[Region]] = {}  # pages a person laid out: read their regions, no layout
        self.page_turns: dict[int, tuple[int, float]] = {}  # pages read turned as a person said (app.core.pipeline.orient)
        self.text_source = TextSource(self)  # the text layer or the layout's OCR instead of the engine, per region
        self.seat = seat  # a Seat in a batch's shared region queue (app.core.engines.region_queue), or None

    # -- setup -------------------------------------------------------------------------------------------------
    def open(self, path) -> Document:
        self.emit(PhaseChanged("opening", detail=str(path)))
        try:
            doc = open_document(path, self.options.password)
        except DocumentError as exc:
            raise PipelineError(str(exc), "document") from exc
        self.document = doc
        self._words_cache.clear()
        self.emit(DocumentOpened(str(path), doc.page_count, doc.title, warnings=list(doc.warnings)))
        for w in doc.warnings:
            self.emit(ErrorRaised(w, where="open", fatal=False))
        return doc

    def load_engine(self):
        if self.engine is None:
            from app.core.engines import open_engine
            from app.core.checkpoints.loader import ModelError, check_device_name, check_dtype_name

            o = self.options
            try:  # for every engine, also one that runs on neither (classic): a typo must not pass silently
                check_device_name(o.device)
                check_dtype_name(o.dtype)
            except ModelError as exc:
                raise PipelineError(str(exc), "engine") from None
            self.emit(PhaseChanged("loading_model", detail=self.engine_name))
            opts: dict[str, Any] = {k: v for k, v in dict(model_path=o.model_path, device=o.device, dtype=o.dtype,
                                                          block_size=o.block_size, cache=o.cache).items()
                                    if v is not None}
            if o.keep_headers:
                opts["keep_headers"] = True  # whole-document engines route labels themselves
            opts.update(o.engine_options)
            try:
                self.engine = open_engine(self.engine_name, **opts)
            except Exception as exc:  # EngineUnavailable, ModelError, ImportError: all fatal and for a person
                msg = str(exc) if isinstance(exc, (EngineUnavailable, RuntimeError)) else f"{type(exc).__name__}: {exc}"
                raise PipelineError(f"engine {self.engine_name!r} cannot be used: {msg}", "engine") from exc
        return self.engine

    def load_layout(self):
        if self.layout is None:
            from app.core.layout import open_layout

            o = self.options
            try:
                self.layout = open_layout(o.layout, model_path=o.layout_model_path, device=o.device)
            except Exception as exc:  # noqa: BLE001 - a broken layout model is fatal only when asked for by name
                msg = f"layout {o.layout!r} cannot be used: {exc}"
                if o.layout != "auto" or o.layout_model_path:
                    raise PipelineError(msg, "layout") from exc
                self.emit(ErrorRaised(f"{msg}; using PyMuPDF's layout instead", where="layout", fatal=False))
                self.layout = open_layout("pymupdf")
        return self.layout

    @property
    def is_document_engine(self) -> bool:
        return self.engine.kind == "document"

    def page_dpi(self, index: int) -> float:
        native = self.document.native_dpi(index)
        return float(native) if native else float(self.options.dpi)

    def reading(self) -> ReadContext:  # what the region-reading helpers are given (app.core.pipeline.reading)
        return ReadContext(self.engine, self.engine_name, self.document.name, self.emit, self.cancel, self.ocr_dpi,
                           self.document.crop)

    def _pages(self) -> Pages:
        return Pages(self.output, self.layout_page, self.regions_to_read, self.finish_page)

    def ocr_dpi(self, index: int) -> float:
        native = self.document.native_dpi(index)
        return float(native) if native else float(self.options.ocr_dpi or self.engine.input_dpi)

    # -- runs ---------------------------------------------------------------------------------------------------
    def run(self, path) -> DocumentOutput:
        """Read the document at `path` (the pages `options.pages` names)."""
        return self._lifecycle(str(path), lambda: self._first_run(path))

    def rerun(self, pages: Sequence[int] | None = None, region_ids: Sequence[str] | None = None,
              keep: Sequence[str] = ()) -> DocumentOutput:
        """Read laid-out pages (or chosen regions) of the open document again with the loaded model; their layout
        and region ids stay. `keep`: region ids not to read again (e.g. blocks a person edited)."""
        if self.output is None or self.document is None or self.engine is None:
            raise RuntimeError("rerun() needs a completed run() first")

        def body() -> None:
            # the document and the unchanged layout again, so that a trace of this run replays on its own
            doc = self.document
            self.emit(DocumentOpened(self.output.path, doc.page_count, doc.title, warnings=list(doc.warnings)))
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
        self._warn_margins_only(out)
        self.emit(PhaseChanged("assembling"))
        out.stats = {**self._stats(time.perf_counter() - t0), **{k: v for k, v in out.stats.items()
                                                                   if k == "engine_stats"}}
        es = out.stats.get("engine_stats") or {}
        if es.get("output_tokens"):  # a whole-document engine counts its tokens once, for all regions
            out.stats["tokens"] = int(es["output_tokens"])
            out.stats["tokens_per_s"] = round(float(es.get("tokens_per_s") or 0.0), 2)
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
            self.output.pages.append(self.layout_page(i, current=n + 1, total=len(indices)))
            self.decode_page(i)

    def _warn_margins_only(self, out: DocumentOutput) -> None:
        """A page whose only regions are headers, footers, page numbers... gives no Markdown: say so."""
        for page in out.pages:
            tasks = {r.task for r in page.regions}
            if page.regions and tasks == {"skipped"} and any(r.label in MARGIN_LABELS for r in page.regions):
                self.emit(ErrorRaised(f"{self.document.name if self.document else out.path}: page {page.index + 1} "
                                      "holds only headers, footers or page numbers, which are left out "
                                      "(--keep-headers reads them)",
                                      where="layout", fatal=False))
            elif not out.cancelled and self.text_source.lost_text(page):
                self.emit(ErrorRaised(f"{self.document.name}: page {page.index + 1} holds text, but no block of it "
                                      "was read (the layout saw no text there)", where="layout", fatal=False))

    def document_stats(self, seconds: float) -> dict[str, Any]:
        """The run's counts over the output as it stands now (e.g. after pages restored from a checkpoint)."""
        return self._stats(seconds)

    def _stats(self, seconds: float) -> dict[str, Any]:
        out = self.output
        regions = list(out.regions())
        decoded = [r for r in regions if r.task in DECODED_TASKS and "stats" in r.extra]
        tokens = sum(int(r.extra["stats"].get("tokens", r.extra["stats"].get("new_tokens", 0)) or 0) for r in decoded)
        dec_s = sum(_region_ms(r.extra["stats"]) for r in decoded) / 1000
        return {
            "engine": out.engine, "layout": out.layout, "pages": len(out.pages), "regions": len(regions),
            "decoded": len(decoded), "pictures": sum(r.task == "picture" for r in regions),
            "skipped": sum(r.task == "skipped" for r in regions), "tokens": tokens,
            "tokens_per_s": round(tokens / dec_s, 2) if tokens and dec_s > 0 else 0.0,
            "seconds": round(seconds, 3), "cer": rounded(out.cer),
            "errors": sum("error" in r.flags for r in regions),
            "truncated": sum("truncated" in r.flags for r in regions),
            "text_layer_blocks": sum(text_source(r) == TEXT_LAYER for r in regions),
        }

    # -- per page ------------------------------------------------------------------------------------------------
    def text_words(self, index: int) -> list:
        """The text-layer words of page `index` (app.core.document.TextWord; [] without one or when not compared)."""
        if index not in self._words_cache:
            o = self.options
            words = self.text_source.layer(index).words if o.compare_text_layer and o.text_layer != "ignore" else []
            self._words_cache = {index: words}  # one page at a time is enough; keeps memory flat
        return self._words_cache[index]

    def new_page(self, index: int, dpi: float, layout: str, ms: float = 0.0) -> PageOutput:
        doc = self.document
        turn, skew = doc.orientation(index)
        return PageOutput(index, *doc.page_size_pt(index), dpi, *doc.page_size_px(index, dpi), layout=layout,
                          has_text_layer=bool(self.text_words(index)), ms=ms, rotation=turn, skew=round(skew, 2))

    def _announce_layout(self, page: PageOutput) -> None:
        self.emit(LayoutDone(page.index, [r.to_dict() for r in page.regions], page.layout, **page.frame()))

    def layout_page(self, index: int, *, current: int = 0, total: int = 0) -> PageOutput:
        """Render page `index` and lay it out (emits PageRendered and LayoutDone)."""
        doc = self.document
        orient_page(self, index)  # the right way up first: the layout, crops and boxes are of the page as read
        dpi = self.page_dpi(index)
        if index in self.fixed_layouts:  # a person's regions are the page's layout (app.core.review.region_edits)
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

        budget = layout_budget(self.options.layout_timeout, doc, index, bool(self.text_words(index)))
        try:
            regions = layout.analyse(doc, index, image, dpi, keep_headers=self.options.keep_headers,
                                     cancel=self.cancel, timeout=budget)
        except Cancelled:
            raise
        except LayoutTimeout:
            self.emit(ErrorRaised(f"{doc.name}: the layout of page {index + 1} took longer than {budget:g} s (a page "
                                  "of thousands of drawings?); the whole page is read as one region",
                                  where="layout", fatal=False))
            regions, source = self._whole_page(index, image, dpi), "page"
        except Exception as exc:  # noqa: BLE001 - a layout failure on one page falls back to the whole page
            self.cancel.check()  # an interrupt native code turned into another exception is still a cancel
            self.emit(ErrorRaised(f"{doc.name}: layout failed on page {index + 1} ({exc}); the whole page is read "
                                  "as one region", where="layout", fatal=False))
            regions, source = self._whole_page(index, image, dpi), "page"
        if not regions and source == "pymupdf":
            # PyMuPDF's layout found nothing (a rotated page, a scan it could not read, a blank page): the last
            # resort reads the whole page; on a blank page that costs one short decode and adds no block
            regions, source = self._whole_page(index, image, dpi), "page"
            for r in regions:
                r.flags.append("fallback")
        self.keep_pictures(regions)
        page = self.new_page(index, dpi, source)
        page.regions = regions
        page.ms = (time.perf_counter() - t0) * 1000
        self._announce_layout(page)
        return page

    def _whole_page(self, index: int, image, dpi: float) -> list[Region]:
        from app.core.layout import PageLayout

        return PageLayout().analyse(self.document, index, image, dpi, keep_headers=self.options.keep_headers)

    def set_regions(self, index: int, regions: list[Region]) -> PageOutput:
        """Replace the regions of a laid-out page (layout edits). Regions keep their task when it is one of TASKS,
        else it follows the label; they are kept in `order`."""
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
        if (size := batch_size(self.engine, self.options.batch)) > 1:  # several regions in one forward (batching)
            read_in_batches(self.reading(), size, index, todo)
            return self.finish_page(page, t0)
        for k, r in enumerate(todo):
            self.cancel.check()
            self.emit(PhaseChanged("decoding", detail=f"page {index + 1}", current=k + 1, total=len(todo)))
            self._decode_one(r)
        return self.finish_page(page, t0)

    def regions_to_read(self, page: PageOutput, keep: set[str] | Sequence[str] = ()) -> list[Region]:
        """The page's regions the engine must read (in order); the others got their text from the text layer or
        the layout's OCR on the way (TextSource.take)."""
        return [r for r in page.regions if r.task in DECODED_TASKS and r.id not in keep and not self.text_source.take(r)]

    def finish_page(self, page: PageOutput, t0: float) -> PageOutput:
        """A page's regions are all read: compare it with its text layer and announce it."""
        page.decoded = True
        mark_page_script(page.regions)
        self.compare_page(page)
        page.ms += (time.perf_counter() - t0) * 1000
        self.emit(PageFinished(page.index, len(page.regions), round(page.ms, 1)))
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
            # the engine reads the crop, or the layout's OCR lines in it when it reads given lines; the crop's DPI and
            # origin go with the result (line boxes in crop pixels → page points, for the searchable PDF)
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
        """Per block and per page CER of the OCR text against the text layer (when the page has one), stored in
        `Region.extra` / `page.cer` and announced as one TextLayerCompared event."""
        self.text_source.settle_table_headers(page.regions)  # the layer's table header on the engine's tables
        if not self.options.compare_text_layer or self.document.kind != "pdf":
            return
        words = self.text_words(page.index)
        page.has_text_layer = bool(words)
        if not words:
            return
        from app.core.text.textlayer import compare_block, page_cer

        comps = []
        for r in page.regions:
            r.extra.pop("cer", None)
            r.extra.pop("reference_chars", None)
            if r.task not in CER_TASKS or "stats" not in r.extra or not self.text_source.comparable(r):
                continue
            comp = compare_block(r.id, r.text, words, r.box_pt)
            if comp is not None:
                r.extra["cer"] = comp.cer
                r.extra["reference_chars"] = comp.ref_chars
                comps.append(comp)
        page.cer = page_cer(comps)
        blocks = [{"region_id": c.region_id, "cer": float(c.cer), "reference": c.reference,
                   "reference_chars": c.ref_chars} for c in comps]
        self.emit(TextLayerCompared(page=page.index, blocks=blocks, cer=rounded(page.cer, 6)))

    # -- pictures and output --------------------------------------------------------------------------------------
    def _picture_failed(self, region: Region, message: str) -> None:
        self.emit(ErrorRaised(message, where="pictures", region_id=region.id, fatal=False))

    def keep_pictures(self, regions: Sequence[Region]) -> None:
        """With `options.picture_dir` (the window's working folder): save picture crops there at layout time."""
        if self.options.picture_dir:
            keep_crops(self.document, regions, self.options.picture_dir, self.ocr_dpi, self._picture_failed)

    def save_pictures(self, output: DocumentOutput, out_dir: Path, image_dir: str) -> dict[str, str]:
        """Render picture regions as PNG crops under out_dir/image_dir; returns id → relative path."""
        saved: dict[str, str] = {}
        for r in output.regions():
            rel = f"{image_dir}/{r.id}.png"
            if r.task == "picture" and save_crop(self.document, r, self.ocr_dpi(r.page), out_dir / rel,
                                                          self._picture_failed):
                saved[r.id] = rel
        return saved

    def write(self, out_dir, stem: str | None = None) -> dict[str, Path]:
        """Write the output set (`options.formats`: <stem>.md, .json, .html, .pdf, .docx, …) and <stem>_images/ into out_dir
        as a unit (app.core.pipeline.output)."""
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


def _region_ms(stats: dict[str, Any]) -> float:
    for key in ("ms", "total_ms", "request_ms"):
        if stats.get(key):
            return float(stats[key])
    return 0.0
