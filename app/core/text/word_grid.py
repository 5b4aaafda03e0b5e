"""Borderless tables from word alignment: a block of text-layer words whose rows line up in columns becomes a
table.

    words = page_words(page)                 # (box, text, bold, font, size) of a born-digital page's words
    html = word_table(words_in(words, box))  # `<table>` when they line up in a grid, else None

A row is the words whose vertical centres agree; a row falls into pieces where two words stand further apart
than a column gap (COLUMN_GAP of the line height; the space between words of a line is a third of it or less).
The block is a table when x-ranges that no piece of the rows of MIN_COLUMNS pieces crosses (the gutters
between columns; one such row in CROSSING_ROWS may run a spanning cell over one) cut it into at least
MIN_COLUMNS columns, and at least MIN_ROWS rows have a piece in MIN_COLUMNS of them or more, and
those rows are most of the block (a row of one short piece, a group's label such as "(a)", aside). So the
gutters are the same over the rows, not merely wide gaps in some line. What is not a table, and why the tests
above do not take it:

- a paragraph: its lines are one piece each (no gap of a column's width between words);
- a list: its markers (1., a), •) are no column of cells, so a marker, its text and a note beside it are two;
- two (or three) columns of prose: the pieces are long lines of words; a table needs at least two columns of
  short cells (SHORT_WORDS words or fewer in most of their rows). Two columns are a table only as labels and
  figures (`_labels_and_figures`: a number on the right of every row but the column names, a wide gutter).
  Two rows are a table only as column names over one row of figures (`_names_and_figures`: MIN_COLUMNS pieces
  in each, every name over its figure).

A table of contents (or a list of figures) is a table of two columns, the entry and its page, when most of its
lines (MIN_ROWS at least) end in a page number after a dot leader (`contents_table`).

The header: the leading rows set apart by their type (bold, or another font or size than the rows below), or
a first row of words over columns that hold numbers below; otherwise every row is a body row. A cell centred
over two columns spans them (app.core.text.tables.from_rows).

What must never live here: the layout's boxes (app.core.layout.page_boxes decides which blocks are looked at),
PyMuPDF's table finder (app.core.text.tables.from_finder), OCR."""
from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median

from app.core.text.tables import NUMBER, Box, Cell, from_rows, html_table

COLUMN_GAP = 0.8  # a gap of this share of the line height or more between two words parts two cells
MIN_COLUMNS = 3
MIN_ROWS = 3
CROSSING_ROWS = 8  # one row in this many may run a cell over a gutter between columns (a spanning cell)
FULL_SHARE = 0.6  # ... and the rows that fill MIN_COLUMNS columns are this share of the block's rows at least
FIGURE_ROWS = 4  # two columns, labels and their figures, are a table over this many rows ...
FIGURE_GUTTER = 1.5  # ... with a gutter this many line heights wide between them
SHORT_WORDS = 4  # a cell of a table's short column has at most this many words ...
SHORT_COLUMNS = 2  # ... in 80 % of its rows, and a table has this many such columns at least
BOLD = 16  # PyMuPDF's span flag for a bold font
CONTENTS_SHARE = 0.6  # a table of contents: this share of its lines end in a leader and a page number
_PAGE_REF = re.compile(r"^(?:\d{1,4}|[ivxlcdm]{1,7})$", re.IGNORECASE)  # a page number, arabic or roman
_LEADER = re.compile(r"^[.·…]+$")  # a word of a dot leader (". . . ." is a word a dot)
_GLUED_LEADER = re.compile(r"\s*[.·…]{3,}$")  # a leader run into the entry's last word
_MARKER = re.compile(r"^(?:\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,5})[.)]|[•●◦▪‣∙·*–-])$")


@dataclass(frozen=True)
class Word:
    box: Box
    text: str
    bold: bool = False
    font: str = ""
    size: float = 0.0


def page_words(page, skip_fonts: tuple[str, ...] = ()) -> list[Word]:
    """A PyMuPDF page's words (get_text("words")), each with the font of the span it lies in (bold flag,
    name, size); words in a span of `skip_fonts` (an OCR hook's inserted text) are left out. One text page
    serves both readings, so a word's block and line numbers are those of its line's spans."""
    import pymupdf

    textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS)  # no images: a scan's page stays cheap
    blocks = page.get_text("dict", textpage=textpage).get("blocks", [])
    out = []
    for x0, y0, x1, y1, text, block, line, _ in page.get_text("words", textpage=textpage):
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        try:
            spans = blocks[block]["lines"][line]["spans"]
        except (IndexError, KeyError):
            spans = []
        span = next((s for s in spans if s["bbox"][0] - 0.5 <= cx <= s["bbox"][2] + 0.5
                     and s["bbox"][1] - 0.5 <= cy <= s["bbox"][3] + 0.5), spans[0] if spans else None)
        font = str(span.get("font", "")) if span else ""
        if any(font.startswith(f) for f in skip_fonts):
            continue
        bold = bool(span and (int(span.get("flags", 0)) & BOLD or "bold" in font.lower()))
        size = float(span.get("size", 0)) if span else 0.0
        out.append(Word((x0, y0, x1, y1), text, bold, font.split("+")[-1], size))
    return out


