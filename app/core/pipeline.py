"""The page pipeline (DESIGN §5): document → pages → layout → regions → crops → decode → Markdown + JSON.

Qt-free; the GUI's worker thread and `scriptorium convert` drive exactly this code.

    opts = PipelineOptions(engine="auto", layout="auto", dpi=144, pages="1-5")
    pipe = Pipeline(opts, emit=print, cancel=CancelToken())
    out = pipe.run("report.pdf")            # DocumentOutput; raises PipelineError on a fatal error
    out.to_markdown(); out.to_json()         # or: pipe.write(out_dir) → {"markdown": .., "json": .., "images": ..}
    pipe.decode_page(0, keep={"p1-r03"})     # re-run OCR on one page, keeping edited blocks
    pipe.decode_regions(["p1-r04"])          # re-run OCR on chosen regions
    pipe.close()

Events (app.core.events), in order: RunStarted, PhaseChanged(opening), DocumentOpened, PhaseChanged(loading_model),
then per page PhaseChanged(rendering) + PageRendered, PhaseChanged(layout) + LayoutDone(regions=[Region.to_dict()]),
PhaseChanged(decoding, current=k, total=n) + the engine's RegionStarted/…/RegionFinished per decoded region,
TextLayerCompared (per-block CER and the text-layer reference; PDF pages with a text layer only; also after
`decode_regions`), PageFinished; finally PhaseChanged(assembling) and RunFinished (or RunCancelled / ErrorRaised).
Pictures and skipped regions are not decoded (no region events). Cancel is checked between regions (and by the
engine between forwards); a cancelled run still returns what it has, with `cancelled=True`.

Engines: "auto" = gravity when its weights are found, else builtin when shipped, else classic (DESIGN §2).
Whole-document engines (kind "document", e.g. unlimited) replace layout: their regions go straight to assembly;
app.core.pipeline_document relays their events (which of the two emits what: its docstring).

Results (DocumentOutput, PageOutput, the JSON schema) live in app.core.pipeline_output and are re-exported here.

Coordinates: every region's `box` is in pixels of the page rendered at `options.dpi` (images: their native DPI),
`box_pt` in PDF points. OCR crops are rendered at the engine's `preferred_dpi` (default 200; images: native).
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from app.core.assembly import route
from app.core.atomic import atomic_save_image, atomic_write_text
from app.core.document import DEFAULT_DPI, Document, DocumentError, open_document
from app.core.engine import CancelToken, Cancelled, Emit, EngineUnavailable, no_emit
from app.core.events import (
    DocumentOpened, ErrorRaised, LayoutDone, PageFinished, PageRendered, PhaseChanged, RegionFinished, RunCancelled,
    RunFinished, RunStarted, TextLayerCompared,
)
from app.core.pipeline_output import JSON_SCHEMA, DocumentOutput, PageOutput, block_dict, rounded  # noqa: F401
from app.core.regions import Region

DEFAULT_OCR_DPI = 200.0
DECODED_TASKS = ("text", "table", "formula")
CER_TASKS = ("text", "table")  # LaTeX against a text layer says nothing useful


class PipelineError(RuntimeError):
    """A run could not proceed; the message is written for a person. `kind` is document | engine | layout |
    options | output."""

    def __init__(self, message: str, kind: str = "document") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class PipelineOptions:
    engine: str = "auto"  # gravity | gravity-ar | glm | unlimited | builtin | classic | auto
    layout: str = "auto"  # ppdoclayout | pymupdf | page | auto
    dpi: float = DEFAULT_DPI  # display/layout rendering
    ocr_dpi: float | None = None  # crops; None = the engine's preferred_dpi (200)
    pages: str | Sequence[int] | None = None  # "1-5,8" (1-based) or 0-based indices; None = all
    password: str | None = None
    keep_headers: bool = False
    device: str | None = None
    dtype: str | None = None
    model_path: str | None = None
    layout_model_path: str | None = None
    block_size: int | None = None
    compare_text_layer: bool = True
    engine_options: dict[str, Any] = field(default_factory=dict)
    # save picture crops here as soon as a page is laid out (the GUI's working folder), their absolute path in
    # region.extra["picture_path"] (so LayoutDone carries it); None: only `write` saves them, next to the export
    picture_dir: str | None = None


def parse_pages(spec: str | Sequence[int] | None, page_count: int) -> list[int]:
    """'1-3,7,9-' (1-based, inclusive; open ends allowed) or 0-based indices → sorted 0-based indices.
    Raises ValueError with a message for a person."""
    if spec is None or spec == "" or spec == "all":
        return list(range(page_count))
    if not isinstance(spec, str):
        out = sorted({int(i) for i in spec})
        bad = [i for i in out if not 0 <= i < page_count]
        if bad:
            raise ValueError(f"page {bad[0] + 1} does not exist (the document has {page_count} pages)")
        return out
    chosen: set[int] = set()
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                start = int(a) if a else 1
                end = int(b) if b else page_count
            else:
                start = end = int(part)
        except ValueError:
            raise ValueError(f"cannot read the page range {part!r} (use e.g. 1-5,8)") from None
        if start < 1 or end < start:
            raise ValueError(f"the page range {part!r} is empty or starts before page 1")
        if start > page_count:
            raise ValueError(f"page {start} does not exist (the document has {page_count} pages)")
        chosen.update(range(start - 1, min(end, page_count)))
    if not chosen:
        raise ValueError(f"no pages chosen by {spec!r}")
    return sorted(chosen)


def resolve_engine_name(name: str = "auto", model_path: str | None = None) -> str:
    """The engine "auto" stands for here (DESIGN §2)."""
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


# --- lazy page sequence for whole-document engines -----------------------------------------------------------------


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


# --- the pipeline -------------------------------------------------------------------------------------------------


class Pipeline:
    """One document, one engine, one layout. Keeps the document and models open after `run` so that pages or
    regions can be decoded again; `close()` releases them."""

    def __init__(self, options: PipelineOptions | None = None, emit: Emit = no_emit, cancel: CancelToken | None = None,
                 *, engine=None, layout=None) -> None:
        self.options = options or PipelineOptions()
        self.emit = emit
        self.cancel = cancel or CancelToken()
        self.document: Document | None = None
        self.engine = engine  # an already-open engine may be handed in (the GUI keeps one loaded)
        self.layout = layout
        self.engine_name = getattr(engine, "name", "") or resolve_engine_name(self.options.engine, self.options.model_path)
        self.output: DocumentOutput | None = None
        self._page_cache_words: dict[int, list] = {}
        self._region_events: set[str] = set()
        self.document_relay = None  # a whole-document engine's event relay (app.core.pipeline_document)

    # -- setup -------------------------------------------------------------------------------------------------
    def open(self, path) -> Document:
        self.emit(PhaseChanged("opening", detail=str(path)))
        try:
            doc = open_document(path, self.options.password)
        except DocumentError as exc:
            self.emit(ErrorRaised(str(exc), where="open"))
            raise PipelineError(str(exc), "document") from exc
        self.document = doc
        self._page_cache_words.clear()
        self.emit(DocumentOpened(str(path), doc.page_count, doc.title))
        for w in doc.warnings:
            self.emit(ErrorRaised(w, where="open", fatal=False))
        return doc

    def load_engine(self):
        if self.engine is None:
            from app.core.engine import open_engine

            o = self.options
            self.emit(PhaseChanged("loading_model", detail=self.engine_name))
            opts: dict[str, Any] = {k: v for k, v in dict(model_path=o.model_path, device=o.device, dtype=o.dtype,
                                                          block_size=o.block_size).items() if v is not None}
            if o.keep_headers:
                opts["keep_headers"] = True  # whole-document engines route labels themselves
            opts.update(o.engine_options)
            try:
                self.engine = open_engine(self.engine_name, **opts)
            except Exception as exc:  # EngineUnavailable, ModelError, ImportError: all fatal and for a person
                msg = str(exc) if isinstance(exc, (EngineUnavailable, RuntimeError)) else f"{type(exc).__name__}: {exc}"
                msg = f"engine {self.engine_name!r} cannot be used: {msg}"
                self.emit(ErrorRaised(msg, where="loading_model"))
                raise PipelineError(msg, "engine") from exc
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
                    self.emit(ErrorRaised(msg, where="layout"))
                    raise PipelineError(msg, "layout") from exc
                self.emit(ErrorRaised(f"{msg}; using PyMuPDF's layout instead", where="layout", fatal=False))
                self.layout = open_layout("pymupdf")
        return self.layout

    @property
    def is_document_engine(self) -> bool:
        return getattr(self.engine, "kind", "region") == "document"

    def page_dpi(self, index: int) -> float:
        native = self.document.native_dpi(index)
        return float(native) if native else float(self.options.dpi)

    def ocr_dpi(self, index: int) -> float:
        native = self.document.native_dpi(index)
        if native:
            return float(native)
        return float(self.options.ocr_dpi or getattr(self.engine, "preferred_dpi", None) or DEFAULT_OCR_DPI)

    # -- the run ------------------------------------------------------------------------------------------------
    def run(self, path) -> DocumentOutput:
        t0 = time.perf_counter()
        o = self.options
        self.emit(RunStarted(engine=self.engine_name, document=str(path), model=str(o.model_path or ""),
                             device=o.device or "", dtype=o.dtype or "", block_size=int(o.block_size or 0)))
        doc = self.open(path)
        try:
            for what, value in (("rendering DPI", o.dpi), ("OCR DPI", o.ocr_dpi if o.ocr_dpi else 1.0)):
                if not value > 0:  # an OCR DPI of 0/None means the engine's own
                    raise ValueError(f"the {what} must be above 0, not {value:g}")
            indices = parse_pages(o.pages, doc.page_count)
        except ValueError as exc:
            msg = f"{doc.name}: {exc}"
            self.emit(ErrorRaised(msg, where="options"))
            raise PipelineError(msg, "options") from exc
        self.load_engine()
        layout_name = "document" if self.is_document_engine else getattr(self.load_layout(), "name", "")
        out = DocumentOutput(str(path), self.engine_name, layout_name if not self.is_document_engine else self.engine_name,
                             doc.page_count, warnings=list(doc.warnings))
        self.output = out
        try:
            if self.is_document_engine:
                try:
                    self._run_document_engine(indices)
                except (Cancelled, PipelineError):
                    raise
                except Exception as exc:  # noqa: BLE001 - the whole document is one decode: its failure is fatal
                    msg = f"{doc.name}: engine {self.engine_name!r} failed ({type(exc).__name__}: {exc})"
                    relay = self.document_relay
                    if relay is None or not relay.engine_reported_fatal:  # one message for a person, not two
                        self.emit(ErrorRaised(msg, where="decoding"))
                    raise PipelineError(msg, "engine") from exc
            else:
                for n, i in enumerate(indices):
                    self.cancel.check()
                    page = self.layout_page(i, current=n + 1, total=len(indices))
                    out.pages.append(page)
                    self.decode_page(i)
        except Cancelled:
            out.cancelled = True
        self.emit(PhaseChanged("assembling"))
        out.stats = {**self._stats(time.perf_counter() - t0), **out.stats}
        es = out.stats.get("engine_stats") or {}
        if es.get("output_tokens"):  # a whole-document engine counts its tokens once, for all regions
            out.stats["tokens"] = int(es["output_tokens"])
            out.stats["tokens_per_s"] = round(float(es.get("tokens_per_s") or 0.0), 2)
        if out.cancelled:
            self.emit(RunCancelled(where="decoding"))
        else:
            self.emit(RunFinished(stats=out.stats, ms=round((time.perf_counter() - t0) * 1000, 1)))
        return out

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
        }

    # -- per page ------------------------------------------------------------------------------------------------
    def text_words(self, index: int) -> list:
        """The text-layer words of page `index` (app.core.document.TextWord; [] without a text layer)."""
        return self._words(index)

    def _words(self, index: int) -> list:
        if index not in self._page_cache_words:
            words = self.document.text_layer(index) if self.options.compare_text_layer else []
            self._page_cache_words = {index: words}  # one page at a time is enough; keeps memory flat
        return self._page_cache_words[index]

    def layout_page(self, index: int, *, current: int = 0, total: int = 0) -> PageOutput:
        """Render page `index` and lay it out (emits PageRendered and LayoutDone)."""
        doc = self.document
        dpi = self.page_dpi(index)
        self.emit(PhaseChanged("rendering", detail=f"page {index + 1}", current=current, total=total))
        t0 = time.perf_counter()
        try:
            image = doc.render(index, dpi)
        except DocumentError as exc:
            self.emit(ErrorRaised(str(exc), where="rendering", fatal=False))
            w, h = doc.page_size_px(index, dpi)
            wpt, hpt = doc.page_size_pt(index)
            return PageOutput(index, wpt, hpt, dpi, w, h, [], "none", ms=(time.perf_counter() - t0) * 1000)
        self.emit(PageRendered(index, image.width, image.height, dpi))
        self.emit(PhaseChanged("layout", detail=f"page {index + 1}", current=current, total=total))
        layout = self.load_layout()
        source = getattr(layout, "name", "")
        try:
            regions = layout.analyse(doc, index, image, dpi, keep_headers=self.options.keep_headers)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - a layout failure on one page falls back to the whole page
            from app.core.layout import PageLayout

            self.emit(ErrorRaised(f"{doc.name}: layout failed on page {index + 1} ({exc}); the whole page is read "
                                  "as one region", where="layout", fatal=False))
            regions = PageLayout().analyse(doc, index, image, dpi, keep_headers=self.options.keep_headers)
            source = "page"
        if not regions and source == "pymupdf":
            # PyMuPDF's layout found nothing (a rotated page, a scan it could not read, a blank page): the last
            # resort reads the whole page; on a blank page that costs one short decode and adds no block
            from app.core.layout import PageLayout

            regions = PageLayout().analyse(doc, index, image, dpi, keep_headers=self.options.keep_headers)
            for r in regions:
                r.flags.append("fallback")
            source = "page"
        self.keep_pictures(regions)
        self.emit(LayoutDone(index, [r.to_dict() for r in regions], source))
        wpt, hpt = doc.page_size_pt(index)
        return PageOutput(index, wpt, hpt, dpi, image.width, image.height, regions, source,
                          has_text_layer=bool(self._words(index)), ms=(time.perf_counter() - t0) * 1000)

    def set_regions(self, index: int, regions: list[Region]) -> PageOutput:
        """Replace the regions of a laid-out page (the GUI's layout edits). Regions keep their task when it is one of
        TASKS, else it follows the label; they are kept in `order`."""
        from app.core.regions import TASKS

        page = self.output.page(index)
        for r in regions:
            if r.task not in TASKS:  # a task the person chose stays; a missing one follows the label
                r.task = route(r.label, self.options.keep_headers)
        page.regions = sorted(regions, key=lambda r: r.order)
        self.keep_pictures(page.regions)
        return page

    def decode_page(self, index: int, keep: Sequence[str] | set[str] = ()) -> PageOutput:
        """(Re)decode the regions of page `index` (already laid out), except the ids in `keep` (edited blocks)."""
        page = self.output.page(index)
        keep = set(keep)
        todo = [r for r in page.regions if r.task in DECODED_TASKS and r.id not in keep]
        t0 = time.perf_counter()
        for k, r in enumerate(todo):
            self.cancel.check()
            self.emit(PhaseChanged("decoding", detail=f"page {index + 1}", current=k + 1, total=len(todo)))
            self._decode_one(r)
        page.decoded = True
        self._compare_page(page)
        page.ms += (time.perf_counter() - t0) * 1000
        self.emit(PageFinished(index, len(page.regions), round(page.ms, 1)))
        return page

    def decode_regions(self, region_ids: Sequence[str]) -> list[Region]:
        """(Re)decode chosen regions of an already laid-out document."""
        done = []
        wanted = list(region_ids)
        for k, rid in enumerate(wanted):
            self.cancel.check()
            r = self.output.region(rid)
            if r.task not in DECODED_TASKS:
                continue
            self.emit(PhaseChanged("decoding", detail=rid, current=k + 1, total=len(wanted)))
            self._decode_one(r)
            self._compare_page(self.output.page(r.page))
            done.append(r)
        return done

    def _call_engine(self, crop, region: Region):
        engine = self.load_engine()
        kwargs: dict[str, Any] = dict(region_id=region.id, emit=self._engine_emit, cancel=self.cancel)
        if _accepts(engine.decode_region, "page"):
            kwargs["page"] = region.page
        return engine.decode_region(crop, region.task, **kwargs)

    def _engine_emit(self, event) -> None:
        if isinstance(event, RegionFinished):
            self._region_events.add(event.region_id)
        self.emit(event)

    def _decode_one(self, region: Region) -> None:
        self._region_events.discard(region.id)
        region.flags = [f for f in region.flags if f != "error"]
        try:
            crop = self.document.crop(region.page, region.box_pt, self.ocr_dpi(region.page))
            result = self._call_engine(crop, region)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - one failing region must not end the document
            msg = f"{self.document.name}: region {region.id} could not be read ({type(exc).__name__}: {exc})"
            self.emit(ErrorRaised(msg, where="decoding", region_id=region.id, fatal=False))
            region.flags.append("error")
            region.text = ""
            region.extra.update(engine=self.engine_name, stats={"error": str(exc)})
            if region.id not in self._region_events:
                self.emit(RegionFinished(region.id, "", {"error": str(exc)}))
            return
        region.text = result.text
        region.extra["engine"] = self.engine_name
        region.extra["stats"] = dict(result.stats)
        if region.id not in self._region_events:
            self.emit(RegionFinished(region.id, result.text, dict(result.stats), result.cancelled, list(result.tokens)))
        if result.cancelled:
            raise Cancelled()

    def _compare_page(self, page: PageOutput) -> None:
        """Per block and per page CER of the OCR text against the text layer (when the page has one), stored in
        `Region.extra` / `page.cer` and announced as one TextLayerCompared event."""
        if not self.options.compare_text_layer or self.document.kind != "pdf":
            return
        words = self._words(page.index)
        page.has_text_layer = bool(words)
        if not words:
            return
        from app.core.textlayer import compare_block, page_cer

        comps = []
        for r in page.regions:
            r.extra.pop("cer", None)
            r.extra.pop("reference_chars", None)
            if r.task not in CER_TASKS or "stats" not in r.extra:
                continue
            comp = compare_block(r.id, r.text, words, r.box_pt)
            if comp is not None:
                r.extra["cer"] = comp.cer
                r.extra["reference_chars"] = comp.ref_chars
                comps.append(comp)
        page.cer = page_cer(comps)
        blocks = [{"region_id": c.region_id, "cer": float(c.cer), "reference": c.reference} for c in comps]
        self.emit(TextLayerCompared(page=page.index, blocks=blocks, cer=rounded(page.cer, 6)))

    # -- whole-document engines (app.core.pipeline_document: who emits which event, the region conversion) --------
    def _run_document_engine(self, indices: list[int]) -> None:
        from app.core.pipeline_document import run_document_engine

        if run_document_engine(self, indices):
            raise Cancelled()

    # -- output ------------------------------------------------------------------------------------------------
    def _save_picture(self, r: Region, path: Path) -> bool:
        try:
            crop = self.document.crop(r.page, r.box_pt, self.ocr_dpi(r.page))
            atomic_save_image(crop, path)
        except (DocumentError, OSError) as exc:
            self.emit(ErrorRaised(f"picture {r.id} could not be saved ({exc})", where="pictures", region_id=r.id,
                                  fatal=False))
            return False
        return True

    def keep_pictures(self, regions: Sequence[Region]) -> None:
        """With `options.picture_dir`: save the picture regions of a freshly laid-out page there and note the file in
        `region.extra["picture_path"]` (what the GUI's editor and preview link to)."""
        if not self.options.picture_dir:
            return
        for r in regions:
            if r.task == "picture":
                path = Path(self.options.picture_dir) / f"{r.id}.png"
                if self._save_picture(r, path):
                    r.extra["picture_path"] = str(path)

    def save_pictures(self, out_dir, image_dir: str) -> dict[str, str]:
        """Save picture regions as PNG crops under out_dir/image_dir; returns id → relative path."""
        out_dir = Path(out_dir)
        saved: dict[str, str] = {}
        for r in self.output.regions():
            if r.task == "picture" and self._save_picture(r, out_dir / image_dir / f"{r.id}.png"):
                saved[r.id] = f"{image_dir}/{r.id}.png"
        self.output.pictures = saved
        return saved

    def write(self, out_dir, stem: str | None = None) -> dict[str, Path]:
        """Write <stem>.md, <stem>.json and <stem>_images/*.png into out_dir."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = stem or Path(self.output.path).stem
        self.save_pictures(out_dir, f"{stem}_images")
        md, js = out_dir / f"{stem}.md", out_dir / f"{stem}.json"
        for path, text in ((md, self.output.to_markdown()), (js, self.output.to_json())):
            try:
                atomic_write_text(path, text)
            except OSError as exc:
                raise PipelineError(f"cannot write {path}: {exc.strerror or exc}", kind="output") from None
        return {"markdown": md, "json": js, "images": out_dir / f"{stem}_images"}

    def close(self) -> None:
        if self.document is not None:
            self.document.close()
            self.document = None


def _region_ms(stats: dict[str, Any]) -> float:
    for key in ("ms", "total_ms", "request_ms"):
        if stats.get(key):
            return float(stats[key])
    return 0.0


def _accepts(func, name: str) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
