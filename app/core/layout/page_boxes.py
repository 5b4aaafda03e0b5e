"""What PyMuPDF's layout boxes get wrong, put right before they become regions (boxes in PDF points, unrotated):

- a `picture` box that holds text (the layout sometimes calls paragraphs or a handwritten page a picture) is followed
  by a `picture-text` box over the same area, read as text: text is never dropped with the picture;
- a `table` box is widened to the table PyMuPDF's table finder sees there (ruling lines included), and the finder's
  cells (HTML with header and spans, app.core.text.tables) go with it for the text-layer source to take;
- a `text`, `list-item` or `picture` box whose text-layer words line up in rows and columns is a borderless table
  (`word_tables`, in the layout's child process; app.core.text.word_grid), and a `table` box the finder has no
  table for takes the words' columns; on a scan, such a box whose OCR lines line up so is a table the engine reads;
- a `caption`/`text` box of one short line that reads as math becomes a `formula`; a `formula` box whose text reads
  as prose becomes `text`;
- boxes side by side in two columns that the layout ordered across the columns are ordered down each column
  (`order_columns`: a gutter no box crosses; full-width boxes separate bands);
- a text line on the same line band as a page header/footer (a page number beside a running title) gets the
  header/footer class too, so a band is kept or dropped whole (`margin_bands`); a line in the top or bottom
  margin that repeats what an earlier page's header/footer said there (digits aside) is one too (`MarginMemory`);
- the lines PyMuPDF's OCR hook read on a scanned page (its text in the CJK fallback font it inserts) go with the
  boxes that hold them (`ocr_lines`), so a region need not be read a second time (app.core.pipeline.text_source).

What must never live here: the child process (budget.py), the label mapping (pymupdf_layout.py), reading text.
"""
from __future__ import annotations

import functools
import re
from statistics import median
from dataclasses import dataclass

from app.core.layout.display_math import split_displays
from app.core.layout.regroup import continued_sentences, join_display_pieces, nested_pieces, numbered_order
from app.core.layout.furniture import MARGIN_CLASSES, MARGIN_SHARE, NeighbourMargins, settle
from app.core.layout.side_tables import join_side_tables
from app.core.layout.table_split import named_captions, split_table
from app.core.text.layer_math import SCRIPT_SIZE, set_as_math
from app.core.layout.base import STRIP_ASPECT  # a picture this much wider than tall is a strip: a line, not a photo
from app.core.text.textlayer import inside_fraction
from app.core.text.word_grid import Word, grid

OCR_INSERT_FONT = "Droid Sans Fallback"  # the font pymupdf4llm's OCR hook writes recognised text in
STRIP_LETTERS = 3  # ... and a few letters read in it are its text (a one-line image of a word or two)
LOGO_MIN = 12.0  # a picture strip at least this tall (points) may be a logo's or banner's words ...
LOGO_SHARE = 0.12  # ... and at most this share of the page's height
TEXT_MIN_LETTERS = 12  # fewer letters (in a picture, on a page) are a chart's labels, not text a reader misses
MATH_FUNCTIONS = frozenset("sum int prod lim log ln exp sin cos tan max min det mod sqrt frac".split())
_RELATION = re.compile(r"[=<>≤≥≈≠∝∈⊂→]")
_MATH_MARK = re.compile(r"[\^_\\∑∫∏√±×÷∞∂∇]|\b[a-zA-Z]\s*[+\-*/]\s*[a-zA-Z0-9]")
_WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass
class Line:
    box: tuple[float, float, float, float]
    text: str
    ocr: bool  # written by the layout's OCR hook (no text layer of the document's own)
    math: bool = False  # typeset as math: math fonts with scripts or in good part (app.core.text.layer_math.set_as_math)
    font: str = ""  # the font of most of its characters ("" for the OCR hook's lines)
    size: float = 0.0


