"""Born-digital tables cell by cell and page furniture on a small page, end to end through the default pipeline
(PyMuPDF's layout and table finder, the text layer): PDFs made with PyMuPDF at test time."""
import pymupdf
import pytest

from app.bench.teds import tables_in
from app.core.layout.page_boxes import find_tables


def _ruled_with_spanning_header(path):
    """Region | Sales (over 2023 and 2024); 'Region' runs down two header rows; South has no 2023 figure."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    x, y = [72, 172, 272, 372], [100, 120, 140, 160, 180]
    rows = [["Region", "Sales", None], ["", "2023", "2024"], ["North", "10", "12"], ["South", "", "9"]]
    for r, row in enumerate(rows):
        for c, t in enumerate(row):
            if t:
                at = 222 - pymupdf.get_text_length(t, fontsize=10) / 2 if (r, c) == (0, 1) else x[c] + 4
                page.insert_text((at, y[r] + 14), t, fontsize=10, fontname="hebo" if r < 2 else "helv")
    for yy in (y[0], y[2], y[4], y[3]):
        page.draw_line((x[0], yy), (x[3], yy))
    page.draw_line((x[1], y[1]), (x[3], y[1]))  # under "Sales" only: "Region" spans both header rows
    for xx in x:
        page.draw_line((xx, y[1] if xx == x[2] else y[0]), (xx, y[4]))  # no rule between 2023/2024 in row 0
    doc.save(path)
    return page


def _borderless(path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 300), "Quarterly figures for the offices are given below in thousands.", fontsize=10)
    rows = [["Office", "Staff", "Revenue", "Cost"], ["Berlin", "12", "1,204", "880"], ["Lyon", "7", "", "410"],
            ["Porto", "9", "733", "512"], ["Graz", "4", "301", "199"]]
    for r, row in enumerate(rows):
        for c, t in enumerate(row):
            if t:  # numbers right-aligned on their column's edge, no ruling at all
                at = 72 if c == 0 else 172 + c * 90 - pymupdf.get_text_length(t, fontsize=10)
                page.insert_text((at, 330 + r * 16), t, fontsize=10, fontname="hebo" if r == 0 else "helv")
    doc.save(path)
    return page


def _grid(html):
    (rows,) = tables_in(html)
    return [[(c.text.strip(), c.header, c.rowspan, c.colspan) for c in row] for row in rows]


def test_finder_keeps_a_spanning_header_as_colspan_and_an_empty_cell_in_place(tmp_path):
    page = _ruled_with_spanning_header(tmp_path / "t.pdf")
    ((_, html),) = find_tables(page)
    assert _grid(html) == [
        [("Region", True, 2, 1), ("Sales", True, 1, 2)],
        [("2023", True, 1, 1), ("2024", True, 1, 1)],
        [("North", False, 1, 1), ("10", False, 1, 1), ("12", False, 1, 1)],
        [("South", False, 1, 1), ("", False, 1, 1), ("9", False, 1, 1)],  # 9 stays under 2024
    ]


def _convert(path):
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(engine="auto", text_layer="prefer"))
    try:
        return pipe.run(path).to_markdown(anchors=False)
    finally:
        pipe.close()


@pytest.mark.slow
def test_default_pipeline_writes_spanning_header_and_borderless_table_cell_by_cell(tmp_path):
    _ruled_with_spanning_header(tmp_path / "ruled.pdf")
    _borderless(tmp_path / "borderless.pdf")
    ruled = _convert(tmp_path / "ruled.pdf")
    assert '<th colspan="2">Sales</th>' in ruled and '<th rowspan="2">Region</th>' in ruled
    assert "<tr><td>South</td><td></td><td>9</td></tr>" in ruled
    text = _convert(tmp_path / "borderless.pdf")
    assert "Quarterly figures" in text
    assert _grid(text)[0] == [(h, True, 1, 1) for h in ("Office", "Staff", "Revenue", "Cost")]
    assert [c[0] for c in _grid(text)[2]] == ["Lyon", "7", "", "410"]


@pytest.mark.slow
def test_a_small_pages_running_header_and_page_number_are_left_out_of_the_body(tmp_path):
    doc = pymupdf.open()
    for n in range(3):
        page = doc.new_page(width=210, height=298)  # A7: 5 pt type, a header 18 pt from the top edge
        page.insert_text((20, 18), "FIELD NOTES ON MOSSES", fontsize=6)
        for k in range(8):
            page.insert_text((20, 50 + 14 * k), f"Line {k + 1} of page {n + 1} tells of moss on stones.", fontsize=8)
        page.insert_text((100, 285), str(n + 1), fontsize=6)
    doc.save(tmp_path / "a7.pdf")
    text = _convert(tmp_path / "a7.pdf")
    assert "Line 8 of page 3 tells of moss" in text
    assert "FIELD NOTES" not in text
    assert not any(line.strip() in {"1", "2", "3"} for line in text.splitlines())


def test_an_engines_table_takes_the_layers_header_rows_with_their_spans():
    from app.core.text.tables import adopt_header

    layer = ('<table><tr><th rowspan="2">Region</th><th colspan="2">Sales</th></tr><tr><th>2023</th><th>2024</th>'
             "</tr><tr><td>North</td><td>10</td><td>12</td></tr></table>")
    engine = ("<table><tr><td>Region</td><td>Sales</td><td>Sales</td></tr><tr><td></td><td>2O23</td><td>2024</td>"
              "</tr><tr><td>North</td><td>10</td><td>12</td></tr></table>")  # repeated span, a misread "O"
    assert _grid(adopt_header(engine, layer))[:2] == [[("Region", True, 2, 1), ("Sales", True, 1, 2)],
                                                      [("2023", True, 1, 1), ("2024", True, 1, 1)]]
    other = engine.replace("Region", "Office").replace("Sales", "Staff")  # says something else: left alone
    assert adopt_header(other, layer) == other


@pytest.mark.slow
def test_the_samples_table_read_by_the_engine_has_its_header_row_in_the_grid_editor(tmp_path):
    from app.core.document.sample_documents import make_sample_pdf
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.review.table_grid import Grid

    pdf = make_sample_pdf(tmp_path / "sample.pdf", pages=1)
    pipe = Pipeline(PipelineOptions())  # the window's default: the engine reads, the layer is compared
    try:
        out = pipe.run(pdf)
    finally:
        pipe.close()
    (table,) = [r for p in out.pages for r in p.regions if r.task == "table"]
    assert table.extra["stats"].get("text_source") != "text-layer"
    # the engine's own reading: its pieces under the columns their boxes line up in
    assert [len(row) for row in Grid.from_html(table.text).rows()] == [3, 3, 3, 3]
    (block,) = [b for p in out.to_dict()["pages"] for b in p["blocks"] if b["id"] == table.id]
    grid = Grid.from_html(block["markdown"])  # what the grid editor and every export are given
    assert grid.header_rows == 1 and grid.rows()[0] == ["Quarter", "Revenue", "Growth"]


def test_a_word_of_the_text_layer_that_runs_over_a_column_rule_is_cut_at_the_rule():
    """A real report's text layer (docling's normal_4pages.pdf, corpora/realdocs/d06) holds a cell's last glyphs
    and the next cell's bullet as one word, "U코드◦", over the table's column rule: each part goes to its cell."""
    from pathlib import Path

    pdf = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "d06-report-p2.pdf"
    with pymupdf.open(pdf) as doc:
        assert any(w[4] == "U코드◦" for w in doc[0].get_text("words"))
        ((_, html),) = find_tables(doc[0])
    row = next(r for r in _grid(html) if r[0][0].startswith("U코드"))
    assert [c[0] for c in row[:2]] == ["U코드", "◦ 대상질병에 U코드 없음"]


def test_cutting_words_at_column_edges_keeps_words_inside_a_cell_and_outside_the_table():
    from app.core.text.finder_tables import split_at_edges

    def chars_of(w):  # glyphs 5 pt wide
        return [(w[0] + 5 * k, w[0] + 5 * (k + 1), c) for k, c in enumerate(w[4])]

    words = [(95, 10, 120, 20, "abc+d", 0, 0, 0), (60, 10, 80, 20, "inside", 0, 0, 1),
             (95, 200, 120, 210, "below", 1, 0, 0), (97, 30, 112, 40, "xyz", 0, 1, 0)]  # the edge through its "z"
    out = split_at_edges(words, [110.0], (50, 0, 300, 100), chars_of)
    assert [w[4] for w in out] == ["abc", "+d", "inside", "below", "xyz"]
    assert out[0][2] == 110 and out[1][0] == 110
