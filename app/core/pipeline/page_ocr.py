"""One OCR pass per scanned page, shared by every step that needs the page's lines (docs/architecture.md, The page
pipeline): with the built-in engine (an engine that reads whole pages of lines: app.core.engines.base.PageLineEngine)
and PyMuPDF's layout, a page without a text layer is rendered once at the engine's DPI, its lines detected once and
every line read once by the recogniser, batched (app.core.engines.builtin.page_lines). Then

- the orientation check runs only where the page gives reason to doubt (`orient`): the ink says which way the
  lines run and how much they are skewed (no model); a page whose lines run across it and read with a high mean
  confidence is upright as it is, any other goes through the full check (app.core.layout.orientation.detect);
- the layout is given the lines' text in place of its own OCR (`layout_kw`: PyMuPDFLayout's `page_lines`);
- the engine is given each region's lines with their readings (`known`), and the part of a line the detector
  joined across a column gutter, cut at the column's edge (app.core.layout.columns), the characters its line was
  read with there (`PageLine.part`): nothing is recognised twice but a part those cannot tell;
  a region that came with no lines of the page's has its lines detected again, and only those the page pass
  dropped or missed are recognised (`found_again`).

Any other engine, layout or page is read as before (the layout's own OCR, the engine's own detection).

What must never live here: detection, recognition or decoding themselves (the engine's), the layout's mapping.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from app.core.base.stages import stage
from app.core.engines.base import PageLineEngine
from app.core.layout.orientation import Orientation, detect, lie
from app.core.pipeline.orient import ORIENT_DPI
from app.core.layout.pymupdf_layout import PyMuPDFLayout
from app.core.scripts.router import LOST

KEEP_PAGES = 2  # pages whose lines are kept (the page being laid out and the page being read)
SMALL_LINE_PX = 16  # a page whose lines the detector finds this few pixels tall (median) is read larger ...
LINE_PX = 24  # ... at the scale that makes them this tall (at ~12 px it misses small lone digits in a table)
MAX_BOOST, MAX_BOOST_PIXELS = 3.0, 16e6  # ... at most this much larger, and never past this many pixels
MIN_IOU = 0.5  # a layout line is the page line it overlaps this much (its box comes back from the PDF's text)
# a line detected again over a region is the page's line when they overlap this much (a line the region's detection
# joins across a gap the page's split is read afresh: its reading would lose the other piece)
SAME_IOU = 0.7
VERTICAL = 1.5  # a detected box this many times taller than wide is a vertical column (read turned)
# a region whose page lines were set aside for print outside them is detected again around that print only: its
# line's height above and below it, unless that comes to this share of the region (then all of it)
BAND_GROW, BAND_SHARE = 1.0, 0.6
WHOLE = 0.9  # ... and around every page line less than this share of which lies in the region
# a part of a line cut at a column's edge is the page line's whose detector box holds this share of its width and
# whose height it spans this much of (its characters are then taken from that line's reading: PageLine.part)
PART_INSIDE, PART_HEIGHT = 0.9, 0.7


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    both = w * h
    return both / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - both)


def _inside(a: Sequence[float], b: Sequence[float]) -> float:
    """The share of box `a`'s area inside box `b`."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h / max(1e-6, (a[2] - a[0]) * (a[3] - a[1])) if w > 0 and h > 0 else 0.0


def _covers(a: Sequence[float], b: Sequence[float]) -> bool:
    """Does line box `a` stand over line `b`: over a third of `b`'s width and half its height (or more)?"""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w > (b[2] - b[0]) / 3 and h >= 0.5 * (b[3] - b[1])


def _shift(box: Sequence[float], ox: float, oy: float) -> tuple[float, float, float, float]:
    return (box[0] - ox, box[1] - oy, box[2] - ox, box[3] - oy)


