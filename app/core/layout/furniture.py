"""Page furniture — running headers, running footers, page numbers — told from body text that happens to sit
near a page's edge.

The layout model calls a box `page-header`/`page-footer` from where it sits; on a one-page document, a small
page or a page whose first paragraph starts high, that drops real text. A box is kept as furniture only when
something besides its position says so (`furniture_reason`):

- it is a page number ("7", "- 7 -", "Page 7 of 12", "vii");
- its lines repeat, digits aside, in the same margin band of a nearby page of the document
  (`NeighbourMargins`, read from the born-digital document's own text layer, pages `NEIGHBOURS` either side);
- it is short (a line or two, under MARGIN_MAX_LETTERS letters), lies near the top or bottom edge (its middle
  within EDGE_SHARE of the page's height: LNCS's running heads sit just below 12 %) and is set unlike the
  body: another font, or a size at most STYLE_SIZE of the body's (running titles in small capitals, italics,
  8-pt type). A scanned page has no fonts: there the layout's verdict stands for a short box near the edge.

Otherwise it is body text. And the other way round: a box the layout called text whose lines repeat in the
same band on a nearby page, or that is a page number in the band, is furniture (`settle`).

What must never live here: the layout's child process, label mapping, reading text for the output.
"""
from __future__ import annotations

import re
from collections import Counter

MARGIN_SHARE = 0.12  # the top and bottom share of the page where running headers and footers live
MARGIN_MAX_LETTERS = 80  # a "header" or "footer" of two lines or more and this many letters is body text
EDGE_SHARE = 0.15  # a box the layout called a header/footer, this near the edge, may be one by its style
STYLE_SIZE = 0.92  # a margin line this share of the body's size or less is set apart from it
NEIGHBOURS = 3  # pages either side looked at for a repeated header/footer
BANDS = 50  # a page's height in bands: a repeat sits in the same band (±1) on the other page
EDGE_TIGHT = 0.04  # a born-digital page's body keeps this far from its top and bottom edges; stamps do not
TINY_SIZE = 0.6  # an edge line this share of the body's size or less is set apart from it (slide footers)
MARGIN_CLASSES = ("page-header", "page-footer")
PAGE_NUMBER = re.compile(r"^[\s\-–—|·.(\[]*(?:(?:page|p\.|seite|pág\.?|стр\.?)\s*)?(?:\d{1,4}|[ivxlcdm]{1,7})"
                         r"(?:\s*(?:/|of|von|de|из)\s*\d{1,4})?[\s\-–—|·.)\]]*$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")


def normalised(text: str) -> str:
    """A margin line as compared across pages: lower case, runs of digits as one `#`, spaces collapsed."""
    return " ".join(_DIGITS.sub("#", text.lower()).split())


def band(box, page_h: float) -> int | None:
    """The margin band of a box's middle (None: not in the top or bottom MARGIN_SHARE of the page)."""
    y = (box[1] + box[3]) / 2 / max(1.0, page_h)
    return round(y * BANDS) if y < MARGIN_SHARE or y > 1 - MARGIN_SHARE else None


class NeighbourMargins:
    """The margin lines of a born-digital document's pages near the one being read (its own text layer, each
    page read once): `repeats(text, band)` — does that line stand in that band on a page nearby?"""

    def __init__(self) -> None:
        self.key = None
        self.document = None
        self.index = -1
        self._pages: dict[int, set[tuple[int, str]]] = {}

    def at(self, document, index: int) -> None:
        """The page being read now (of `document`: a PdfDocument; other kinds have no layer to compare)."""
        key = (id(document), str(getattr(document, "path", "")))
        if key != self.key:
            self.key, self._pages = key, {}
        self.document = document if getattr(document, "kind", "") == "pdf" else None
        self.index = index

    def _margins(self, index: int) -> set[tuple[int, str]]:
        if index not in self._pages:
            found: set[tuple[int, str]] = set()
            try:
                with self.document.lock:
                    page = self.document.mupdf.load_page(index)
                    h = page.rect.height
                    for y0, y1 in ((0, MARGIN_SHARE * h), ((1 - MARGIN_SHARE) * h, h)):
                        for b in page.get_text("dict", clip=(0, y0, page.rect.width, y1)).get("blocks", []):
                            for ln in b.get("lines", []):
                                text = "".join(s.get("text", "") for s in ln.get("spans", [])).strip()
                                at = band(ln["bbox"], h)
                                if text and at is not None:
                                    found.add((at, normalised(text)))
            except Exception:  # noqa: BLE001 - a damaged neighbour page: nothing to compare with
                pass
            self._pages[index] = found
        return self._pages[index]

    def repeats(self, text: str, at: int) -> bool:
        if self.document is None or not text.strip():
            return False
        want = normalised(text)
        count = self.document.page_count
        for i in range(max(0, self.index - NEIGHBOURS), min(count, self.index + NEIGHBOURS + 1)):
            if i != self.index and any((at + d, want) in self._margins(i) for d in (-1, 0, 1)):
                return True
        return False


