"""A table block as a grid a person edits: cells with their text and spans, and how many rows are the header. Read
from the block's HTML (`Grid.from_html`, the `<table>` the engines and app.core.text.tables write) and written back as
HTML by the same writer (`to_html`, app.core.text.tables.html_table), so an edited table exports as any other.

Operations (each returns nothing and changes the grid; the window makes each one undo step): `set_text`,
`set_header_rows`, `merge` (a rectangle becomes one cell, its texts joined), `split` (a merged cell becomes single
cells again), `insert_row` / `remove_row`, `insert_column` / `remove_column`. `continue_with(other)` appends a table
that continues on the next page (its header row dropped when it repeats this one's). `rows()` is the grid as plain
text rows, the cells the CSV and XLSX files hold (`write_csv`, `write_xlsx`; a merged cell's text in its first slot).

What must never live here: Qt, the session (the window writes the HTML back as the block's edit).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from app.core.text.tables import Cell as HtmlCell
from app.core.text.tables import html_table


@dataclass
class Cell:
    row: int
    col: int
    text: str = ""
    rowspan: int = 1
    colspan: int = 1

    def covers(self, r: int, c: int) -> bool:
        return self.row <= r < self.row + self.rowspan and self.col <= c < self.col + self.colspan


class _TableParser(HTMLParser):
    """The first `<table>`'s rows of (text, rowspan, colspan, is_header)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, int, int, bool]]] = []
        self.depth = 0
        self.done = False
        self._cell: list | None = None

    def handle_starttag(self, tag, attrs):
        if self.done:
            return
        a = dict(attrs)
        if tag == "table":
            self.depth += 1
        elif self.depth == 1 and tag == "tr":
            self.rows.append([])
        elif self.depth == 1 and tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            span = lambda k: max(1, int(a[k])) if str(a.get(k, "")).isdigit() else 1  # noqa: E731
            self._cell = ["", span("rowspan"), span("colspan"), tag == "th"]
        elif self._cell is not None and tag == "br":
            self._cell[0] += "\n"

    def handle_endtag(self, tag):
        if self.done:
            return
        if tag == "table":
            self.depth -= 1
            self.done = self.depth == 0
        elif self.depth == 1 and tag in ("td", "th") and self._cell is not None:
            text, rs, cs, th = self._cell
            self.rows[-1].append((" ".join(text.split()), rs, cs, th))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data