def _bands(region, dpi: float, origin: tuple[float, float], size: tuple[int, int], lines: Sequence[Sequence[float]]
           ) -> list[tuple[int, int]] | None:
    """The rows [a, b) of `region`'s crop (`size`, at `dpi`, its top left at `origin` on the page) to detect again:
    around each line of print lost_lines found outside the page's lines (`extra["print_outside"]`, points), grown
    by BAND_GROW of its height above and below and out to the whole of every page line it reaches (`lines`, crop
    pixels: a band never cuts a line the page read in two), and over every page line the crop's edge cuts,
    merged. None (the whole crop) when that print is not known or the bands would cover BAND_SHARE of the crop."""
    boxes = region.extra.get("print_outside")
    if not boxes:
        return None
    s, (w, h) = dpi / 72.0, size
    top_down = sorted(lines, key=lambda ln: ln[1])
    spans = []
    for box in boxes:
        y0, y1 = box[1] * s - origin[1], box[3] * s - origin[1]
        a, b = y0 - BAND_GROW * (y1 - y0), y1 + BAND_GROW * (y1 - y0)
        for line in top_down:
            across = min(line[2], w) - max(line[0], 0) > 0
            if across and line[1] < b and line[3] > a:
                a, b = min(a, line[1]), max(b, line[3])
        spans.append((max(0, math.floor(a)), min(h, math.ceil(b))))
    # a page line the crop's edge cuts: what the crop holds of it is found again, as the whole crop's detection
    # finds it (the page's line, mostly outside, is not the region's to keep)
    spans += [(max(0, math.floor(ln[1])), min(h, math.ceil(ln[3]))) for ln in lines
              if 0 < _inside(ln, (0, 0, w, h)) < WHOLE]
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        elif b > a:
            merged.append([a, b])
    if sum(b - a for a, b in merged) >= BAND_SHARE * h:
        return None
    return [(a, b) for a, b in merged]


def _joined(found: Sequence, part: Sequence[float]):
    """The page line (of `found`, PageLines) that a part cut at a column's edge (`part`, the image's pixels) was cut
    from: the one whose detector box holds PART_INSIDE of its width and PART_HEIGHT of whose height it spans (a part
    cut in height too, of a box the detector drew over two lines, is none); None when there is none."""
    best, most = None, 0.0
    for pl in found:
        d = pl.det
        w = min(d[2], part[2]) - max(d[0], part[0])
        h = min(d[3], part[3]) - max(d[1], part[1])
        if w < PART_INSIDE * (part[2] - part[0]) or h < PART_HEIGHT * (d[3] - d[1]):
            continue
        if w * h > most:
            best, most = pl, w * h
    return best


def _upright(box: Sequence[float]) -> bool:
    """Is a detected box a vertical column (VERTICAL times taller than wide)?"""
    return box[3] - box[1] >= VERTICAL * (box[2] - box[0])


