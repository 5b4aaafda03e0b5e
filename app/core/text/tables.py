"""Tables as HTML (`<table>` with a `<th>` header row, colspan/rowspan), from two sources:

- a born-digital table found by PyMuPDF's table finder (`from_finder`): its cells, merged cells (a `None` cell is
  covered by a neighbour whose box reaches over it) and its header (the first row, and the rows its cells span);
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
_CURRENCY = re.compile(r"^[$€£¥]$")
NUMBER = re.compile(r"^[-+−–(]?[$€£¥]?\d[\d.,\s%]*\)?%?$")  # a figure (a row of them is never a line of a cell)
_YEAR = re.compile(r"^(?:19|20)\d\d$")  # a column's year is a name, not a figure
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


# -- born-digital: PyMuPDF's table finder ----------------------------------------------------------------------

def _starts(values: list[float], tol: float = 1.0) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or v - out[-1] > tol:
            out.append(v)
    return out


def cell_text(words, box) -> str:
    """The words (PyMuPDF `get_text("words")` tuples) whose centre lies in `box`, in the text layer's order. (The
    finder's own `extract()` splits "1,204" into "1204" and "," on some fonts.)"""
    inside = [w for w in words if box[0] <= (w[0] + w[2]) / 2 <= box[2] and box[1] <= (w[1] + w[3]) / 2 <= box[3]]
    return " ".join(w[4] for w in sorted(inside, key=lambda w: (w[5], w[6], w[7])))


def column_edges(table) -> list[float]:
    """The x of each boundary between two of a found table's columns (its cells' left edges, the table's own left
    edge aside)."""
    starts = _starts([b[0] for r in table.rows for b in r.cells if b is not None])
    return starts[1:]


def split_at_edges(words, edges: Sequence[float], box: Box, chars_of) -> list:
    """The page's words with each word inside `box` that runs over a column edge cut there: the text layer can
    hold a cell's last glyph and the next cell's first as one word ("U코드◦" where "◦" opens the next cell). A cut
    falls only between two glyphs (a word that overflows its cell, the rule through a glyph, stays whole), and never
    before a lower-case letter that goes on a word (a spanning cell's word over its columns' edge).
    `chars_of(word)` gives the word's glyphs as (x0, x1, char); a word whose glyphs do not spell it stays whole."""
    out = []
    for w in words:
        cy = (w[1] + w[3]) / 2
        cuts = [x for x in edges if w[0] < x - 1 and w[2] > x + 1] if box[1] <= cy <= box[3] else []
        if not cuts:
            out.append(w)
            continue
        chars = sorted(chars_of(w))
        if "".join(c for _, _, c in chars).replace(" ", "") != w[4].replace(" ", ""):
            out.append(w)
            continue
        pieces: list[list] = [[]]
        for x0, x1, c in chars:
            prev = pieces[-1][-1][2] if pieces[-1] else ""
            inside_word = prev.isalpha() and c.isalpha() and c.islower()  # "Prot|eomics" under a spanning cell
            if pieces[-1] and not inside_word and any(pieces[-1][-1][1] <= x + 0.5 and x0 >= x - 0.5 for x in cuts):
                pieces.append([])
            pieces[-1].append((x0, x1, c))
        for k, piece in enumerate(p for p in pieces if p):
            text = "".join(c for _, _, c in piece).strip()
            if text:
                out.append((piece[0][0], w[1], piece[-1][1], w[3], text, w[5], w[6], w[7] + k / 10))
    return out


def from_finder(table, words) -> str:
    """A `pymupdf.table.Table` (+ its page's words) → HTML with its header row as `<th>` and spans from its merged
    cells."""
    boxes = [list(r.cells) for r in table.rows]
    xs = _starts([b[0] for row in boxes for b in row if b is not None])
    ys = _starts([b[1] for row in boxes for b in row if b is not None])
    out: list[list[Cell]] = []
    for r, row in enumerate(boxes):
        cells = []
        for c, b in enumerate(row):
            if b is None:
                continue
            colspan = max(1, sum(1 for x in xs if b[0] - 1 <= x < b[2] - 1))
            rowspan = max(1, sum(1 for y in ys if b[1] - 1 <= y < b[3] - 1))
            cells.append(Cell(cell_text(words, b), rowspan, colspan))
        out.append(cells)
    if _header_second_line(boxes, out, words):  # "State funded" over "legal aid": one header cell
        for k, cell in enumerate(out[1]):
            out[0][k].text = f"{out[0][k].text} {cell.text}".strip()
        del out[1], boxes[1]
    # the first row is the header, with the rows its tall cells reach down over ("Item" over two header rows)
    header_rows = max((c.rowspan for c in out[0]), default=0) if len(out) > 1 else 0
    names = external_header(table)
    if names:  # the column names stand above the ruled body (booktabs): they are the header row, cell by cell
        out.insert(0, [Cell(name, 1, 1) for name in names])
        header_rows = 1
    else:
        first = [c.text.strip() for c in out[0]] if out else []
        complete = len(out[0]) == width_of(out) and all(t and not NUMBER.match(t) for t in first) if out else False
        above = None if complete else header_above(table, words)  # its own first row names every column already
        if above:
            out[:0] = above[0]
            header_rows = len(above[0])
    out, header_rows = tidy_columns(out, header_rows)
    return html_table(out, header_rows)


