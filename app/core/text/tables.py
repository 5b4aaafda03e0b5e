"""Tables as HTML (`<table>` with a `<th>` header row, colspan/rowspan), from two sources:

- a born-digital table found by PyMuPDF's table finder: app.core.text.finder_tables, on this module's cells;
- recognised pieces of a read table (`from_rows`: rows of (box, text) pieces, as OCR gives them): the column
  boundaries are inferred from the pieces' x-extents across all rows (an interval union over the rows that fill
  the most columns), so a value lands under its header even when a row has empty cells, and a piece centred
  over a run of columns (a spanning header) spans them; a lone currency sign is
  joined to the value to its right ("$" + "12.50"), and a row that starts past the first column right under the
  previous one (less than half a line apart) continues that row's cells (a two-line cell), unless it holds a
  number (the rows of a group whose label stands in the first column only once);
- an engine's reading of a born-digital table given the header the text layer's table shows (`adopt_header`): an
  engine writes plain `<td>` rows, and repeats a spanning header into each column; where its first rows say what
  the layer's header rows say, they become the layer's header rows (`<th>`, with their spans).

What must never live here: OCR, layout, Markdown of other blocks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from html import escape
from statistics import median
from typing import Sequence

from rapidfuzz import fuzz

Box = tuple[float, float, float, float]
CURRENCY = re.compile(r"^[$€£¥]$")
NUMBER = re.compile(r"^[-+−–(]?[$€£¥]?\d[\d.,\s%]*\)?%?$")  # a figure (a row of them is never a line of a cell)
OUTLIER_ROWS = 5  # from this many rows on, one row's stray piece is not a column (infer_columns)
OVERLAP = 0.3  # two pieces overlapping by less than this share of a line's height stand in two columns


@dataclass
class Cell:
    text: str
    rowspan: int = 1
    colspan: int = 1


def html_table(rows: Sequence[Sequence[Cell]], header_rows: int = 0) -> str:
    """Rows of cells (cells covered by a span are left out) → `<table>…</table>`; the first `header_rows` rows
    are `<th>` cells."""
    out = []
    for n, row in enumerate(rows):
        tag = "th" if n < header_rows else "td"
        cells = []
        for c in row:
            attrs = (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + (
                f' colspan="{c.colspan}"' if c.colspan > 1 else "")
            cells.append(f"<{tag}{attrs}>{escape(c.text)}</{tag}>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>" + "".join(out) + "</table>" if out else ""


# -- read pieces: columns inferred from x-positions ---------------------------------------------------------------

def join_currency(row: list[tuple[Box, str]]) -> list[tuple[Box, str]]:
    """A lone currency sign joins the piece to its right on the same row."""
    out: list[tuple[Box, str]] = []
    i = 0
    while i < len(row):
        box, text = row[i]
        if CURRENCY.match(text.strip()) and i + 1 < len(row):
            nbox, ntext = row[i + 1]
            h = max(1.0, box[3] - box[1])
            if nbox[0] - box[2] < 3 * h:
                out.append(((box[0], min(box[1], nbox[1]), nbox[2], max(box[3], nbox[3])), text.strip() + ntext))
                i += 2
                continue
        out.append((box, text))
        i += 1
    return out


def infer_columns(rows: list[list[tuple[Box, str]]]) -> list[tuple[float, float]]:
    """Column x-intervals: the union of the pieces' x-extents over the rows with the most pieces (a cell that spans
    columns, in a row with fewer pieces, cannot merge them). Pieces of one row that stand over each other (the OCR
    grouped a wrapped cell's second line into the row beside it) count once. From OUTLIER_ROWS rows on, a count
    one row alone reaches, with a column no other row has a cell in, is that row's stray piece (a wrapped cell's
    word the OCR read apart): the columns are the next count's."""
    if not rows:
        return []
    side = [_side_by_side(r) for r in rows]
    counts = sorted((len(r) for r in side), reverse=True)
    cols = _columns(side, counts[0])
    if len(rows) >= OUTLIER_ROWS and counts[0] > counts[1]:
        alone = next(n for n, r in enumerate(side) if len(r) == counts[0])
        others = [b for n, r in enumerate(side) if n != alone for b in r]
        if not all(any(min(c1, b[2]) - max(c0, b[0]) > 0.5 * (b[2] - b[0]) for b in others) for c0, c1 in cols):
            cols = _columns(side, counts[1])
    return cols


