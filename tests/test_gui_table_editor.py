"""The table grid editor in the real window (offscreen, classic OCR on a two-page table): double-clicking the table
opens it; a typed cell, a merge, a new row and a header change each write the expected HTML back to the block and are
one undo step each; "Continues on next page" joins the next page's table (its repeated header once) and every export
then holds one table; Save as CSV / XLSX write the same cells. Screenshot: tests/artifacts/table_grid_editor.png."""
from __future__ import annotations

import csv
import json

import pymupdf
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTableWidgetSelectionRange

from app.core.document.sample_documents import _draw_table

HEADER = ["Item", "Count", "Price"]
FIRST = [["Apples", "12", "3.50"], ["Pears", "7", "2.10"]]
SECOND = [["Plums", "30", "4.00"], ["Figs", "5", "6.25"]]


def two_page_table(path):
    doc = pymupdf.open()
    for rows, title in ((FIRST, "Stock list"), (SECOND, "")):
        page = doc.new_page(width=595, height=842)
        if title:
            page.insert_text((60, 80), title, fontsize=16, fontname="hebo")
        _draw_table(page, 60, 600 if title else 60, [HEADER, *rows], col_w=120, row_h=24)
    doc.save(str(path))
    return path


@pytest.fixture
def window(open_window, tmp_path):
    return open_window(two_page_table(tmp_path / "stock.pdf"), read="all", timeout_ms=180_000)


def table_block(w, page):
    return next(b for b in w.work.layout_blocks(page) if b.region.task == "table")


def test_a_table_edited_as_a_grid_writes_html_and_a_two_page_table_exports_as_one(qtbot, window, tmp_path,
                                                                                   artifacts_dir):
    from app.core.review.table_grid import Grid

    w = window
    first, second = table_block(w, 0), table_block(w, 1)
    grid = Grid.from_html(first.markdown)
    assert grid.rows()[0] == HEADER and grid.header_rows == 1, first.markdown
    rows = grid.rows()  # as OCR read them (a digit may be misread: the checks follow what was read)
    later = Grid.from_html(second.markdown).rows()
    assert later[0] == HEADER, second.markdown
    w.show_page(0)
    w.page_view.fit_page()
    QTest.mouseDClick(w.page_view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                      w.page_view.region_center(first.id))
    editor = w.tables.editor
    assert editor is not None and editor.isVisible() and editor.region_id == first.id
    assert editor.table.rowCount() == 3 and editor.table.columnCount() == 3
    depth = w.flow.undo_stack.count()

    editor.table.item(1, 0).setText("Green apples")  # typed in a cell
    assert "<td>Green apples</td>" in w.work.blocks[first.id].markdown and w.work.blocks[first.id].edited
    assert w.flow.undo_stack.count() == depth + 1
    editor.table.setRangeSelected(QTableWidgetSelectionRange(2, 1, 2, 2), True)
    editor.actions_["merge"].trigger()
    assert f'<td colspan="2">{rows[2][1]} {rows[2][2]}</td>' in w.work.blocks[first.id].markdown
    assert editor.table.columnSpan(2, 1) == 2
    editor.table.clearSelection()
    editor.table.setCurrentCell(2, 0)
    editor.actions_["add_row"].trigger()
    assert w.work.blocks[first.id].markdown.endswith("<tr><td></td><td></td><td></td></tr></table>")
    editor.header.setValue(0)
    assert "<th>" not in w.work.blocks[first.id].markdown
    assert w.flow.undo_stack.count() == depth + 4  # four changes, four steps
    w.flow.undo()  # the header row is back, and the grid shows it
    assert w.work.blocks[first.id].markdown.startswith("<table><tr><th>Item</th>") and editor.header.value() == 1
    w.flow.undo()  # the added row goes
    editor.table.clearSelection()
    editor.table.setCurrentCell(1, 0)
    assert editor.grid.n_rows == 3

    editor.actions_["join_next"].trigger()  # the table continues on the next page
    joined = Grid.from_html(w.work.blocks[first.id].markdown)
    assert [r[0] for r in joined.rows()] == ["Item", "Green apples", rows[2][0], later[1][0], later[2][0]]
    assert w.work.blocks[second.id].markdown == ""
    assert w.flow.undo_stack.undoText().startswith(f"Join {second.id} onto {first.id}")
    qtbot.wait(50)
    editor.grab().save(str(artifacts_dir / "table_grid_editor.png"))

    w.export_current(tmp_path / "out" / "stock.md", wait=True)
    md = (tmp_path / "out" / "stock.md").read_text()
    assert md.count("<table>") == 1 and md.count("Item") == 1 and later[2][0] in md
    html = (tmp_path / "out" / "stock.html").read_text()
    assert html.count("<table") == 1
    data = json.loads((tmp_path / "out" / "stock.json").read_text())
    blocks = {b["id"]: b for p in data["pages"] for b in p["blocks"]}
    assert blocks[second.id]["markdown"] == "" and blocks[first.id]["markdown"].count("<tr>") == 5

    csv_path = editor.save_as("csv", tmp_path / "stock.csv")
    with open(csv_path, encoding="utf-8", newline="") as f:
        assert list(csv.reader(f)) == joined.rows()
    from openpyxl import load_workbook

    sheet = load_workbook(editor.save_as("xlsx", tmp_path / "stock.xlsx")).active
    assert [[c.value or "" for c in row] for row in sheet.iter_rows()] == joined.rows()

    w.flow.undo()  # the join, undone at once: both tables back
    assert later[1][0] in w.work.blocks[second.id].markdown
    assert later[1][0] not in w.work.blocks[first.id].markdown