def fulltext_lines(parsed: dict, given: list | None = None) -> list[Line]:
    """The page's text lines as pymupdf4llm saw them (the text layer and, on scans, its OCR's text). `given`: the
    scan's lines the pipeline read ([x0, y0, x1, y1, text], points), written into the page by the OCR hook: MuPDF
    joins those on one baseline into one line (a table row's cells), so a line holding two or more is those lines
    again, each once (lines overlap: one held by two, or by one and a line of its own, was written twice on s12)."""
    given = [g for g in given or () if len(g) > 4 and str(g[4]).strip()]
    out, emitted = [], set()
    for line in _fulltext(parsed):
        held = [k for k, g in enumerate(given) if line.ocr and line.box[0] - 1 <= (g[0] + g[2]) / 2 <= line.box[2] + 1
                and line.box[1] - 1 <= (g[1] + g[3]) / 2 <= line.box[3] + 1]
        own = len(held) == 1 and str(given[held[0]][4]).strip() == line.text  # the given line as it is
        if len(held) >= 2:
            out.extend(Line(tuple(float(v) for v in g[:4]), str(g[4]).strip(), True)
                       for g in sorted(given[k] for k in held if k not in emitted))
        elif not (own and held[0] in emitted):
            out.append(line)
        emitted.update(held if len(held) >= 2 or own else ())
    return out


def _fulltext(parsed: dict) -> list[Line]:
    out = []
    for block in parsed.get("fulltext") or []:
        for line in block.get("lines", []) or []:
            spans = line.get("spans", []) or []
            text = "".join(s.get("text", "") for s in spans).strip()
            if text:
                ocr = all(str(s.get("font", "")).startswith(OCR_INSERT_FONT) for s in spans)
                main = max(spans, key=lambda s: len(s.get("text", "").strip()))
                font = "" if ocr else str(main.get("font", "")).split("+")[-1]
                out.append(Line(tuple(float(v) for v in line["bbox"]), text, ocr, set_as_math(spans), font,
                                float(main.get("size") or 0.0)))
    return out


def lines_in(lines: list[Line], box, min_inside: float = 0.5) -> list[Line]:
    return [ln for ln in lines if inside_fraction(ln.box, box) >= min_inside]


def _one_band(lines: list[Line]) -> bool:
    """One line, or pieces of one (PyMuPDF splits a display equation at a \\quad into lines side by side), or one
    line of math with its scripts and limits: a text layer written from HTML puts `e` and its raised `iπ`, or `∫`
    and its limits, on lines of their own. Those are set smaller than the line's main size (SCRIPT_SIZE) and lie
    within a main line's height above or below it."""
    if not lines:
        return False
    top = max(ln.size for ln in lines)
    main = [ln for ln in lines if top <= 0 or ln.size > SCRIPT_SIZE * top]
    if not all(_band_overlap(a.box, b.box) >= 0.5 for a in main for b in main):
        return False
    if len(main) == len(lines):
        return True
    y0, y1 = min(ln.box[1] for ln in main), max(ln.box[3] for ln in main)
    reach = y1 - y0
    return all(y0 - reach <= ln.box[1] and ln.box[3] <= y1 + reach for ln in lines)


def _prose_words(text: str) -> int:
    return sum(1 for w in _WORD.findall(text) if w.lower() not in MATH_FUNCTIONS)


def looks_like_math(text: str) -> bool:
    """One line that is an equation rather than prose: a relation sign, and a mark of math (a sub/superscript,
    an operator between symbols, a math sign), and few words that are not math function names."""
    t = text.strip()
    if not t or len(t) > 120 or not _RELATION.search(t) or not _MATH_MARK.search(t):
        return False
    words = [w for w in _WORD.findall(t) if w.lower() not in MATH_FUNCTIONS]
    return len(words) <= 1


GRID_ROWS = 4  # a picture's text is a table when at least this many of its rows ...
GRID_COLUMNS = 3  # ... hold this many short pieces or more


def looks_like_grid(lines: list[Line]) -> bool:
    """Do a picture's OCR pieces form a table (the layout took a scanned table for a picture): rows of several short
    pieces side by side, most rows alike?"""
    rows: list[list[Line]] = []
    for ln in sorted(lines, key=lambda ln: (ln.box[1] + ln.box[3]) / 2):
        mid = (ln.box[1] + ln.box[3]) / 2
        if rows and abs(mid - sum((r.box[1] + r.box[3]) / 2 for r in rows[-1]) / len(rows[-1])) \
                <= 0.5 * (ln.box[3] - ln.box[1]):
            rows[-1].append(ln)
        else:
            rows.append([ln])
    wide = [r for r in rows if len(r) >= GRID_COLUMNS]
    short = sum(1 for r in wide for ln in r if len(ln.text.split()) <= 3)
    pieces = sum(len(r) for r in wide)
    return len(wide) >= GRID_ROWS and len(wide) >= 0.6 * len(rows) and short >= 0.8 * max(1, pieces)