def _columns(side: list[list[Box]], most: int) -> list[tuple[float, float]]:
    """The columns the rows of `most` side-by-side pieces make (`side`: every row's, from _side_by_side)."""
    full = [r for r in side if len(r) == most]
    spans = sorted((b[0], b[2]) for r in full for b in r)
    # pieces that touch by a little are still apart: an OCR piece's box is padded (the crop it was read from)
    touch = OVERLAP * median([b[3] - b[1] for r in full for b in r])
    cols: list[list[float]] = []
    for x0, x1 in spans:
        if cols and x0 <= cols[-1][1] - touch:
            cols[-1][1] = max(cols[-1][1], x1)
        else:
            cols.append([x0, x1])
    while len(cols) > most:  # pieces that stand in the gaps of other rows: the closest columns are one
        k = min(range(len(cols) - 1), key=lambda k: cols[k + 1][0] - cols[k][1])
        cols[k:k + 2] = [[cols[k][0], max(cols[k][1], cols[k + 1][1])]]
    return [(a, b) for a, b in cols]


def _side_by_side(row: list[tuple[Box, str]]) -> list[Box]:
    """A row's pieces as the x-ranges they stand side by side in: pieces over each other are one (their union)."""
    out: list[list[float]] = []
    for b, _ in sorted(row, key=lambda p: p[0][0]):
        if out and b[0] < out[-1][2] - OVERLAP * (b[3] - b[1]):
            out[-1] = [min(out[-1][0], b[0]), min(out[-1][1], b[1]), max(out[-1][2], b[2]), max(out[-1][3], b[3])]
        else:
            out.append(list(b))
    return [tuple(b) for b in out]


def _columns_of(box: Box, cols: list[tuple[float, float]]) -> list[int]:
    touch = OVERLAP * (box[3] - box[1])  # a padded box reaching into the next column by a little is not over it
    hit = [k for k, (a, b) in enumerate(cols) if min(b, box[2]) - max(a, box[0]) > touch]
    if len(hit) > 1:  # ... nor when it stands over two (a spanning cell): only its columns in a run
        hit = list(range(hit[0], hit[-1] + 1))
    if hit:
        return hit
    cx = (box[0] + box[2]) / 2  # in a gap between columns: the nearest one
    return [min(range(len(cols)), key=lambda k: min(abs(cx - cols[k][0]), abs(cx - cols[k][1])))]


def _over(extent: tuple[float, float], cols: list[tuple[float, float]]) -> tuple[float, float]:
    """The x-range a piece stands for: a piece centred over a run of columns, not mostly inside one of them (a
    spanning header between two columns' cells), stands over all of them; otherwise its own extent."""
    a, b = extent
    mid = (a + b) / 2
    if any(min(b, c1) - max(a, c0) > 0.5 * (b - a) for c0, c1 in cols):
        return extent  # mostly inside one column: a cell of that column
    for n in range(2, len(cols) + 1):
        for k in range(len(cols) - n + 1):
            x0, x1 = cols[k][0], cols[k + n - 1][1]
            inner = cols[k][1], cols[k + n - 1][0]  # the run's first column ends, its last begins, inside it
            if a >= x0 - 1 and b <= x1 + 1 and a < inner[0] + 1 and b > inner[1] - 1 or (
                    x0 - 1 <= a and b <= x1 + 1 and abs(mid - (x0 + x1) / 2) <= 0.15 * (x1 - x0)
                    and not any(c[0] <= a and b <= c[1] for c in cols[k:k + n])):
                return (x0 + 0.5, x1 - 0.5)
    return extent


def _wrapped_label(placed: dict[int, Cell]) -> bool:
    """Is a row the next line of the row label above it: its first column alone, starting in lower case ("most
    effective way to treat mental" under "1. Antipsychotic drug treatment is the")? A group's label ("Women",
    "(a)") starts otherwise and stays a row."""
    text = placed[0].text.strip() if list(placed) == [0] else ""
    return bool(text) and text[0].islower()