class ScanReader:
    """A pipeline's scanned pages, each read once (see the module)."""

    def __init__(self, pipeline) -> None:  # app.core.pipeline.run.Pipeline (which imports this module's user)
        self.pipeline = pipeline
        self._pages: dict[tuple, tuple[float, list]] = {}  # (document, page, orientation) -> (dpi, PageLines)
        self.reads = 0  # pages read (a page read again after a turn counts twice)
        self._boost: dict[tuple, float] = {}  # (document, path, page) -> how much larger it is read (`boost`)

    def boost(self, index: int) -> float:
        """How much larger than its DPI page `index` is read: 1, or more for a page of small text in few pixels
        (a low-resolution image of a table: the detector misses its small lone figures), decided on its first
        read; the pipeline's OCR DPI for the page includes it, so its regions' crops are read at the same scale."""
        doc = self.pipeline.document
        return self._boost.get((id(doc), str(doc.path), index), 1.0)

    @staticmethod
    def _small_text(boxes: list, size: tuple[int, int]) -> float:
        """How much larger a page whose detector boxes are `boxes` is read (1: at its own size)."""
        heights = sorted(b[3] - b[1] for b in boxes if b[2] - b[0] >= b[3] - b[1])  # lines across (not a dot)
        if len(heights) < 3 or heights[len(heights) // 2] > SMALL_LINE_PX:
            return 1.0
        factor = min(MAX_BOOST, LINE_PX / max(1.0, heights[len(heights) // 2]))
        return factor if size[0] * size[1] * factor * factor <= MAX_BOOST_PIXELS else 1.0

    def applies(self, index: int) -> bool:
        """Is page `index` read once here: a page without a text layer, read by a page-line engine through
        PyMuPDF's layout with its OCR on?"""
        p = self.pipeline
        layout = p.layout
        return (isinstance(p.engine, PageLineEngine) and isinstance(layout, PyMuPDFLayout) and layout.use_ocr
                and p.document is not None and not p.document.has_text_layer(index))

    def _key(self, index: int) -> tuple:
        doc = self.pipeline.document
        return id(doc), str(doc.path), index, doc.orientation(index)

    def lines(self, index: int) -> tuple[float, list]:
        """(dpi, the PageLines of page `index` as it is turned now), read on first use."""
        key = self._key(index)
        if key not in self._pages:
            p = self.pipeline
            dpi = p.ocr_dpi(index)
            image = p.document.render(index, dpi)
            doc_page = key[:3]  # (document, path, page): a page turned later keeps its scale
            dets = None
            if doc_page not in self._boost:  # the scale is chosen from the detector's boxes, before any reading
                dets = p.engine.detect_page(image)
                self._boost[doc_page] = self._small_text(dets, image.size)
                if self._boost[doc_page] > 1.0:  # small text in few pixels: the page is read larger
                    dpi = p.ocr_dpi(index)
                    image, dets = p.document.render(index, dpi), None
            found = p.engine.read_page(image, index, dets=dets)
            self.reads += 1
            self._pages[key] = (dpi, found)
            while len(self._pages) > KEEP_PAGES:
                self._pages.pop(next(iter(self._pages)))
        return self._pages[key]

    def orient(self, index: int) -> Orientation:
        """Turn page `index` the right way up (its document's orientation is set); the full check only on doubt."""
        from app.core.engines.builtin.page_lines import sure_upright

        doc = self.pipeline.document
        with stage("orientation"):
            found = lie(doc.render(index, self.pipeline.ocr_dpi(index)))  # the OCR's own rendering
        if found is None:
            return Orientation()
        across, skew = found
        if across == 0:  # lines across the page: if they read well as they are, it is upright
            doc.set_orientation(index, 0, skew)
            if sure_upright(self.lines(index)[1]):
                return Orientation(0, skew)
            doc.set_orientation(index)
        with stage("orientation", whole=True):  # its own small rendering and readings are its cost
            turned = detect(doc.render(index, doc.native_dpi(index) or ORIENT_DPI))
        doc.set_orientation(index, turned.turn, turned.skew)
        return turned

    def layout_kw(self, index: int) -> dict[str, Any]:
        """The layout's keywords for page `index`: its lines ([x0, y0, x1, y1, text] in points, the detector's
        boxes) in place of the layout's own OCR, when the page is read here; {} otherwise."""
        if not self.applies(index):
            return {}
        dpi, found = self.lines(index)
        s = dpi / 72.0
        return {"page_lines": [[*(round(v / s, 2) for v in line.det), line.text] for line in found]}

    def decode_ahead(self, index: int) -> int:
        """While the layout lays page `index` out (its `meanwhile`): the engine decodes the page lines it will
        decode, each as it will be given them (a fresh reading, its words settled), so that reading the regions
        finds them decoded (app.core.engines.builtin.ahead). Only under the engine's `decoder="unsure"`; the lines
        decoded."""
        from app.core.engines.builtin.engine import line_budget
        from app.core.engines.builtin.lexicon import settle_reading

        engine, key = self.pipeline.engine, self._key(index)
        if key not in self._pages or getattr(engine, "decoder", None) != "unsure" or not hasattr(engine, "ahead"):
            return 0
        readings = []
        for line in self._pages[key][1]:
            if line.reading.routed is None:  # a line another recogniser read is not decoded
                readings.append(line.fresh_reading())
                settle_reading(readings[-1])
        with stage("decoder"):
            return engine.ahead.run(engine, index, readings, line_budget, self.pipeline.cancel, document=key[:2])

    def found_again(self, region, crop, dpi: float, origin: tuple[float, float]) -> list | None:
        """For a region of a page read here that came with no lines of the page's (none fell in it, or they were
        set aside for print outside them: app.core.layout.lost_lines): the engine's detector over its crop, each
        line found given as (box in the crop's pixels, reading) — the page line it overlaps, read already, or
        None (a line the page pass dropped or missed: the engine reads that crop, and only that one); [] when the
        detector finds none. None when the page was not read here at `dpi` (the engine reads the crop itself).
        Where lost_lines saw where the print outside the page's lines lies, only the bands of the crop around it
        are detected again (`_bands`); the page's lines elsewhere stand as the page read them."""
        key = self._key(region.page)
        if key not in self._pages or self._pages[key][0] != dpi:
            return None
        found = self._pages[key][1]
        ox, oy = origin
        out, used = [], set()
        w, h = crop.size
        area = (ox, oy, ox + w, oy + h)
        # vertical columns: the page pass reads them apart from their region's (s17 of the real set); seen in the
        # page's own lines, the region is not detected again only to find them (a third of s17's time)
        if any(_upright(pl.det) for pl in found if _inside(pl.det, area) >= 0.5):
            return None
        dets = self._detect(crop, _bands(region, dpi, origin, crop.size, [_shift(pl.det, ox, oy) for pl in found]))
        if any(map(_upright, dets)):
            return None
        for d in dets:
            box = (d[0] + ox, d[1] + oy, d[2] + ox, d[3] + oy)
            overlap = {k: o for k, pl in enumerate(found) if k not in used and (o := _iou(box, pl.det)) >= SAME_IOU}
            best = max(overlap, key=lambda k: overlap[k], default=None)
            if best is None and any(_inside(box, pl.det) >= 0.7 and _inside(pl.det, area) < 0.5 for pl in found):
                continue  # the end of a line the page read whole, most of it outside: another region's (s05)
            if best is None:
                out.append((tuple(d), None))
                continue
            used.add(best)
            pl = found[best]
            out.append(((pl.box[0] - ox, pl.box[1] - oy, pl.box[2] - ox, pl.box[3] - oy), pl.fresh_reading()))
        # a page line inside the region that its detection missed (the crop's detector can drop a line the page's
        # found: six of x13's 36) keeps its reading, unless a line found here already covers its band; a lone
        # letter the crop's detector did not see is a speck more often than a line (s15: a "7" by a caption)
        for k, pl in enumerate(found):
            if k in used or len("".join(pl.text.split())) < 2:
                continue
            box = (pl.box[0] - ox, pl.box[1] - oy, pl.box[2] - ox, pl.box[3] - oy)
            centred = 0 <= (box[0] + box[2]) / 2 <= w and 0 <= (box[1] + box[3]) / 2 <= h
            if not centred or _inside(box, (0, 0, w, h)) < 0.7:
                continue
            if any(_covers(b, box) for b, _ in out):
                continue
            out.append((box, pl.fresh_reading()))
        return out

    def _detect(self, crop, bands: list[tuple[int, int]] | None) -> list:
        """The engine's detector over `crop`, or over each of its `bands` (rows [a, b)) alone, their boxes in the
        crop's pixels."""
        if bands is None:
            return self.pipeline.engine.detect_page(crop)
        out = []
        for a, b in bands:
            found = self.pipeline.engine.detect_page(crop.crop((0, a, crop.width, b)))
            out += [(d[0], d[1] + a, d[2], d[3] + a) for d in found]
        return out

    def known(self, region, lines_pt: Sequence[Sequence], dpi: float, origin: tuple[float, float]) -> list | None:
        """(box in the region crop's pixels, a fresh reading) per line the layout gave `region` (`lines_pt`: its
        `ocr_lines`, points), each matched to the page line it came from; a part of a line cut at a column's edge
        (its text `LOST`) comes with the characters that line was read with inside it (`PageLine.part`), or, where
        they cannot tell, with no reading: the engine reads that crop, and only that one. None when the page was not
        read here or a line matches none (or two lines one): the engine then reads the crops itself."""
        key = self._key(region.page)
        if key not in self._pages or self._pages[key][0] != dpi:
            return None
        found = self._pages[key][1]
        s = dpi / 72.0
        ox, oy = origin
        out, used = [], set()
        for line in lines_pt:
            box = [v * s for v in line[:4]]
            text = line[4] if len(line) > 4 else None
            if text == LOST:  # the part of a page line cut at a column's edge: its characters there, where they tell
                joined = _joined(found, box)
                part = joined.part(box[0], box[2]) if joined is not None else None
                if part is None:
                    out.append(((box[0] - ox, box[1] - oy, box[2] - ox, box[3] - oy), None))
                else:
                    out.append((_shift(part[0], ox, oy), part[1]))
                continue
            # the page line it was written from: of the unused ones it overlaps, the one with its text where one has
            # it (a table's many "0" cells: the one under it, not the first "0" of the page), else the best overlap
            overlap = {k: o for k, pl in enumerate(found) if k not in used and (o := _iou(box, pl.det)) >= MIN_IOU}
            same = [k for k in overlap if text is not None and found[k].reading.text == text]
            best = max(same or overlap, key=lambda k: overlap[k], default=None)
            if best is None:
                return None  # (the layout split a page line into cells: the region's lines are read as given)
            used.add(best)
            pl = found[best]
            out.append(((pl.box[0] - ox, pl.box[1] - oy, pl.box[2] - ox, pl.box[3] - oy), pl.fresh_reading()))
        return out