def body_style(lines) -> tuple[str, float] | None:
    """The body's font and size (the most characters), from the page's lines outside the margin bands."""
    weights: Counter = Counter()
    for ln in lines:
        if ln.font and ln.size:
            weights[(ln.font, round(ln.size, 1))] += len(ln.text)
    return weights.most_common(1)[0][0] if weights else None


def furniture_reason(held, box, page_h: float, body, neighbours: NeighbourMargins | None) -> str | None:
    """Why a box is page furniture (None: it is body text). `held`: its lines (page_boxes.Line)."""
    text = " ".join(ln.text for ln in held).strip()
    at = band(box, page_h) if page_h > 0 else -1  # -1: the page's height unknown: taken as in the band
    if text and PAGE_NUMBER.match(text):
        return "page number"
    if neighbours is not None and at is not None and at >= 0 and held and all(
            neighbours.repeats(ln.text, at) for ln in held):
        return "repeated on a nearby page"
    letters = sum(c.isalpha() for c in text)
    edge = -1 if page_h <= 0 else min(box[1] + box[3], 2 * page_h - box[1] - box[3]) / 2 / page_h
    if edge > EDGE_SHARE or len(held) > 2 or letters >= MARGIN_MAX_LETTERS:
        return None
    if not held or all(ln.ocr or not ln.font for ln in held):
        return "near the page's edge (a scan: the layout's verdict)"
    if body is not None and any(ln.font != body[0] or ln.size <= STYLE_SIZE * body[1] for ln in held):
        return "near the page's edge, set unlike the body"
    return None


def _rows(lines) -> list[list]:
    """The lines grouped into rows (one baseline band each), top to bottom, each row left to right."""
    rows: list[list] = []
    for ln in sorted(lines, key=lambda ln: (ln.box[1] + ln.box[3]) / 2):
        mid = (ln.box[1] + ln.box[3]) / 2
        if rows and rows[-1][0].box[1] <= mid <= rows[-1][0].box[3]:
            rows[-1].append(ln)
        else:
            rows.append([ln])
    return [sorted(r, key=lambda ln: ln.box[0]) for r in rows]


def edge_row_reason(row, inner, page_h: float, body) -> str | None:
    """Why the outermost row of a page (`row`: its lines; `inner`: the next row towards the body) is furniture,
    by its shape alone — what a one-page document or a page cut from a book still shows:
    - pieces spread across the line (three or more, or two with a page number, or two set unlike the body):
      "400 · BRITISH HUSBANDRY. · [Ch. XIX.", "Revision: 2.4 · P/N 119-036 · 10 June 2019";
    - a short line at the very edge of a born-digital page (a download stamp);
    - a short line set much smaller than the body ("NETS 2015" under a slide).
    Each only when the row is short, near the edge and set off from the body by a gap of a line or more."""
    text = " ".join(ln.text for ln in row).strip()
    y0, y1 = min(ln.box[1] for ln in row), max(ln.box[3] for ln in row)
    height = max(1.0, y1 - y0)
    edge = min(y0 + y1, 2 * page_h - y0 - y1) / 2 / page_h
    if not text or edge > EDGE_SHARE or sum(c.isalpha() for c in text) >= MARGIN_MAX_LETTERS:
        return None
    if inner:
        gap = max(min(ln.box[1] for ln in inner) - y1, y0 - max(ln.box[3] for ln in inner))
        if gap < height:
            return None
    gaps = [b.box[0] - a.box[2] for a, b in zip(row, row[1:])]
    spread = [g for g in gaps if g >= 3 * height]
    numbered = any(PAGE_NUMBER.match(ln.text.strip()) for ln in row)
    unlike = body is not None and all(ln.font and (ln.font != body[0] or abs(ln.size - body[1]) > 0.08 * body[1])
                                      for ln in row)
    if len(spread) >= 2 or (spread and (numbered or unlike)):
        return "pieces spread across the page's edge row"
    born = all(ln.font and not ln.ocr for ln in row)
    if born and edge <= EDGE_TIGHT and len(row) == 1:
        return "a short line at the very edge of the page"
    if born and body is not None and all(0 < ln.size <= TINY_SIZE * body[1] for ln in row):
        return "a short line at the edge, set far smaller than the body"
    return None


