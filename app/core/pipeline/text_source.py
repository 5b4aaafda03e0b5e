"""Where a region's text comes from (docs/architecture.md, The text-layer policy): the document's own text layer, the
layout's OCR, or the engine. Every decoded region records its source in `stats["text_source"]` (`text-layer` or `ocr`).

    source = TextSource(pipeline)
    if not source.take(region):           # the layer's text (prefer) or the layout's OCR lines (classic engine)
        source.read(region, engine, dpi)  # the engine reads the crop (or, given lines, the layout's line boxes)
    source.comparable(region)             # may its OCR be measured against the layer (no layer that was rejected)

`--text-layer prefer` takes the layer's text for a text or table region when the layer there is trustworthy: real
visible glyphs only (no invisible OCR layer, no OCR tool's font: app.core.text.textlayer.original_layer), not garbled
(no private-use or replacement characters), and agreeing with a quick OCR check of its longest line (the
recogniser reads the line image, all of a page's regions in one batch; CER ≤ CHECK_MAX_CER, spaces ignored;
lines in scripts it does not read, e.g. Arabic or Cyrillic, are read by Tesseract in their language where its model
is installed: app.core.scripts.layer_check). Otherwise the engine reads it (a
scrambled layer keeps OCR). `compare` reads every region with the engine and measures it against the layer;
`ignore` neither uses nor measures the layer. Formulas go to the engine when it reads LaTeX (its spec's
`reads_formulas`); otherwise (classic, the built-in engine) their LaTeX is rebuilt from where the layer's glyphs
and rules sit (app.core.text.formula_layout), checked by parsing it, and a formula that cannot be rebuilt is
flagged and written as plain text (`formula_latex`). Formulas skip the encoding and OCR checks: TeX's math fonts
are read by their own codes, and a recogniser reads no formula.

One OCR pass per scanned page: with an engine whose reading is the layout's own OCR (its spec's
`reads_layout_lines`: classic, the same recogniser as the layout's OCR hook), a region whose lines the layout's OCR
already read (`region.extra["ocr_lines"]`) takes them instead of reading the crop
again. An engine that reads given lines (app.core.engines.base.LineRegionEngine: the built-in one) is handed those
lines' boxes (in crop pixels) and reads them with its own recogniser and decoder, without detecting them again.

What must never live here: decoding with a model (engines decode; this only chooses what they are given), layout,
writing files.
"""
from __future__ import annotations

import time

from app.core.engines.base import LineRegionEngine, PageLineEngine, RegionResult
from app.core.scripts.pieces import layout_line_readers
from app.core.scripts.router import LOST
from app.core.pipeline.page_ocr import ScanReader
from app.core.record.events import RegionFinished, RegionStarted
from app.core.layout.page_boxes import TEXT_MIN_LETTERS
from app.core.document.regions import DECODED_TASKS, Region, record_result
from app.core.text.hyphens import join_lines
from app.core.text.textlayer import PageLayer, garbled_fraction, inside_fraction, original_layer, words_in_box

LAYER_TASKS = ("text", "table")
HANDWRITING_DPI = 150.0  # a scanned text block is looked at this fine for handwriting (app.core.layout.handwriting)
CHECK_DPI = 150.0  # the least resolution the check reads at; the page's own rendering is used when it is as fine
CHECK_SAMPLE = 3  # regions checked first on a page; the rest only when one of them fails
CHECK_WORDS = 6  # the check reads this many words of a region's longest layer line (reading time grows with width)
CHECK_MAX_CER = 0.3
GARBLED_MAX = 0.05
TEXT_LAYER = "text-layer"
OCR = "ocr"


def text_source(region: Region) -> str | None:
    """`text-layer` or `ocr` for a region that was read; None for one that was not (pictures, skipped, pending)."""
    stats = region.extra.get("stats")
    if stats is None:
        return None
    return stats.get("text_source", OCR)


def paragraph(words) -> str:
    """Text-layer words → one paragraph: the layer's lines joined by spaces, a hyphen at a line end rejoins."""
    lines: dict[tuple[int, int], list[str]] = {}
    for w in sorted(words, key=lambda w: (w.block, w.line, w.word)):
        lines.setdefault((w.block, w.line), []).append(w.text)
    return join_lines(" ".join(parts) for parts in lines.values())


