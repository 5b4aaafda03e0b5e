"""The table grid editor: double-click a table region (or G on the page) to edit its block as a grid instead of HTML
tags. Type in a cell; set how many rows are the header; merge the selected cells (Ctrl+M) or split one (Ctrl+Shift+M);
add a row below (Ctrl+Alt+Down) or a column right (Ctrl+Alt+Right), remove them (Ctrl+Alt+Up / Ctrl+Alt+Left);
"Continues on next page" joins the first table of the next page onto this one (its repeated header dropped) so every
export writes one table; "Save as CSV / XLSX" writes the cells the exports hold. Every change writes the block's HTML
back (app.core.review.table_grid) and is one step on the window's undo stack.

What must never live here: parsing or writing tables (core's Grid does), the session's rules for edits.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QColor, QFont, QKeySequence
from PySide6.QtWidgets import (QDialog, QFileDialog, QLabel, QSpinBox, QTableWidget, QTableWidgetItem, QToolBar,
                               QVBoxLayout)

from app.core.review.table_grid import Grid, write_csv, write_xlsx
from app.gui.review_flow import TextEditCommand

HEADER_BRUSH = "#eef3fb"


def next_table(work, region_id: str) -> str:
    """The first table block of the page after `region_id`'s ("" when there is none)."""
    page = work.blocks[region_id].region.page
    return next((b.id for b in work.layout_blocks(page + 1)
                 if b.region.task == "table" and Grid.from_html(b.markdown) is not None), "")