def words_in(words: list[Word], box, min_inside: float = 0.5) -> list[Word]:
    """The words with at least `min_inside` of their box inside `box`."""
    def inside(b) -> float:
        w = max(0.0, min(b[2], box[2]) - max(b[0], box[0]))
        h = max(0.0, min(b[3], box[3]) - max(b[1], box[1]))
        return w * h / max(1e-9, (b[2] - b[0]) * (b[3] - b[1]))
    return [w for w in words if inside(w.box) >= min_inside]


def _rows(words: list[Word]) -> list[list[Word]]:
    """Words grouped into rows by their vertical centres, top to bottom, each row left to right."""
    rows: list[list[Word]] = []
    for w in sorted(words, key=lambda w: (w.box[1] + w.box[3]) / 2):
        mid, h = (w.box[1] + w.box[3]) / 2, w.box[3] - w.box[1]
        if rows:
            last = rows[-1]
            centre = sum((v.box[1] + v.box[3]) / 2 for v in last) / len(last)
            if abs(mid - centre) <= 0.4 * max(h, median(v.box[3] - v.box[1] for v in last)):
                last.append(w)
                continue
        rows.append([w])
    return [sorted(r, key=lambda w: w.box[0]) for r in rows]


def _pieces(row: list[Word], gap: float) -> list[list[Word]]:
    out: list[list[Word]] = [[row[0]]]
    for w in row[1:]:
        if w.box[0] - out[-1][-1].box[2] >= gap:
            out.append([w])
        else:
            out[-1].append(w)
    return out


def _extent(piece: list[Word]) -> tuple[float, float]:
    return min(w.box[0] for w in piece), max(w.box[2] for w in piece)


def _gutters(rows: list[list[list[Word]]], crossing: int = 0) -> list[tuple[float, float]]:
    """The x-ranges between the pieces that at most `crossing` of these rows reach into (a cell that spans
    columns in a row or two closes no gutter), left to right."""
    extents = [_extent(p) for r in rows for p in r]
    events = sorted([(a, 1) for a, _ in extents] + [(b, -1) for _, b in extents])
    out: list[tuple[float, float]] = []
    depth, opened = 0, None
    for x, step in events:
        depth += step
        if depth <= crossing and step < 0 and opened is None:
            opened = x
        elif depth > crossing and opened is not None:
            if x > opened:
                out.append((opened, x))
            opened = None
    return out