def tidy_columns(rows: list[list[Cell]], header_rows: int) -> tuple[list[list[Cell]], int]:
    """A finder's grid as a reader sees the table (statements typeset with a column per "$" and spacer columns):
    columns empty in every row dropped; a column of lone currency signs joined to the figures on its right
    ("$" "178" → "$178"); a row of one label over the figure columns ("Year Ended", "(In millions)") spanning
    them; and the rows above the first row of figures are header rows. Tables with row spans are left as they are."""
    if not rows or any(c.rowspan > 1 for r in rows for c in r) or len(rows) < 2:
        return rows, header_rows
    width = max(sum(c.colspan for c in r) for r in rows)
    if any(sum(c.colspan for c in r) != width for r in rows):
        return rows, header_rows
    grid: list[list[Cell | None]] = []  # slot by slot: the cell starting there, None where a span covers it
    for r in rows:
        line: list[Cell | None] = []
        for c in r:
            line += [c] + [None] * (c.colspan - 1)
        grid.append(line)

    def label_row(g: list[Cell | None]) -> bool:  # one label over the figure columns, the stub cell empty
        return (len(g) >= 3 and all(c is not None and c.colspan == 1 for c in g) and not g[0].text.strip()
                and sum(1 for c in g[1:] if c.text.strip()) == 1)

    labels = {k for k, g in enumerate(grid) if label_row(g)}

    def lone(col: int, test, covered: bool = False) -> bool:
        """Is every slot of the column a one-column cell that is empty or passes `test` (with `covered`: or a slot
        a span from the left reaches over)?"""
        cells = [g[col] for k, g in enumerate(grid) if k not in labels]
        return all((c is None and covered) or (c is not None and c.colspan == 1
                                               and (not c.text.strip() or test(c.text.strip()))) for c in cells)

    for col in range(width - 1):  # "$" beside its figure
        if lone(col, _CURRENCY.match) and any(g[col].text.strip() for k, g in enumerate(grid) if k not in labels):
            for g in grid:
                sign, right = g[col], g[col + 1]
                if sign.text.strip() and right is not None and right.colspan == 1:
                    right.text, sign.text = sign.text.strip() + right.text.strip(), ""
    # empty in every row, or reached over by a span (a spacer column under a section row): dropped, spans shrink
    dropped = {col for col in range(1, width) if lone(col, lambda t: False, covered=True)}
    if len(dropped) >= width - 1:
        return rows, header_rows
    out = []
    for k, g in enumerate(grid):
        if k in labels:
            out.append([Cell(""), Cell(next(c.text for c in g[1:] if c.text.strip()), 1, width - len(dropped) - 1)])
            continue
        line = []
        for col, c in enumerate(g):
            if c is not None:
                kept = sum(1 for x in range(col, col + c.colspan) if x not in dropped)
                if kept:
                    line.append(Cell(c.text, 1, kept))
        out.append(line)
    figures = [k for k, line in enumerate(out) if any(NUMBER.match(c.text.strip()) and not _YEAR.match(c.text.strip())
                                                      for c in line[1:] if c.text.strip())]
    if figures and figures[0] > header_rows:
        header_rows = figures[0]
    return out, header_rows


def _header_second_line(boxes, out: list[list[Cell]], words) -> bool:
    """Is the finder's second row the second line of its first row's cells (an unruled header whose names take two
    lines)? The same cells, text only under first-row cells with text, an empty cell, and less than half a line
    between the two rows' words."""
    if len(out) < 3 or len(out[0]) != len(out[1]) or any(c.rowspan > 1 or c.colspan > 1 for c in out[0]):
        return False
    a, b = [x for x in boxes[0] if x is not None], [x for x in boxes[1] if x is not None]
    if any(abs(p[0] - q[0]) > 1 or abs(p[2] - q[2]) > 1 for p, q in zip(a, b)):
        return False
    filled = [bool(c.text) for c in out[1]]
    if all(filled) or not any(filled) or any(f and not out[0][k].text for k, f in enumerate(filled)):
        return False

    def lines(cells) -> list:
        return [w for w in words if any(c[0] <= (w[0] + w[2]) / 2 <= c[2] and c[1] <= (w[1] + w[3]) / 2 <= c[3]
                                        for c in cells)]

    top, low = lines(a), lines(b)
    if not top or not low:
        return False
    h = median(w[3] - w[1] for w in top + low)
    return min(w[1] for w in low) - max(w[3] for w in top) < 0.5 * h