class Grid:
    def __init__(self, n_rows: int = 1, n_cols: int = 1, header_rows: int = 0) -> None:
        self.n_rows, self.n_cols, self.header_rows = n_rows, n_cols, header_rows
        self.cells: list[Cell] = [Cell(r, c) for r in range(n_rows) for c in range(n_cols)]

    # --- reading and writing -----------------------------------------------------------------------------------

    @classmethod
    def from_html(cls, html: str) -> "Grid | None":
        """The grid of the first `<table>` in `html`; None when there is none."""
        parser = _TableParser()
        parser.feed(html or "")
        rows = [r for r in parser.rows if r]
        if not rows:
            return None
        taken: set[tuple[int, int]] = set()
        cells: list[Cell] = []
        n_cols = 0
        for r, row in enumerate(rows):
            c = 0
            for text, rs, cs, _th in row:
                while (r, c) in taken:
                    c += 1
                rs = min(rs, len(rows) - r)
                cells.append(Cell(r, c, text, rs, cs))
                taken.update((r + i, c + j) for i in range(rs) for j in range(cs))
                c += cs
            n_cols = max(n_cols, c, max((cc for rr, cc in taken if rr == r), default=-1) + 1)
        grid = cls(len(rows), n_cols)
        grid.cells = cells
        grid.header_rows = 0
        for row in rows:  # the leading rows of header cells
            if row and all(th for *_x, th in row):
                grid.header_rows += 1
            else:
                break
        grid._fill()
        return grid

    def _fill(self) -> None:
        """Every slot held by exactly one cell (missing ones become empty cells)."""
        held = {(r, c) for cell in self.cells for r in range(cell.row, cell.row + cell.rowspan)
                for c in range(cell.col, cell.col + cell.colspan)}
        self.cells += [Cell(r, c) for r in range(self.n_rows) for c in range(self.n_cols) if (r, c) not in held]
        self.cells.sort(key=lambda cell: (cell.row, cell.col))

    def cell_at(self, r: int, c: int) -> Cell:
        return next(cell for cell in self.cells if cell.covers(r, c))

    def to_html(self) -> str:
        rows = [[HtmlCell(cell.text, cell.rowspan, cell.colspan) for cell in self.cells if cell.row == r]
                for r in range(self.n_rows)]
        return html_table(rows, self.header_rows)

    def rows(self) -> list[list[str]]:
        """The grid as text rows (a merged cell's text in its first slot, the slots it covers empty)."""
        out = [[""] * self.n_cols for _ in range(self.n_rows)]
        for cell in self.cells:
            out[cell.row][cell.col] = cell.text
        return out

    # --- edits ---------------------------------------------------------------------------------------------------

    def set_text(self, r: int, c: int, text: str) -> None:
        self.cell_at(r, c).text = text

    def set_header_rows(self, n: int) -> None:
        self.header_rows = max(0, min(self.n_rows, int(n)))

    def merge(self, r0: int, c0: int, r1: int, c1: int) -> bool:
        """The rectangle of slots becomes one cell (its texts joined in reading order); False when a cell reaches
        out of the rectangle (the merge would cut it)."""
        r0, r1 = sorted((r0, r1))
        c0, c1 = sorted((c0, c1))
        inside = [cell for cell in self.cells if r0 <= cell.row <= r1 and c0 <= cell.col <= c1]
        if any(cell.row + cell.rowspan - 1 > r1 or cell.col + cell.colspan - 1 > c1 for cell in inside) or any(
                cell not in inside and any(cell.covers(r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1))
                for cell in self.cells) or len(inside) < 2:
            return False
        text = " ".join(cell.text for cell in inside if cell.text)
        self.cells = [cell for cell in self.cells if cell not in inside] + [
            Cell(r0, c0, text, r1 - r0 + 1, c1 - c0 + 1)]
        self.cells.sort(key=lambda cell: (cell.row, cell.col))
        return True

    def split(self, r: int, c: int) -> bool:
        """A merged cell becomes single cells (its text stays in the first)."""
        cell = self.cell_at(r, c)
        if cell.rowspan == 1 and cell.colspan == 1:
            return False
        cell.rowspan = cell.colspan = 1
        self._fill()
        return True

    def insert_row(self, at: int) -> None:
        """An empty row before row `at` (`n_rows`: at the end); a cell spanning over the gap grows."""
        at = max(0, min(self.n_rows, at))
        for cell in self.cells:
            if cell.row >= at:
                cell.row += 1
            elif cell.row + cell.rowspan > at:
                cell.rowspan += 1
        self.n_rows += 1
        if at < self.header_rows:
            self.header_rows += 1
        self._fill()

    def remove_row(self, r: int) -> bool:
        if self.n_rows <= 1 or not 0 <= r < self.n_rows:
            return False
        for cell in list(self.cells):
            if cell.row == r and cell.rowspan == 1:
                self.cells.remove(cell)
            elif cell.covers(r, cell.col):
                cell.rowspan -= 1
            elif cell.row > r:
                cell.row -= 1
        self.n_rows -= 1
        if r < self.header_rows:
            self.header_rows -= 1
        self._fill()
        return True

    def insert_column(self, at: int) -> None:
        at = max(0, min(self.n_cols, at))
        for cell in self.cells:
            if cell.col >= at:
                cell.col += 1
            elif cell.col + cell.colspan > at:
                cell.colspan += 1
        self.n_cols += 1
        self._fill()

    def remove_column(self, c: int) -> bool:
        if self.n_cols <= 1 or not 0 <= c < self.n_cols:
            return False
        for cell in list(self.cells):
            if cell.col == c and cell.colspan == 1:
                self.cells.remove(cell)
            elif cell.covers(cell.row, c):
                cell.colspan -= 1
            elif cell.col > c:
                cell.col -= 1
        self.n_cols -= 1
        self._fill()
        return True

    def continue_with(self, other: "Grid") -> None:
        """Append `other` (the same table, continued on the next page): its header rows go when they repeat this
        table's; a narrower or wider table is padded to the wider of the two."""
        skip = other.header_rows if other.header_rows and other.rows()[:other.header_rows] == \
            self.rows()[:other.header_rows] else 0
        if self.n_cols < other.n_cols:
            for _ in range(other.n_cols - self.n_cols):
                self.insert_column(self.n_cols)
        base = self.n_rows
        for cell in other.cells:
            if cell.row >= skip:
                self.cells.append(Cell(base + cell.row - skip, cell.col, cell.text, cell.rowspan,
                                       min(cell.colspan, self.n_cols - cell.col)))
        self.n_rows = base + other.n_rows - skip
        self._fill()


def write_csv(grid: Grid, path: str | Path) -> Path:
    path = Path(path)
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(grid.rows())
    return path


def write_xlsx(grid: Grid, path: str | Path) -> Path:
    """The grid as a one-sheet workbook: header rows bold, merged cells merged."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    path = Path(path)
    book = Workbook()
    sheet = book.active
    sheet.title = "Table"
    for cell in grid.cells:
        target = sheet.cell(row=cell.row + 1, column=cell.col + 1, value=cell.text or None)
        if cell.row < grid.header_rows:
            target.font = Font(bold=True)
        if cell.rowspan > 1 or cell.colspan > 1:
            sheet.merge_cells(start_row=cell.row + 1, start_column=cell.col + 1,
                              end_row=cell.row + cell.rowspan, end_column=cell.col + cell.colspan)
    book.save(path)
    return path