def from_rows(rows: list[list[tuple[Box, str]]], header_rows: int | None = None) -> str:
    """Rows of recognised pieces (top to bottom, each left to right) → HTML with inferred columns; the first row is
    the header unless `header_rows` says how many of the given rows are (a body row never continues a header
    cell)."""
    rows = [join_currency(r) for r in rows if r]
    if not rows:
        return ""
    cols = infer_columns(rows)
    line_h = median([b[3] - b[1] for r in rows for b, _ in r]) or 1.0
    grid: list[dict[int, Cell]] = []
    bottoms: list[float] = []
    head = 0  # the grid rows made of the first `header_rows` rows
    for n, row in enumerate(rows):
        placed: dict[int, Cell] = {}
        for box, text in row:
            a, b = _over((box[0], box[2]), cols)
            ks = _columns_of((a, box[1], b, box[3]), cols)
            first = ks[0]
            if first in placed:
                placed[first].text += " " + text
            else:
                placed[first] = Cell(text, colspan=len(ks))
        top = min(b[1] for b, _ in row)
        under_head = len(grid) <= (1 if header_rows is None else head)  # (a group's label in lower case: p19)
        continues = (grid and (0 not in placed or (_wrapped_label(placed) and not under_head))
                     and top - bottoms[-1] < 0.5 * line_h
                     and not any(NUMBER.match(c.text.strip()) for c in placed.values())  # figures: a row
                     and all(k in grid[-1] for k in placed) and n != header_rows)
        if continues:
            for k, cell in placed.items():
                grid[-1][k].text += " " + cell.text
            bottoms[-1] = max(bottoms[-1], max(b[3] for b, _ in row))
            continue
        grid.append(placed)
        bottoms.append(max(b[3] for b, _ in row))
        head += 1 if header_rows is not None and n < header_rows else 0
    out: list[list[Cell]] = []
    for placed in grid:
        cells, k = [], 0
        while k < len(cols):
            cell = placed.get(k, Cell(""))
            cells.append(cell)
            for covered in range(k + 1, k + max(1, cell.colspan)):  # a piece under a span is the span's text
                if covered in placed:
                    cell.text += " " + placed[covered].text
            k += max(1, cell.colspan)
        out.append(cells)
    return html_table(out, header_rows=(1 if len(out) > 1 else 0) if header_rows is None else head)


# -- an engine's table given the text layer's header ------------------------------------------------------------

HEADER_AGREES = 85.0  # rapidfuzz ratio (0-100) at which an engine's first row says what the layer's header says
_ROW = re.compile(r"<tr\b[^>]*>.*?</tr>", re.S | re.I)
_CELL = re.compile(r"<(t[dh])\b[^>]*>(.*?)</t[dh]>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")


def _row_words(row: str) -> str:
    """A row's cell texts in order, each said once (a spanning cell an engine repeated into each column counts once),
    lower-cased, without spaces."""
    out: list[str] = []
    for _, body in _CELL.findall(row):
        t = re.sub(r"\s+", "", unescape(_TAG.sub(" ", body))).lower()
        if t and (not out or out[-1] != t):
            out.append(t)
    return "|".join(out)


def header_rows(html: str) -> list[str]:
    """The leading rows of `html` whose cells are all header cells (`<th>`), as HTML."""
    out = []
    for row in _ROW.findall(html or ""):
        tags = [tag.lower() for tag, _ in _CELL.findall(row)]
        if not tags or any(t != "th" for t in tags):
            break
        out.append(row)
    return out


def adopt_header(html: str, layer_html: str) -> str:
    """`html` (an engine's table) with its first rows replaced by the layer table's header rows when they say the
    same (cell texts in order, a repeated spanning cell counted once, a misread letter or two forgiven);
    unchanged when it has a header of its own, or its first rows say something else."""
    head = header_rows(layer_html)
    rows = _ROW.findall(html or "")
    if not head or len(rows) <= len(head) or header_rows(html):
        return html
    said, shown = [_row_words(r) for r in rows[:len(head)]], [_row_words(r) for r in head]
    if any(fuzz.ratio(a, b) < HEADER_AGREES for a, b in zip(said, shown)):
        return html
    at = html.index(rows[0])
    end = html.index(rows[len(head) - 1], at) + len(rows[len(head) - 1])
    return html[:at] + "".join(head) + html[end:]