def external_header(table) -> list[str]:
    """The column names PyMuPDF's finder found on the line above a table's ruled body (`header.external`), one per
    column; [] when the header is the table's own first row or the names do not line up with the columns."""
    header = getattr(table, "header", None)
    if header is None or not getattr(header, "external", False):
        return []
    names = [" ".join(str(n or "").split()) for n in (header.names or [])]
    if len(names) != table.col_count or sum(1 for n in names if n) < 2:
        return []
    # names that end as the table's own first row says are that row seen again (the finder's header box reached up
    # over it into the paragraph above): no header above the table
    first = [re.sub(r"\s+", "", str(c or "")) for c in (table.extract() or [[]])[0]]
    said = [re.sub(r"\s+", "", n) for n in names]
    repeats = sum(1 for n, c in zip(said, first) if c and n.endswith(c))
    return [] if repeats >= max(2, len([n for n in said if n]) // 2) else names


def header_above(table, words) -> tuple[list[list[Cell]], Box] | None:
    """The header rows standing just above a table the finder found without them (names set between two rules
    above the shaded body, or turned on their side): rows of words right above the table's top, walking up, each
    word under one column and words in different columns set well apart (a caption's words run on: it ends the
    walk). The row next to the body names at least half the columns (at least two); a row above it with fewer
    names is a group row, each of its names spanning the columns under it (as far to each side). Returns the
    rows of cells, top first, and their box; or None."""
    cols = _finder_columns(table)
    if len(cols) < 2:
        return None
    x0, top, x1 = table.bbox[0], table.bbox[1], table.bbox[2]
    body = [w for w in words if x0 <= (w[0] + w[2]) / 2 <= x1 and top <= (w[1] + w[3]) / 2 <= table.bbox[3]]
    if not body:
        return None
    h = median(min(w[3] - w[1], w[2] - w[0]) for w in body)  # the body's text height
    rows: list[list[str]] = []
    used: list = []
    floor = top + 1
    while len(rows) < 3:
        near = [w for w in words if x0 - 1 <= (w[0] + w[2]) / 2 <= x1 + 1 and w[3] <= floor]
        if not near:
            break
        bottom = max(w[3] for w in near)
        if floor - bottom > 2.5 * h:
            break
        row = sorted((w for w in near if w[3] >= bottom - 0.5 * h), key=lambda w: w[0])
        names: list[list[str]] = [[] for _ in cols]
        placed = []
        for w in row:
            k = next((i for i, (a, b) in enumerate(cols) if a - 1 <= (w[0] + w[2]) / 2 <= b + 1), None)
            if k is None:
                break
            names[k].append(w[4])
            placed.append((k, w))
        else:
            k = None
        if k is not None or any(k1 != k2 and 0 <= w2[0] - w1[2] < 0.8 * h
                                for (k1, w1), (k2, w2) in zip(placed, placed[1:])) \
                or _CAPTION.match(" ".join(w[4] for w in row)):
            break  # a word outside the columns, or a caption (running on across them, or "Table 2-1  Its name")
        named = sum(1 for n in names if n)
        if not rows and named < max(2, (len(cols) + 1) // 2):
            return None
        rows.insert(0, [" ".join(n) for n in names])
        used += row
        floor = min(w[1] for w in row) + 0.5 * h
    if not rows:
        return None
    out: list[list[Cell]] = []
    below = rows[-1]
    for names in rows[:-1]:  # group rows: each name over the columns on both sides of it that the row below names
        n, taken, starts = len(names), [False] * len(names), {}
        for k in (k for k in range(n) if names[k]):
            lo = hi = k
            while lo > 0 and hi + 1 < n and below[lo - 1] and below[hi + 1] and not names[lo - 1] \
                    and not names[hi + 1] and not taken[lo - 1] and not taken[hi + 1]:
                lo, hi = lo - 1, hi + 1
            taken[lo:hi + 1] = [True] * (hi - lo + 1)
            starts[lo] = (hi, names[k])
        line: list[Cell] = []
        c = 0
        while c < n:
            if c in starts:
                hi, name = starts[c]
                line.append(Cell(name, 1, hi - c + 1))
                c = hi + 1
            else:
                line.append(Cell(""))
                c += 1
        out.append(line)
    out.append([Cell(n) for n in below])
    box = (min(w[0] for w in used), min(w[1] for w in used), max(w[2] for w in used), max(w[3] for w in used))
    return out, box


_CAPTION = re.compile(r"^\s*(?:Table|Tab\.|Figure|Fig\.|Tableau|Tabelle|Tabla|表|图|圖)\s*[\dIVXLC]", re.IGNORECASE)


def width_of(rows: list[list[Cell]]) -> int:
    return max((sum(c.colspan for c in r) for r in rows), default=0)


def _finder_columns(table) -> list[tuple[float, float]]:
    """The x-ranges of a finder table's columns (from its row with the most cells)."""
    best = max((list(r.cells) for r in table.rows), key=lambda r: sum(c is not None for c in r), default=[])
    if not best or any(c is None for c in best):
        return []
    return [(float(c[0]), float(c[2])) for c in best]


# -- read pieces: columns inferred from x-positions ---------------------------------------------------------------

def join_currency(row: list[tuple[Box, str]]) -> list[tuple[Box, str]]:
    """A lone currency sign joins the piece to its right on the same row."""
    out: list[tuple[Box, str]] = []
    i = 0
    while i < len(row):
        box, text = row[i]
        if _CURRENCY.match(text.strip()) and i + 1 < len(row):
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
