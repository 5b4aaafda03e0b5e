"""A table block as an editable grid (core): read from the engines' HTML, every operation writes back the expected
HTML, a table continued on the next page joins with its repeated header dropped, and CSV / XLSX hold the same
cells."""
from __future__ import annotations

import csv

from app.core.review.table_grid import Grid, write_csv, write_xlsx

HTML = ("<table><tr><th>Item</th><th>Q1</th><th>Q2</th></tr><tr><td>Apples</td><td>12</td><td>14</td></tr>"
        "<tr><td>Pears</td><td>7</td><td>9</td></tr></table>")


def test_reads_and_writes_back_the_same_html_and_spans():
    grid = Grid.from_html(HTML)
    assert (grid.n_rows, grid.n_cols, grid.header_rows) == (3, 3, 1)
    assert grid.to_html() == HTML
    spanned = '<table><tr><th rowspan="2">Item</th><th colspan="2">Year</th></tr><tr><th>Q1</th><th>Q2</th></tr>' \
              "<tr><td>A</td><td>1</td><td>2</td></tr></table>"
    g = Grid.from_html(spanned)
    assert (g.n_rows, g.n_cols, g.header_rows) == (3, 3, 2) and g.to_html() == spanned
    assert g.rows() == [["Item", "Year", ""], ["", "Q1", "Q2"], ["A", "1", "2"]]
    assert Grid.from_html("no table here") is None


def test_each_operation_writes_the_expected_html():
    grid = Grid.from_html(HTML)
    grid.set_text(1, 0, "Green apples")
    assert "<td>Green apples</td>" in grid.to_html()
    assert grid.merge(1, 1, 1, 2)
    assert "<td>Green apples</td><td colspan=\"2\">12 14</td>" in grid.to_html()
    assert not grid.merge(0, 0, 1, 1)  # would cut the merged cell
    assert grid.split(1, 2) and grid.rows()[1] == ["Green apples", "12 14", ""]
    grid.insert_row(3)
    assert grid.n_rows == 4 and grid.to_html().endswith("<tr><td></td><td></td><td></td></tr></table>")
    grid.set_text(3, 0, "Plums")
    grid.insert_column(1)
    assert grid.rows()[0] == ["Item", "", "Q1", "Q2"] and grid.to_html().startswith("<table><tr><th>Item</th><th></th>")
    assert grid.remove_column(1) and grid.rows()[0] == ["Item", "Q1", "Q2"]
    assert grid.remove_row(2) and [r[0] for r in grid.rows()] == ["Item", "Green apples", "Plums"]
    grid.set_header_rows(0)
    assert "<th>" not in grid.to_html()
    grid.set_header_rows(2)
    assert grid.to_html().count("<tr><th>") == 2


def test_a_table_continued_on_the_next_page_joins_once_and_saves_as_csv_and_xlsx(tmp_path):
    first = Grid.from_html(HTML)
    second = Grid.from_html("<table><tr><th>Item</th><th>Q1</th><th>Q2</th></tr>"
                            "<tr><td>Plums</td><td>3</td><td>4</td></tr></table>")
    first.continue_with(second)
    assert [r[0] for r in first.rows()] == ["Item", "Apples", "Pears", "Plums"]
    assert first.to_html().count("<th>Item</th>") == 1
    headless = Grid.from_html("<table><tr><td>Figs</td><td>1</td><td>2</td></tr></table>")
    first.continue_with(headless)
    assert first.rows()[-1] == ["Figs", "1", "2"]

    with open(write_csv(first, tmp_path / "t.csv"), encoding="utf-8", newline="") as f:
        assert list(csv.reader(f)) == first.rows()
    from openpyxl import load_workbook

    first.merge(1, 1, 1, 2)
    sheet = load_workbook(write_xlsx(first, tmp_path / "t.xlsx")).active
    assert [[c.value or "" for c in row] for row in sheet.iter_rows()] == first.rows()
    assert sheet.cell(1, 1).font.bold and not sheet.cell(2, 1).font.bold
    assert [str(r) for r in sheet.merged_cells.ranges] == ["B2:C2"]