def grid(words: list[Word]) -> tuple[list[list[list[Word]]], int] | None:
    """The block's rows of pieces and its column count when its words line up in a table (the tests of the
    module's docstring); None when they do not."""
    if len(words) < 2 * MIN_COLUMNS:
        return None
    line_h = median(w.box[3] - w.box[1] for w in words)
    rows = [_pieces(r, COLUMN_GAP * line_h) for r in _rows(words)]
    if len(rows) == 2 and _names_and_figures(rows):
        return rows, len(rows[0])
    if len(words) < 2 * FIGURE_ROWS or len(rows) < MIN_ROWS:
        return None
    wide = [r for r in rows if len(r) >= MIN_COLUMNS]  # the gutters come from these (a cell over two columns
    cuts = [(a + b) / 2 for a, b in _gutters(wide, len(wide) // CROSSING_ROWS)]  # elsewhere closes none)
    columns = len(cuts) + 1
    if len(wide) < MIN_ROWS or columns < MIN_COLUMNS:
        return (rows, 2) if _labels_and_figures(rows, line_h) else None

    def column(piece) -> int:
        return sum(1 for c in cuts if c < _extent(piece)[0])

    first = [" ".join(w.text for w in p) for r in rows for p in r if column(p) == 0]
    if first and all(_MARKER.match(t) for t in first):  # a list's markers are not a column of cells
        columns -= 1
        if columns < MIN_COLUMNS:
            return None
    filled = [len({column(p) for p in r}) for r in rows]
    full = sum(1 for f in filled if f >= MIN_COLUMNS)
    labels = sum(1 for r in rows if len(r) == 1 and len(r[0]) <= SHORT_WORDS)  # "(a)": a group's label row
    if full < MIN_ROWS or full < FULL_SHARE * (len(rows) - labels):
        return None
    cells: dict[int, list[int]] = {}
    for r in rows:
        for p in r:
            cells.setdefault(column(p), []).append(len(p))
    short = sum(1 for sizes in cells.values() if sum(n <= SHORT_WORDS for n in sizes) >= 0.8 * len(sizes))
    if short < min(SHORT_COLUMNS, columns):
        return None
    return rows, columns


def _looks_numeric(text: str) -> bool:
    return bool(NUMBER.match(text.strip()))


def _names_and_figures(rows: list[list[list[Word]]]) -> bool:
    """Two rows are a table when they are column names and one row of figures under them: MIN_COLUMNS pieces or
    more in each, as many in both, each name over its figure (one gutter between every two columns, through both
    rows), the figures all numbers but one (a row's label) and the names not."""
    head, body = rows
    if len(head) < MIN_COLUMNS or len(head) != len(body) or len(_gutters(rows)) != len(head) - 1:
        return False
    figures = sum(_looks_numeric(" ".join(w.text for w in p)) for p in body)
    names = sum(_looks_numeric(" ".join(w.text for w in p)) for p in head)
    return figures >= len(body) - 1 and names == 0


def _labels_and_figures(rows: list[list[list[Word]]], line_h: float) -> bool:
    """Two columns are a table too when they are labels and figures: FIGURE_ROWS rows or more (most of the
    block) of two pieces a wide gutter apart (FIGURE_GUTTER line heights, the same for all of them), the right
    one a number in all but the first (the column names)."""
    pairs = [r for r in rows if len(r) == 2]
    if len(pairs) < FIGURE_ROWS or len(pairs) < FULL_SHARE * len(rows):
        return False
    gutters = _gutters(pairs)
    if len(gutters) != 1 or gutters[0][1] - gutters[0][0] < FIGURE_GUTTER * line_h:
        return False
    figures = [_looks_numeric(" ".join(w.text for w in r[1])) for r in pairs]
    labels = [" ".join(w.text for w in r[0]) for r in pairs]
    return all(figures[1:]) and not all(_MARKER.match(t) or _looks_numeric(t) for t in labels)


def _set_apart(head: list[Word], body: list[Word]) -> bool:
    """Is `head` set in another type than `body`: bold over a body that is not, another font, another size?"""
    if not head or not body:
        return False
    if sum(w.bold for w in head) >= 0.8 * len(head) and sum(w.bold for w in body) < 0.5 * len(body):
        return True
    fonts, size = {w.font for w in body}, median(w.size for w in body)
    return all(w.font and w.font not in fonts for w in head) or bool(
        size and all(abs(w.size - size) > 0.1 * size for w in head))


def header_rows(rows: list[list[list[Word]]]) -> int:
    """How many leading rows are the table's header: those set apart by their type from the rest (bold,
    another font or size; at most half the rows), else 1 when the first row is all words over columns that
    hold numbers in the rows below, else 0."""
    words = [[w for p in r for w in p] for r in rows]
    for n in range(min(len(rows) // 2, 3), 0, -1):
        head = [w for r in words[:n] for w in r]
        if _set_apart(head, [w for r in words[n:] for w in r]) and _set_apart(words[n - 1], words[n]):
            return n
    texts = [" ".join(w.text for w in p) for p in rows[0]]
    numeric_below = sum(_looks_numeric(" ".join(w.text for w in p)) for r in rows[1:] for p in r)
    if not any(_looks_numeric(t) for t in texts) and numeric_below >= len(rows) - 1:
        return 1
    return 0


def _contents_line(row: list[Word]) -> tuple[str, str] | None:
    """(entry with its leader, as the page writes it; page) of a line that ends in a page number after a dot leader
    of three dots or more; None for any other line."""
    if len(row) < 2 or not _PAGE_REF.match(row[-1].text):
        return None
    k, dots = len(row) - 1, 0
    while k > 0 and _LEADER.match(row[k - 1].text):
        k -= 1
        dots += len(row[k].text)
    if k and _GLUED_LEADER.search(row[k - 1].text):
        dots += 3
    return (" ".join(w.text for w in row[:-1]), row[-1].text) if k and dots >= 3 else None


def contents_table(words: list[Word]) -> str | None:
    """A table of contents as a table (entry | page) when most of its lines, MIN_ROWS at least, end in a page
    number after a dot leader; a line without one (a part's title, an entry's first line) keeps its text with an
    empty page cell. None for any other block."""
    rows = _rows(words)
    lines = [_contents_line(r) for r in rows]
    found = sum(1 for x in lines if x is not None)
    if found < MIN_ROWS or found < CONTENTS_SHARE * len(rows):
        return None
    return html_table([[Cell(x[0]), Cell(x[1])] if x is not None else [Cell(" ".join(w.text for w in r)), Cell("")]
                       for r, x in zip(rows, lines)])


def word_table(words: list[Word]) -> str | None:
    """HTML of the table the words form (columns from their alignment: app.core.text.tables.from_rows, so an
    empty cell stays in place and a cell centred over two columns spans them; a table of contents as entry and
    page: `contents_table`); None when they form none."""
    contents = contents_table(words)
    if contents is not None:
        return contents
    found = grid(words)
    if found is None:
        return None
    rows, _ = found
    pieces = [[((*_extent(p)[:1], min(w.box[1] for w in p), _extent(p)[1], max(w.box[3] for w in p)),
                " ".join(w.text for w in p)) for p in r] for r in rows]
    return from_rows(pieces, header_rows=header_rows(rows))
