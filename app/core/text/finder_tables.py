"""A born-digital table found by PyMuPDF's table finder, as HTML (`from_finder`): its cells, merged cells (a `None`
cell is covered by a neighbour whose box reaches over it) and its header — the first row and the rows its cells span,
or the column names standing above its ruled body (`external_header`, `header_above`: stacked rows, a group row's
names spanning their columns). A text-layer word over a column's edge is cut there (`split_at_edges`), and a
statement's grid is tidied as a reader sees it (`tidy_columns`: "$" columns join their figures, spacer columns go).

What must never live here: OCR, layout, tables read from pieces (app.core.text.tables).
"""
from __future__ import annotations

import re
from statistics import median
from typing import Sequence

from app.core.text.tables import CURRENCY, NUMBER, Box, Cell, html_table

_YEAR = re.compile(r"^(?:19|20)\d\d$")  # a column's year is a name, not a figure


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
    names = external_header(table, words)
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
        if lone(col, CURRENCY.match) and any(g[col].text.strip() for k, g in enumerate(grid) if k not in labels):
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


def external_header(table, words=None) -> list[str]:
    """The column names PyMuPDF's finder found on the line above a table's ruled body (`header.external`), one per
    column; [] when the header is the table's own first row or the names do not line up with the columns. With the
    page's `words`: [] at once when the table's first row names every column itself (no figure, no empty or
    spanned cell) — the finder's header analysis reads the page around the table, a quarter second a table."""
    if words is not None:
        first = list(table.rows[0].cells) if table.rows else []
        texts = [cell_text(words, b) for b in first if b is not None]
        if first and len(texts) == len(first) and all(t.strip() and not NUMBER.match(t.strip()) for t in texts):
            return []
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