def _box(b: dict) -> tuple[float, float, float, float]:
    return (float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"]))


def _letters(lines: list[Line]) -> int:
    return sum(c.isalpha() for ln in lines for c in ln.text)


def find_tables(page, layout_tables=None) -> list[tuple[tuple[float, float, float, float], str]]:
    """PyMuPDF's table finder on a born-digital page: (bbox in points, HTML) per table; [] when it fails.
    `layout_tables`: the table boxes the layout model found on this page already; the finder, which runs the
    model again to know where tables are (a quarter of a second a page), takes them instead."""
    import pymupdf

    if layout_tables is not None:
        page.layout_information = [(*map(float, box[:4]), "table") for box in layout_tables]
        page.get_layout = lambda **_kw: None  # the finder's call keeps what is given

    from app.core.text.finder_tables import column_edges, external_header, from_finder, header_above, split_at_edges

    def pymupdf_union(a, b):  # the table's box with its column names above it
        return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))

    def chars_of(word):
        raw = page.get_text("rawdict", clip=pymupdf.Rect(word[:4]))
        return [(c["bbox"][0], c["bbox"][2], c["c"]) for b in raw.get("blocks", ()) for ln in b.get("lines", ())
                for sp in ln["spans"] for c in sp["chars"]
                if word[0] - 0.5 <= (c["bbox"][0] + c["bbox"][2]) / 2 <= word[2] + 0.5]

    try:
        found = page.find_tables()
        words = page.get_text("words") if found.tables else []
        out = []
        for t in found.tables:
            cut = split_at_edges(words, column_edges(t), t.bbox, chars_of)
            ext = external_header(t, cut)
            above = None if ext else header_above(t, cut)
            box = pymupdf_union(t.bbox, t.header.bbox) if ext else \
                pymupdf_union(t.bbox, above[1]) if above else t.bbox
            out.append((tuple(float(v) for v in box), from_finder(t, cut)))
        return out
    except Exception:  # noqa: BLE001 - the finder on a damaged page: the layout's box stands
        return []




GRID_CLASSES = ("text", "list-item", "table", "picture")  # the boxes whose words may line up in a borderless table


def word_tables(page, boxes: list[dict]) -> None:
    """Each box of GRID_CLASSES whose text-layer words line up in a table (app.core.text.word_grid) gets its HTML
    as `word_table` (in place); a picture's words are those no other box holds; the OCR hook's inserted text is no
    text layer."""
    from app.core.text.word_grid import page_words, word_table, words_in

    todo = [b for b in boxes if b.get("boxclass") in GRID_CLASSES]
    words = page_words(page, skip_fonts=(OCR_INSERT_FONT,)) if todo else []
    held = {id(w) for b in boxes if b.get("boxclass") != "picture" for w in words_in(words, _box(b))} \
        if any(b.get("boxclass") == "picture" for b in todo) else set()
    for b in todo if words else []:
        mine = words_in(words, _box(b))
        html = word_table([w for w in mine if id(w) not in held] if b.get("boxclass") == "picture" else mine)
        if html:
            b["word_table"] = html


def _equation(inside: list[Line]) -> bool:
    """Is a box's text one line of math (with its scripts) rather than prose or a heading?"""
    text = " ".join(ln.text for ln in inside)
    return _one_band(inside) and (looks_like_math(text) or (
        all(ln.math for ln in inside) and bool(_RELATION.search(text)) and _prose_words(text) <= 1))


_MATH_GLYPHS = re.compile(r"[=+−×·∂∇∑∫∏√±∞≤≥≈≠→εμρσαβγδθλπφψω]")


def _math_piece(box: dict, held: list[Line]) -> bool:
    """A piece of a display equation the layout boxed as text: math glyphs and no words of prose ("ε 0", "∂B")."""
    text = " ".join(ln.text for ln in held)
    return (box.get("boxclass") in ("text", "picture-text") and bool(held) and _prose_words(text) == 0
            and bool(_MATH_GLYPHS.search(text)) and len(text) <= 80)


