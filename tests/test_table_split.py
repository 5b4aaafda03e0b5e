"""A table box over two tables and the caption between them (a layout model boxes them as one when they stand
close) is cut at the caption; the parts are read as two tables, each with its own columns."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.layout.page_boxes import Line, refine
from app.core.layout.table_split import split_table

PAGES = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"
DEFAULTS = {"engine": "auto", "text_layer": "compare", "formats": ("md",)}  # the app's own defaults


def _row(y: float, *cells: tuple[float, float, str]) -> list[Line]:
    return [Line((x0, y, x1, y + 10), text, True) for x0, x1, text in cells]


def _two_tables() -> list[Line]:
    lines = _row(0, (0, 40, "Method"), (60, 90, "Score"))
    lines += _row(14, (0, 40, "EDD"), (60, 90, "88.3")) + _row(28, (0, 40, "LGPMA"), (60, 90, "94.6"))
    lines += _row(46, (10, 190, "表 5 PubTabNet 表格结构识别结果比较"))
    lines += _row(60, (5, 195, "Table 5 Comparison results on PubTabNet"))
    lines += _row(78, (0, 50, "Method"), (100, 130, "Score"), (150, 200, "Note"))
    lines += _row(92, (0, 50, "Zhong"), (100, 130, "88.3"), (150, 200, "TEDS"))
    return lines


def test_a_table_box_is_cut_at_the_caption_between_two_tables():
    box = {"x0": 0, "y0": -2, "x1": 200, "y1": 104, "boxclass": "table", "textlines": [1]}
    parts = split_table(box, _two_tables())
    assert [p["boxclass"] for p in parts] == ["table", "caption", "table"]
    top, caption, bottom = parts
    assert (top["x0"], top["y0"], top["x1"], top["y1"]) == (0, -2, 200, 38)  # the box's width and top edge
    assert (caption["x0"], caption["y0"], caption["x1"], caption["y1"]) == (5, 46, 195, 70)  # both caption lines
    assert (bottom["y0"], bottom["y1"]) == (78, 104)
    assert all(p["textlines"] is None and p["cut"] for p in parts)


def test_a_caption_on_top_is_cut_off_and_a_lone_row_that_is_no_caption_stays_in_the_table():
    box = {"x0": 0, "y0": 0, "x1": 200, "y1": 60, "boxclass": "table"}
    lines = _row(0, (0, 120, "TABLE II. Results")) + _row(14, (0, 40, "a"), (60, 90, "1"))
    lines += _row(28, (0, 40, "b"), (60, 90, "2"))
    assert [p["boxclass"] for p in split_table(box, lines)] == ["caption", "table"]
    panel = _row(0, (0, 40, "a"), (60, 90, "1")) + _row(14, (0, 120, "Panel B: adults")) + _row(
        28, (0, 40, "b"), (60, 90, "2"))
    assert split_table(box, panel) is None  # a section row inside one table: not a caption
    assert split_table(box, _row(0, (0, 120, "Table 3 Results")) + _row(14, (0, 40, "a"), (60, 90, "1"))) is None


def test_the_layouts_one_box_becomes_two_tables_and_the_finders_table_over_both_goes_to_neither():
    """On a scan the table finder (run over the OCR's words) can see one table over both: a cut part takes a
    finder table only when that table is its own (inside it), so neither part grows back over the other."""
    lines = _two_tables()
    boxes = [{"x0": 0, "y0": -2, "x1": 200, "y1": 104, "boxclass": "table", "textlines": None}]
    out = refine(boxes, lines, tables=lambda: [((0, 0, 200, 102), "<table><tr><td>x</td></tr></table>")])
    assert [b["boxclass"] for b in out] == ["table", "caption", "table"]
    assert not any(b.get("layer_table") for b in out)
    assert [len(b["ocr_lines"]) for b in out] == [6, 2, 6]


def test_a_stray_piece_in_one_row_of_a_long_table_makes_no_column_of_its_own():
    from app.core.review.table_grid import Grid
    from app.core.text.tables import from_rows

    rows = [[((0, y, 40, y + 10), f"m{y}"), ((60, y, 90, y + 10), "9.5"), ((110, y, 150, y + 10), "F1")]
            for y in range(0, 60, 14)]
    rows.append([((0, 70, 40, 80), "Li"), ((60, 70, 90, 80), "57.7"), ((110, 70, 150, 80), "Row/column"),
                 ((155, 70, 200, 80), "Accuracy")])  # the wrapped remark's word, read apart
    grid = Grid.from_html(from_rows(rows)).rows()
    assert all(len(r) == 3 for r in grid) and grid[-1] == ["Li", "57.7", "Row/column Accuracy"]
    # a sparse table: only its header fills every column, but each column has cells below it: four columns
    head = [((0, 0, 40, 10), "Variable"), ((60, 0, 90, 10), "HR"), ((110, 0, 150, 10), "95% CI"),
            ((170, 0, 200, 10), "p")]
    body = [[((0, 14, 40, 24), "Age"), ((170, 14, 200, 24), "0.716")]] + [
        [((0, y, 40, y + 10), f"g{y}"), ((60, y, 90, y + 10), "1.2"), ((110, y, 150, y + 10), "0.3-2.2")]
        for y in range(28, 90, 14)]
    grid = Grid.from_html(from_rows([head, *body])).rows()
    assert all(len(r) == 4 for r in grid) and grid[1] == ["Age", "", "", "0.716"], grid


@pytest.mark.slow
def test_a_real_scan_with_two_stacked_tables_is_read_as_two_tables():
    """A real journal page (RapidLayout's test image, Apache-2.0): tables 4 and 5 stand one over the other with
    table 5's caption between; the layout boxes them as one."""
    from app.core.review.table_grid import Grid
    from pipeline_kit import read

    out = read(PAGES / "s15-chinese-journal.jpg", **DEFAULTS)
    regions = [r for p in out.pages for r in p.regions]
    tables = [r for r in regions if r.task == "table"]
    assert len(tables) == 2
    grids = [Grid.from_html(t.text).rows() for t in tables]
    assert all(len(row) == 3 for g in grids for row in g), grids
    assert "TableMaster" in grids[1][-1][0] and len(grids[1]) == 6
    between = regions[regions.index(tables[0]) + 1:regions.index(tables[1])]
    assert any("Table 5" in r.text for r in between)


def test_a_heading_that_names_the_table_right_below_it_is_its_caption():
    from app.core.layout.table_split import named_captions

    def box(cls, y0, y1, text, x0=60.0, x1=300.0):
        return {"boxclass": cls, "x0": x0, "y0": y0, "x1": x1, "y1": y1, "text": text}

    boxes = [box("section-header", 100, 112, "(1) Background"), box("text", 116, 200, "Body."),
             box("section-header", 210, 221, "[표 1] 감염병예방법 개정전·후 비교"), box("table", 224, 400, ""),
             box("section-header", 420, 431, "Table 2 is below the text, not a caption"), box("text", 440, 500, "x"),
             box("section-header", 520, 531, "Figure 3: the site"), box("picture", 560, 700, "", x0=320, x1=500),
             box("picture", 720, 800, ""), box("section-header", 804, 815, "그림 4 지도")]
    named_captions(boxes, lambda b: b["text"])
    assert [b["boxclass"] for b in boxes if b["text"]] == [
        "section-header", "text", "caption", "section-header", "text",
        "section-header",  # a picture beside it, not under it
        "caption"]