def _readable(text: str) -> bool:
    """Is `text` in characters the check's recogniser can write? A Korean, Cyrillic or Arabic line cannot be checked
    by it; its layer is judged on the other tests alone."""
    from app.core.rapid.recogniser import can_read

    return can_read(text)


def _fails(ref: str, read: str) -> bool:
    """Does the recogniser's reading `read` of a layer line `ref` (squashed) disagree with it?"""
    from app.core.text.textmetrics import cer

    return bool(ref) and cer(ref, _squash(read)) > CHECK_MAX_CER


def _squash(text: str) -> str:
    return "".join(text.split()).lower()


class TextSource:
    def __init__(self, pipeline) -> None:  # app.core.pipeline.run.Pipeline (which imports this module)
        self.pipeline = pipeline
        self._layer: tuple[tuple[int, int], PageLayer] | None = None
        self._checks: tuple[tuple[int, int], dict[str, tuple[str, str]]] | None = None
        self.scan = ScanReader(pipeline)  # scanned pages read once, their lines shared (app.core.pipeline.page_ocr)

    def layer(self, index: int) -> PageLayer:
        """Page `index`'s original text layer (one page cached)."""
        doc = self.pipeline.document
        key = (id(doc), index)
        if self._layer is None or self._layer[0] != key:
            self._layer = (key, original_layer(doc, index, self.pipeline.options.password))
        return self._layer[1]

    def meanwhile(self, index: int) -> None:
        """What page `index` needs that no layout decides, done while its layout runs in the child: its text layer
        read, a scan's unsure lines decoded (ScanReader.decode_ahead) and the ink its lost-lines check looks at
        (app.core.layout.lost_lines.prepare, on the rendering the layout was given)."""
        from app.core.layout import lost_lines

        self.layer(index)
        self.scan.decode_ahead(index)
        if not self.pipeline.text_words(index):
            dpi = self.pipeline.page_dpi(index)
            lost_lines.prepare(self.pipeline.document.render(index, dpi), dpi)

    @property
    def mode(self) -> str:
        return self.pipeline.options.text_layer

    def lost_text(self, page) -> bool:
        """Page `page` (a PageOutput, read) holds text — words of its original layer outside the boxes left out
        as headers/footers, or lines the layout's OCR read — yet no block of it got any text: an empty success
        would hide that."""
        if not page.decoded or any(r.text.strip() for r in page.regions if r.task in DECODED_TASKS):
            return False
        if self.pipeline.document is None or any(r.extra.get("ocr_lines") for r in page.regions
                                                 if r.task != "skipped"):
            return self.pipeline.document is not None
        skipped = [r.box_pt for r in page.regions if r.task == "skipped"]
        words = [w for w in self.layer(page.index).words if not any(inside_fraction(w.box_pt, b) >= 0.5
                                                                      for b in skipped)]
        return sum(c.isalpha() for w in words for c in w.text) >= TEXT_MIN_LETTERS

    def _tasks(self) -> tuple[str, ...]:
        """The tasks the layer may serve: formulas too when the engine reads no LaTeX either (classic)."""
        spec = self._spec()
        return LAYER_TASKS + (("formula",) if spec is not None and not spec.reads_formulas else ())

    def _spec(self):
        """The registry's word on the run's engine (None: an engine the registry does not know)."""
        from app.core.engines import ENGINES

        return ENGINES.get(self.pipeline.engine_name)

    def settle_page(self, regions: list[Region]) -> None:
        """After a page's regions are read: a text block of a scanned Latin-script page that looks handwritten
        (app.core.layout.handwriting) is marked `extra["handwriting"]` (a reason to review it). (A table's header
        from the layer is the assembler's: app.core.pipeline.assembly.table_markdown, so the window, which rebuilds
        blocks from events, and `convert` write the same table.)"""
        from app.core.layout.handwriting import looks_handwritten

        for r in regions:
            r.extra.pop("handwriting", None)
            if r.task == "text" and r.extra.get("page_script", "latin") == "latin" and "stats" in r.extra \
                    and not words_in_box(self.layer(r.page).words, r.box_pt):
                handwritten, features = looks_handwritten(self.handwriting_crop(r))
                if handwritten:
                    r.extra["handwriting"] = features

    def handwriting_crop(self, region: Region):
        """`region` as the handwriting test looks at it: at HANDWRITING_DPI (at most WORK_SIDE long, where the test
        scales it down to anyway), cut from the page as the OCR rendered it and scaled, not from a rendering of its
        own: a 300-DPI scan (an image page renders at 96 DPI a pixel) drawn whole at 150 DPI and straightened again
        took 1.4 s."""
        from PIL import Image

        from app.core.layout.handwriting import WORK_SIDE

        dpi = self.pipeline.ocr_dpi(region.page)
        crop = self.pipeline.document.crop(region.page, region.box_pt, dpi)
        scale = min(HANDWRITING_DPI / dpi, WORK_SIDE / max(1, *crop.size))
        if abs(scale - 1.0) < 0.01:
            return crop
        size = (max(1, round(crop.width * scale)), max(1, round(crop.height * scale)))
        return crop.resize(size, Image.Resampling.BOX if scale < 1 else Image.Resampling.BICUBIC)

    def comparable(self, region: Region) -> bool:
        """May this region's text be measured against the text layer? Not when it came from the layer (that would
        be the layer against itself) nor where the layer was found untrustworthy."""
        return self.mode != "ignore" and text_source(region) != TEXT_LAYER and "layer_rejected" not in region.extra

    def take(self, region: Region) -> bool:
        """Give `region` its text without the engine when policy allows; True when it did."""
        t0 = time.perf_counter()
        region.extra.pop("layer_rejected", None)
        if self.mode == "prefer" and region.task in self._tasks() and self.pipeline.document.kind == "pdf":
            words = words_in_box(self.layer(region.page).words, region.box_pt)
            if words:
                why = self._distrust(region, words)
                if why is None:
                    text = region.extra.get("layer_table") if region.task == "table" else None
                    problem = {}
                    if region.task == "formula":  # its LaTeX from where the layer's glyphs and rules sit
                        text, why = self.formula_latex(region)
                        problem = {"formula_problem": why} if why else {}
                    elif region.task == "text":  # its inline formulas as $…$ (app.core.text.inline_math)
                        text, problem = self.inline_math(region)
                    self._finish(region, t0, text or paragraph(words), TEXT_LAYER, TEXT_LAYER, words=len(words),
                                 **problem)
                    return True
                region.extra["layer_rejected"] = why
        lines = self.layout_lines(region)
        spec = self._spec() if lines else None
        # the layout's OCR lines went through the script router already (app.core.layout.ocr_scripts); a line whose
        # letters the layout's font lost (U+FFFD) is read again by the engine
        lost = lines is not None and any(LOST in str(line[4]) for line in lines)
        if spec is not None and spec.reads_layout_lines and not lost:
            from app.core.engines.classic import pieces_to_text

            text, n = pieces_to_text(region.task, [(tuple(line[:4]), line[4]) for line in lines])
            self._finish(region, t0, text, spec.name, OCR, lines=n, reused_layout_ocr=True,
                         **layout_line_readers(lines))
            return True
        return False

    def formula_latex(self, region: Region) -> tuple[str, str | None]:
        """The formula's LaTeX rebuilt from the glyphs and rules in its box (fractions, scripts, limits,
        roots, matrices: app.core.text.formula_layout), checked by parsing it, and None; where that fails (no
        usable text layer there, or LaTeX that does not parse), "" (the layer's words stand) and why — it goes
        into the block's stats as `formula_problem` (a reason to review it; the block is written as plain
        text). A rotated page: the layer's lines, script by script (app.core.text.layer_math)."""
        from app.core.text.formula_page import formula_from_page
        from app.core.text.layer_math import layer_latex

        doc = self.pipeline.document
        with doc.lock:
            page = doc.mupdf.load_page(region.page) if not doc.mupdf.is_dirty else None
            turned = page is None or page.rotation
            reading = None if turned else formula_from_page(page, region.box_pt)
        if reading is None:
            lines = [spans for box, spans in self.layer(region.page).lines
                     if inside_fraction(box, region.box_pt) >= 0.5]
            return layer_latex(lines), None
        if reading.problem:
            return "", reading.problem
        return reading.latex, None

    def inline_math(self, region: Region) -> tuple[str | None, dict]:
        """A text region's paragraph with its inline formulas as `$…$` (None: it has no math glyph, its
        words stand) and the stats that say how many (`inline_formulas`) and which could not be written as
        LaTeX (`inline_formula_problems`: written as plain text, a reason to review the block)."""
        from app.core.text.inline_math import inline_paragraph
        from app.core.text.layer_math import MATH_FONTS

        if not any(MATH_FONTS.match(str(s.get("font", ""))) for box, spans in self.layer(region.page).lines
                   if inside_fraction(box, region.box_pt) >= 0.5 for s in spans):
            return None, {}
        doc = self.pipeline.document
        with doc.lock:
            page = doc.mupdf.load_page(region.page) if not doc.mupdf.is_dirty else None
            reading = None if page is None or page.rotation else inline_paragraph(page, region.box_pt)
        if reading is None or not (reading.formulas or reading.problems):
            return None, {}
        stats = {"inline_formulas": reading.formulas}
        if reading.problems:  # (a short string: stats travel in events)
            stats["inline_formula_problems"] = "; ".join(reading.problems[:3])[:300]
        return reading.text, stats

    def layout_lines(self, region: Region) -> list | None:
        """The lines the layout's OCR read in `region` ([x0, y0, x1, y1, text], points) when they stand for its text:
        a region of a scanned page (no original text layer there). None otherwise."""
        lines = region.extra.get("ocr_lines")
        if lines and not words_in_box(self.layer(region.page).words, region.box_pt):
            return lines
        return None

    def read(self, region: Region, engine, dpi: float, *, emit=None) -> RegionResult:
        """`engine` reads `region`'s crop rendered at `dpi`; an engine that reads given lines gets the layout's OCR
        line boxes in it (crop pixels) instead of detecting them again. `emit`: the pipeline's by default."""
        from app.core.document.base import crop_origin

        crop = self.pipeline.document.crop(region.page, region.box_pt, dpi)
        kw = dict(region_id=region.id, page=region.page, emit=emit or self.pipeline.emit, cancel=self.pipeline.cancel)
        lines = None
        if isinstance(engine, LineRegionEngine):  # the layout's OCR lines, or the print lines of lost text
            lines = self.layout_lines(region) or region.extra.get("ink_lines")
        ox, oy = crop_origin(tuple(region.box_pt), dpi)  # the crop's origin on the page (Document.crop)
        if not lines:  # its lines found again; those the page's one pass read are not recognised twice
            again = self.scan.found_again(region, crop, dpi, (ox, oy)) if isinstance(engine, PageLineEngine) else None
            if again is not None:
                return engine.decode_lines(crop, region.task, [box for box, _ in again], **kw, known=again)
            return engine.decode_region(crop, region.task, **kw)
        s = dpi / 72.0
        boxes = [(a * s - ox, b * s - oy, c * s - ox, d * s - oy) for a, b, c, d, *_ in lines]
        known = self.scan.known(region, lines, dpi, (ox, oy)) if isinstance(engine, PageLineEngine) else None
        return engine.decode_lines(crop, region.task, boxes, **kw, **({"known": known} if known else {}))

    def _distrust(self, region: Region, words) -> str | None:
        """Why the layer's words in `region` cannot be taken (None: they can)."""
        if self.layer(region.page).hidden_in(region.box_pt):
            return "hidden text"
        if region.task == "formula":  # read glyph by glyph (TeX's math fonts by their codes), checked by parsing
            return None
        if garbled_fraction(" ".join(w.text for w in words)) > GARBLED_MAX:
            return "garbled encoding"
        return self._check(region, words)

    def _check(self, region: Region, words) -> str | None:
        """The quick OCR check: the recogniser reads the region's longest layer line from the page image (for all
        the page's regions in one batch, at the page's first check)."""
        checks = self._page_checks(region.page)
        if region.id not in checks:  # a region the batch did not know (an edited layout): read on its own
            checks.update(self._read_checks([(region, words)]))
        ref, read = checks[region.id]
        if _fails(ref, read):
            return f"the page image reads otherwise ({read!r} for {ref!r})"
        return None

    def _page_checks(self, index: int) -> dict[str, tuple[str, str]]:
        key = (id(self.pipeline.document), index)
        if self._checks is None or self._checks[0] != key:
            words = self.layer(index).words
            todo = [(r, ws) for r in self.pipeline.output.page(index).regions
                    if r.task in LAYER_TASKS and (ws := words_in_box(words, r.box_pt))]
            # a sample first (the regions with the most text): a layer that reads right there is trusted for the
            # page's other regions; one that does not is checked region by region
            sample = sorted(todo, key=lambda t: -sum(len(w.text) for w in t[1]))[:CHECK_SAMPLE]
            checks = self._read_checks(sample)
            if any(_fails(*checks[r.id]) for r, _ in sample):
                checks.update(self._read_checks([t for t in todo if t[0].id not in checks]))
            else:
                checks.update({r.id: ("", "") for r, _ in todo if r.id not in checks})
            self._checks = (key, checks)
        return self._checks[1]

    def _read_checks(self, todo) -> dict[str, tuple[str, str]]:
        """Region id → (its longest layer line, squashed; what the recogniser reads there), "" refs for lines too
        short to say anything."""
        from app.core.engines.classic import recognise_lines

        doc = self.pipeline.document
        # the page as already rendered for its layout (the document's cache) when it is fine enough: one rendering
        pages = {region.page for region, _ in todo}
        shown = self.pipeline.page_dpi(pages.pop()) if len(pages) == 1 else 0.0
        dpi = shown if shown >= 0.9 * CHECK_DPI else CHECK_DPI
        from app.core.scripts.layer_check import checked_pairs, layer_language

        refs, images, ids, tess, tess_ids = {}, [], [], [], []
        for region, words in todo:
            lines: dict[tuple[int, int], list] = {}
            for w in words:
                lines.setdefault((w.block, w.line), []).append(w)
            ws = max(lines.values(), key=lambda ws: sum(len(w.text) for w in ws))
            ws = sorted(ws, key=lambda w: w.word)[:CHECK_WORDS]
            ref = _squash(" ".join(w.text for w in ws))
            # a line in a script the recogniser cannot write is read by Tesseract in its language (scripts)
            lang = None if _readable(ref) else layer_language(ref)
            refs[region.id] = ref if len(ref) >= 3 and (lang or _readable(ref)) else ""
            if refs[region.id]:
                x0, y0 = min(w.box_pt[0] for w in ws), min(w.box_pt[1] for w in ws)
                x1, y1 = max(w.box_pt[2] for w in ws), max(w.box_pt[3] for w in ws)
                pad = 0.15 * (y1 - y0)
                crop = doc.crop(region.page, (x0 - pad, y0 - pad, x1 + pad, y1 + pad), dpi)
                (tess if lang else images).append((crop, lang, ref) if lang else crop)
                (tess_ids if lang else ids).append(region.id)
        read = dict(zip(ids, (t for t, _ in recognise_lines(images))))
        out = {rid: (ref, read.get(rid, "")) for rid, ref in refs.items()}
        out.update(zip(tess_ids, checked_pairs(tess)))  # (the layer's letters of that script, Tesseract's)
        return out

    def _finish(self, region: Region, t0: float, text: str, engine: str, source: str, **extra) -> None:
        emit = self.pipeline.emit
        emit(RegionStarted(region_id=region.id, page=region.page, task=region.task, engine=engine))
        stats = {"engine": engine, "text_source": source, "chars": len(text),
                 "ms": round((time.perf_counter() - t0) * 1000, 3), **extra}
        record_result(region, text, stats, cancelled=False, engine=engine)
        emit(RegionFinished(region_id=region.id, text=text, stats=stats))