def _band_overlap(a, b) -> float:
    """Vertical overlap of two boxes as a share of the shorter one's height."""
    return (min(a[3], b[3]) - max(a[1], b[1])) / max(1e-6, min(a[3] - a[1], b[3] - b[1]))


def margin_bands(boxes: list[dict]) -> None:
    """A one-line box on the same line band as a header/footer joins its class (in place)."""
    margins = [b for b in boxes if b.get("boxclass") in MARGIN_CLASSES]
    for b in [b for b in boxes if b.get("boxclass") in ("text", "section-header", "caption", "footnote")]:
        box = _box(b)
        for m in margins:
            mb = _box(m)
            if mb[3] - mb[1] > mb[2] - mb[0]:  # text up the margin (arXiv's stamp) spans every line band: no band
                continue
            if _band_overlap(box, mb) >= 0.5 and (box[3] - box[1]) <= 1.5 * (mb[3] - mb[1]) + 2:
                b["boxclass"] = m["boxclass"]
                break


_DIGITS = re.compile(r"\d+")


class MarginMemory:
    """What the headers and footers of a document's pages said, by band: a later page's line that says the same in
    the same margin band (page numbers aside) is a header/footer too, whatever the layout called it there."""

    def __init__(self) -> None:
        self.key = None
        self.seen: set[tuple[str, int, str]] = set()
        self.neighbours = NeighbourMargins()  # the document's nearby pages: headers that repeat (furniture.py)

    @staticmethod
    def _band(box, page_h: float) -> int | None:
        y = (box[1] + box[3]) / 2 / max(1.0, page_h)
        return round(y * 50) if y < MARGIN_SHARE or y > 1 - MARGIN_SHARE else None

    def apply(self, key, boxes: list[dict], lines: list[Line], page_h: float) -> None:
        """Re-label repeated margin lines of this page (in place), then remember its headers/footers."""
        if key != self.key:
            self.key, self.seen = key, set()
        for b in boxes:
            band = self._band(_box(b), page_h)
            if band is None:
                continue
            text = _DIGITS.sub("#", " ".join(ln.text for ln in lines_in(lines, _box(b))).lower()).strip()
            cls = b.get("boxclass")
            if cls in MARGIN_CLASSES and text:
                self.seen.add((cls, band, text))
            elif cls in ("text", "section-header", "caption") and text:
                for margin in MARGIN_CLASSES:
                    if any((margin, band + d, text) in self.seen for d in (-1, 0, 1)):
                        b["boxclass"] = margin
                        break


def _gutter(body: list[tuple[float, float, float, float]]) -> float | None:
    """An x that no box crosses, with at least two boxes on each side that stand side by side; the one most boxes
    keep clear of."""
    best, best_clear = None, -1
    for g in sorted({b[2] + 0.5 for b in body}):
        left = [b for b in body if b[2] < g]
        right = [b for b in body if b[0] > g]
        if len(left) < 2 or len(right) < 2:
            continue
        if not any(_band_overlap(a, c) > 0 for a in left for c in right):
            continue
        clear = len(left) + len(right)
        if clear > best_clear:
            best, best_clear = g, clear
    return best


def order_columns(boxes: list[dict]) -> list[dict]:
    """Boxes in reading order down the columns, when the layout read across them; else as they were."""
    idx = [i for i, b in enumerate(boxes) if b.get("boxclass") not in MARGIN_CLASSES]
    body = [_box(boxes[i]) for i in idx]
    g = _gutter(body)
    if g is None:
        return boxes
    ranked = sorted(range(len(idx)), key=lambda k: (body[k][1], body[k][0]))
    bands: list[list[int]] = [[]]
    for k in ranked:
        if body[k][0] < g < body[k][2]:  # a full-width box: a band of its own
            bands.extend([[k], []])
        else:
            bands[-1].append(k)
    order = [k for band in bands for k in sorted(band, key=lambda k: (body[k][0] > g, body[k][1]))]

    def switches(seq: list[int]) -> int:  # how often the reading jumps between the columns
        sides = [body[k][0] > g for k in seq if not body[k][0] < g < body[k][2]]
        return sum(1 for a, b in zip(sides, sides[1:]) if a != b)

    if switches(list(range(len(idx)))) <= switches(order):
        return boxes
    out = list(boxes)
    for slot, k in zip(idx, order):
        out[slot] = boxes[idx[k]]
    return out