def edge_rows(lines, page_h: float, body) -> list[tuple[list, str]]:
    """The page's top and bottom rows that are furniture by their shape (`edge_row_reason`), with the reason
    (`lines`: those not yet known to be furniture; a line off the page or without a letter or digit is no row)."""
    rows = _rows([ln for ln in lines if any(c.isalnum() for c in ln.text)
                  and ln.box[3] > 0 and (page_h <= 0 or ln.box[1] < page_h)])
    if page_h <= 0 or len(rows) < 3:
        return []
    out = []
    for row, inner in ((rows[0], rows[1]), (rows[-1], rows[-2])):
        why = edge_row_reason(row, inner, page_h, body)
        if why:
            out.append((row, why))
    return out


def settle(boxes: list[dict], lines_in, page_h: float, lines, neighbours: NeighbourMargins | None) -> None:
    """Headers/footers re-judged in place (`boxclass`): kept only for a reason (`furniture_reason`); a text
    box in the margin band that repeats nearby or is a page number becomes one, and so does the page's edge row
    that is furniture by its shape (`edge_rows`; cut off the box that holds it with body text).
    `lines_in(box)`: its lines."""
    body = body_style([ln for ln in lines if band(ln.box, page_h) is None]) or body_style(lines)
    for b in boxes:
        box = (float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"]))
        cls = b.get("boxclass")
        if cls in MARGIN_CLASSES:
            if furniture_reason(lines_in(box), box, page_h, body, neighbours) is None:
                b["boxclass"] = "text"
        elif cls in ("text", "section-header", "caption") and page_h > 0 and band(box, page_h) is not None:
            held = lines_in(box)
            text = " ".join(ln.text for ln in held)
            if held and (PAGE_NUMBER.match(text.strip()) or (
                    neighbours is not None
                    and all(neighbours.repeats(ln.text, band(box, page_h)) for ln in held))):
                b["boxclass"] = "page-header" if box[1] < page_h / 2 else "page-footer"
    known = {id(ln) for b in boxes if b.get("boxclass") in MARGIN_CLASSES
             for ln in lines_in((float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"])))}
    for row, _why in edge_rows([ln for ln in lines if id(ln) not in known], page_h, body):
        ids = {id(ln) for ln in row}
        top = (row[0].box[1] + row[0].box[3]) / 2 < page_h / 2
        cls = "page-header" if top else "page-footer"
        y0, y1 = min(ln.box[1] for ln in row), max(ln.box[3] for ln in row)
        for b in list(boxes):
            if (b.get("boxclass") or "text") not in ("text", "section-header", "caption", "title", "footnote",
                                                     "picture"):
                continue
            box = (float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"]))
            held = lines_in(box)
            mine = [ln for ln in held if id(ln) in ids]
            if not mine:
                continue
            if len(mine) == len(held):
                b["boxclass"] = cls
                continue
            rest = [ln for ln in held if id(ln) not in ids and (ln.box[1] >= y1 - 1 if top else ln.box[3] <= y0 + 1)]
            if not rest:
                continue
            part = dict(b, boxclass=cls, y0=y0, y1=y1)
            if b.get("boxclass") == "picture":  # a picture's text leaves out the lines another box holds
                boxes.insert(boxes.index(b), part)
                continue
            if top:  # the body keeps everything below the row (its lines' boxes may reach up to it)
                b["y0"] = min(y1, min(ln.box[1] for ln in rest))
            else:
                b["y1"] = max(y0, max(ln.box[3] for ln in rest))
            boxes.insert(boxes.index(b) + (0 if top else 1), part)