class TableEditor(QDialog):
    def __init__(self, window, region_id: str) -> None:
        super().__init__(window)
        self.window, self.region_id = window, region_id
        self.work = window.work
        self.setObjectName("table_editor")
        self.setWindowTitle(f"Table {region_id}")
        self.resize(1180, 480)
        self.grid = Grid.from_html(self.block.markdown) or Grid(2, 2, 1)
        self.table = QTableWidget()
        self.table.setObjectName("table_grid")
        self.table.itemChanged.connect(self._cell_edited)
        self.header = QSpinBox()
        self.header.setObjectName("header_rows")
        self.header.setToolTip("How many rows are the table's header")
        self.header.valueChanged.connect(lambda n: self._change(lambda: self.grid.set_header_rows(n),
                                                                f"Header rows of {region_id}: {n}"))
        bar = QToolBar()
        self.actions_: dict[str, QAction] = {}
        label = QLabel("&Header rows:")
        label.setBuddy(self.header)
        bar.addWidget(label)
        bar.addWidget(self.header)
        bar.addSeparator()
        for name, title, key, slot in (
                ("merge", "Merge cells", "Ctrl+M", self.merge), ("split", "Split cell", "Ctrl+Shift+M", self.split),
                ("add_row", "Add row below", "Ctrl+Alt+Down", self.add_row),
                ("remove_row", "Remove row", "Ctrl+Alt+Up", self.remove_row),
                ("add_column", "Add column right", "Ctrl+Alt+Right", self.add_column),
                ("remove_column", "Remove column", "Ctrl+Alt+Left", self.remove_column),
                ("join_next", "Continues on next page", "Ctrl+J", self.join_next),
                ("save_csv", "Save as CSV…", "", lambda: self.save_as("csv")),
                ("save_xlsx", "Save as XLSX…", "", lambda: self.save_as("xlsx"))):
            action = QAction(title, self)
            if key:
                action.setShortcut(QKeySequence(key))
                action.setToolTip(f"{title} ({key})")
            action.triggered.connect(lambda _c=False, s=slot: s())
            bar.addAction(action)
            self.actions_[name] = action
        self.actions_["join_next"].setEnabled(bool(next_table(self.work, region_id)))
        layout = QVBoxLayout(self)
        layout.addWidget(bar)
        layout.addWidget(self.table, 1)
        self.status = QLabel("Type in a cell; every change is written to the block and can be undone (Ctrl+Z)")
        layout.addWidget(self.status)
        window.flow.undo_stack.indexChanged.connect(self._undone)
        self.show_grid()

    @property
    def block(self):
        return self.work.blocks[self.region_id]

    # --- showing ---------------------------------------------------------------------------------------------

    def show_grid(self) -> None:
        g = self.grid
        self.table.blockSignals(True)
        self.table.clearSpans()
        self.table.setRowCount(g.n_rows)
        self.table.setColumnCount(g.n_cols)
        bold = QFont()
        bold.setBold(True)
        for r in range(g.n_rows):
            for c in range(g.n_cols):
                self.table.setItem(r, c, QTableWidgetItem(""))
        for cell in g.cells:
            item = QTableWidgetItem(cell.text)
            if cell.row < g.header_rows:
                item.setFont(bold)
                item.setBackground(QColor(HEADER_BRUSH))
            self.table.setItem(cell.row, cell.col, item)
            if cell.rowspan > 1 or cell.colspan > 1:
                self.table.setSpan(cell.row, cell.col, cell.rowspan, cell.colspan)
        self.header.blockSignals(True)
        self.header.setRange(0, g.n_rows)
        self.header.setValue(g.header_rows)
        self.header.blockSignals(False)
        self.table.blockSignals(False)

    def _undone(self, _index: int) -> None:
        """An undo or redo may have changed the block: show it as it is now."""
        if self.region_id not in self.work.blocks:
            self.close()
            return
        if Grid.from_html(self.block.markdown) is not None and self.block.markdown != self.grid.to_html():
            self.grid = Grid.from_html(self.block.markdown)
            self.show_grid()

    # --- changes: each one is written back and is one undo step -------------------------------------------------------

    def _write(self, writes: list[tuple[str, str]], description: str) -> None:
        flow, work = self.window.flow, self.work
        stack = flow.undo_stack
        stack.beginMacro(description)  # one undo step, however many blocks it writes
        for rid, after in writes:
            before = work.blocks[rid].markdown
            if before != after:
                flow.set_text(work, rid, after)
                stack.push(TextEditCommand(flow, work, rid, before, after))
        stack.endMacro()
        self.status.setText(description)

    def _change(self, operation, description: str) -> bool:
        if operation() is False:
            self.status.setText(f"Not possible: {description.lower()}")
            return False
        self._write([(self.region_id, self.grid.to_html())], description)
        self.show_grid()
        return True

    def _cell_edited(self, item: QTableWidgetItem) -> None:
        r, c, text = item.row(), item.column(), item.text()
        self._change(lambda: self.grid.set_text(r, c, text), f"Cell {r + 1},{c + 1} of {self.region_id}")

    def _selection(self) -> tuple[int, int, int, int] | None:
        ranges = self.table.selectedRanges()
        if not ranges:
            r, c = self.table.currentRow(), self.table.currentColumn()
            return (r, c, r, c) if r >= 0 and c >= 0 else None
        rows = [x for s in ranges for x in (s.topRow(), s.bottomRow())]
        cols = [x for s in ranges for x in (s.leftColumn(), s.rightColumn())]
        return min(rows), min(cols), max(rows), max(cols)

    def merge(self) -> None:
        sel = self._selection()
        if sel is not None:
            self._change(lambda: self.grid.merge(*sel), f"Merge cells of {self.region_id}")

    def split(self) -> None:
        sel = self._selection()
        if sel is not None:
            self._change(lambda: self.grid.split(sel[0], sel[1]), f"Split a cell of {self.region_id}")

    def add_row(self) -> None:
        sel = self._selection()
        at = sel[2] + 1 if sel else self.grid.n_rows
        self._change(lambda: self.grid.insert_row(at), f"Add a row to {self.region_id}")

    def remove_row(self) -> None:
        sel = self._selection()
        if sel is not None:
            self._change(lambda: self.grid.remove_row(sel[0]), f"Remove a row of {self.region_id}")

    def add_column(self) -> None:
        sel = self._selection()
        at = sel[3] + 1 if sel else self.grid.n_cols
        self._change(lambda: self.grid.insert_column(at), f"Add a column to {self.region_id}")

    def remove_column(self) -> None:
        sel = self._selection()
        if sel is not None:
            self._change(lambda: self.grid.remove_column(sel[1]), f"Remove a column of {self.region_id}")

    def join_next(self) -> None:
        """The first table of the next page continues this one: joined here, its block emptied (one undo step)."""
        other = next_table(self.work, self.region_id)
        if not other:
            self.status.setText("There is no table on the next page")
            return
        self.grid.continue_with(Grid.from_html(self.work.blocks[other].markdown))
        self._write([(self.region_id, self.grid.to_html()), (other, "")],
                    f"Join {other} onto {self.region_id} (continued on the next page)")
        self.actions_["join_next"].setEnabled(bool(next_table(self.work, self.region_id)))
        self.show_grid()

    def save_as(self, kind: str, path: str | Path | None = None) -> Path | None:
        """The table as a CSV or XLSX file (asks where when `path` is not given)."""
        if path is None:
            start = str(Path(self.work.path).with_name(f"{Path(self.work.path).stem}-{self.region_id}.{kind}"))
            path, _ = QFileDialog.getSaveFileName(self, f"Save the table as {kind.upper()}", start,
                                                  f"{kind.upper()} (*.{kind})")
            if not path:
                return None
        try:
            out = (write_csv if kind == "csv" else write_xlsx)(self.grid, path)
        except OSError as exc:
            self.status.setText(f"Cannot write {path}: {exc.strerror or exc}")
            return None
        self.status.setText(f"Saved {out}")
        return out


class TableEditing:
    """Opens the grid editor for table regions (double-click, or G on the page)."""

    def __init__(self, window) -> None:
        self.window = window
        self.editor: TableEditor | None = None
        window.page_view.region_activated.connect(self.open)

    def open(self, region_id: str = "") -> TableEditor | None:
        w = self.window
        rid = region_id or w.flow.selected_id()
        work = w.work
        if work is None or rid not in work.blocks or work.blocks[rid].region.task != "table":
            if not region_id:
                w.statusBar().showMessage("Select a table region to edit it as a grid", 3000)
            return None
        w.editor.flush_edits()
        if self.editor is not None:
            self.editor.close()
        self.editor = TableEditor(w, rid)
        self.editor.show()
        return self.editor

    def open_selected(self) -> None:
        self.open("")