def _cut_at_captions(box: dict, lines: list[Line]) -> list[dict]:
    """A scanned table box over two tables and a caption, as its parts (app.core.layout.table_split); a table of
    the text layer is left to the table finder, whose tables say where each one ends."""
    if (box.get("boxclass") or "text") != "table" or box.get("layer_table") or box.get("word_table"):
        return [box]
    inside = lines_in(lines, _box(box))
    if not inside or not all(ln.ocr for ln in inside):
        return [box]
    return split_table(box, inside) or [box]


def refine(boxes: list[dict], lines: list[Line], tables=None, margins: tuple[MarginMemory, object, float] | None = None
           ) -> list[dict]:
    """The corrected boxes (new dicts; extra keys `ocr_lines`, `layer_table`) in the same reading order.
    `tables`: a callable returning `find_tables(page)` of the page (called only when there is a table); `margins`:
    (the document's MarginMemory, the document's key, the page height in points)."""
    out: list[dict] = []
    found = None
    boxes = [dict(b) for b in boxes]
    # furniture only for a reason beyond position (app.core.layout.furniture)
    settle(boxes, lambda box: lines_in(lines, box), margins[2] if margins else 0.0, lines,
           margins[0].neighbours if margins else None)
    margin_bands(boxes)
    if margins is not None:
        memory, key, page_h = margins
        memory.apply(key, boxes, lines, page_h)
    ordered = split_displays(order_columns(boxes), lambda box: lines_in(lines, box))  # display_math.py
    ordered = [part for b in ordered for part in _cut_at_captions(b, lines)]
    ordered = join_side_tables(ordered, lambda box: lines_in(lines, box))  # a scanned table boxed column by column
    # lines another box holds: text wrapping round a photo reaches into its box, and must not be read twice
    held = {id(ln) for b in ordered if b.get("boxclass") != "picture" for ln in lines_in(lines, _box(b))}
    born = any(ln.font and not ln.ocr for ln in lines)  # the page has a text layer of its own
    page_h = margins[2] if margins else max((ln.box[3] for ln in lines), default=0.0)
    for b in ordered:
        cls = b.get("boxclass") or "text"
        inside = lines_in(lines, _box(b))
        text = " ".join(ln.text for ln in inside)
        if cls in ("caption", "text", "section-header") and _equation(inside):
            b["boxclass"] = cls = "formula"  # an equation the layout took for prose or a heading
        elif cls == "formula" and inside and not text.strip("□■∎ "):
            b["boxclass"] = cls = "text"  # the end-of-proof box, set on a line of its own
        elif cls == "formula" and inside and not any(looks_like_math(ln.text) for ln in inside) \
                and _prose_words(text) >= 4 + len(_RELATION.findall(text)) \
                and 2 * sum(ln.math for ln in inside) < len(inside):  # prose ("nodes = 3, splits = 4" is not)
            b["boxclass"] = cls = "text"
        read = [ln for ln in inside if id(ln) not in held] if cls == "picture" else inside
        if cls in GRID_CLASSES and cls != "table" and not b.get("word_table") and read and all(ln.ocr for ln in read) \
                and grid([Word(ln.box, ln.text) for ln in read]) is not None:
            b["boxclass"] = cls = "table"  # a scan's lines in rows and columns: the engine reads it as a table
        if cls in GRID_CLASSES and cls != "table" and b.get("word_table"):
            b["boxclass"] = cls = "table"  # words in rows and columns: a borderless table the layout took for text
            b["layer_table"] = b["word_table"]
        if cls == "table" and tables is not None:
            if found is None:
                found = tables()
            for tb, html in found:
                if (inside_fraction(tb, _box(b)) >= 0.9 if b.get("cut") else  # cut at a caption: its own table
                        inside_fraction(_box(b), tb) > 0.5 or inside_fraction(tb, _box(b)) > 0.5):
                    b["x0"], b["y0"] = min(b["x0"], tb[0]), min(b["y0"], tb[1])
                    b["x1"], b["y1"] = max(b["x1"], tb[2]), max(b["y1"], tb[3])
                    b["layer_table"] = html
                    break
        if cls == "table" and not b.get("layer_table") and b.get("word_table"):
            b["layer_table"] = b["word_table"]  # no finder table there: the words' own columns
        ocr = [ln for ln in lines_in(lines, _box(b)) if ln.ocr]
        if ocr:
            b["ocr_lines"] = [[*ln.box, ln.text] for ln in ocr]
        out.append(b)
        own = [ln for ln in inside if id(ln) not in held] if cls == "picture" else []
        bx = _box(b)
        strip = bx[2] - bx[0] >= STRIP_ASPECT * max(1e-6, bx[3] - bx[1])  # a one-line image is a line of text
        if cls == "picture" and strip and not inside and born and LOGO_MIN <= bx[3] - bx[1] <= LOGO_SHARE * page_h \
                and bx[1] > 1.0 and bx[3] < page_h - 1.0:  # (a band bled off the page's edge is its decoration)
            # a born-digital page's strip of a picture with no text over it: a logo or banner, its words drawn;
            # beside the page's running footer (or header) it is furniture too (a sponsor's logo under a slide)
            edge = next((m["boxclass"] for m in ordered if m.get("boxclass") in MARGIN_CLASSES
                         and _band_overlap(bx, _box(m)) >= 0.5), None)
            out.append(dict(b, boxclass=edge or "picture-text", textlines=None, drawn_words=True))
            continue
        if own and _letters(own) >= (STRIP_LETTERS if strip else TEXT_MIN_LETTERS):
            # over its own lines only (a text layer's words are taken by box: none of the neighbours')
            text_box = dict(zip(("x0", "y0", "x1", "y1"), (min(ln.box[0] for ln in own), min(ln.box[1] for ln in own),
                                                          max(ln.box[2] for ln in own), max(ln.box[3] for ln in own))))
            text_box.update(boxclass="picture-text", textlines=None)
            others = [ln for ln in inside if id(ln) in held]  # lines another box holds (a running header cut off)
            if others:  # the text reaches up (down) to them, a line's pitch at most: its lines' boxes may be thin
                tops = sorted(ln.box[1] for ln in own)
                pitch = median([b2 - a2 for a2, b2 in zip(tops, tops[1:]) if b2 - a2 > 0.5] or
                               [2 * max(ln.box[3] - ln.box[1] for ln in own)])
                top, bottom = tops[0], max(ln.box[3] for ln in own)
                text_box["y0"] = max([float(b["y0"]), top - pitch] + [ln.box[3] for ln in others if ln.box[3] <= top])
                text_box["y1"] = min([float(b["y1"]), bottom + pitch] +
                                     [ln.box[1] for ln in others if ln.box[1] >= bottom])
            if any(ln.ocr for ln in own):
                text_box["ocr_lines"] = [[*ln.box, ln.text] for ln in own if ln.ocr]
            if looks_like_grid(own):  # a scanned table the layout took for a picture: it is the table
                b.clear()
                b.update(text_box, boxclass="table")
            else:
                if _equation(own):  # an equation on a card's background picture
                    text_box["boxclass"] = "formula"
                out.append(text_box)
    out = join_display_pieces(out, lambda box: lines_in(lines, box), _math_piece)
    @functools.lru_cache(maxsize=None)  # a box's text is asked for several times (each box looks ahead)
    def text_of(box) -> str:
        return " ".join(ln.text for ln in sorted(lines_in(lines, box),  # top to bottom
                                                key=lambda ln: ((ln.box[1] + ln.box[3]) / 2, ln.box[0])))

    out = nested_pieces(continued_sentences(numbered_order(out, text_of), text_of))
    named_captions(out, lambda box: " ".join(ln.text for ln in lines_in(lines, _box(box))))
    # the table's cells hold its text now: a line of it the layout boxed on its own (its column names) goes
    tables_held = [_box(b) for b in out if b.get("layer_table")]
    return [b for b in out if b.get("layer_table") or b.get("boxclass") not in ("text", "section-header", "caption")
            or not any(inside_fraction(_box(b), t) >= 0.8 for t in tables_held)]
