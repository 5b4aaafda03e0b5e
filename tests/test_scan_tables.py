"""A scanned table whose cells stand close: the page's lines, read once, go to the layout as the OCR read them
(MuPDF joins the text written on one baseline into one line, a table row's cells with it), so the layout sees
cells in columns and calls it a table, and the engine writes each cell under its column."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.layout.page_boxes import OCR_INSERT_FONT, fulltext_lines

PAGES = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"
DEFAULTS = {"engine": "auto", "text_layer": "compare", "formats": ("md",)}  # the app's own defaults


def _parsed(*lines) -> dict:
    return {"fulltext": [{"lines": [{"bbox": box, "spans": [{"text": text, "font": font, "size": 8, "flags": 0}]}
                                    for box, text, font in lines]}]}


def test_a_line_mupdf_joined_from_two_given_lines_is_those_lines_again():
    joined = _parsed(((2, 33, 83, 43), "HIV-1 (1.25μM) 0.39± 0.063", OCR_INSERT_FONT),
                     ((2, 52, 37, 61), "SIV (1.25 μM)", OCR_INSERT_FONT))
    given = [[48, 33, 83, 43, "0.39± 0.063"], [2, 33, 43, 43, "HIV-1 (1.25μM)"], [2, 52, 37, 61, "SIV (1.25 μM)"]]
    lines = fulltext_lines(joined, given)
    assert [(ln.box, ln.text, ln.ocr) for ln in lines] == [
        ((2.0, 33.0, 43.0, 43.0), "HIV-1 (1.25μM)", True), ((48.0, 33.0, 83.0, 43.0), "0.39± 0.063", True),
        ((2, 52, 37, 61), "SIV (1.25 μM)", True)]  # a line holding one given line stays as MuPDF saw it
    assert [ln.text for ln in fulltext_lines(joined)] == ["HIV-1 (1.25μM) 0.39± 0.063", "SIV (1.25 μM)"]
    layer = _parsed(((2, 33, 83, 43), "Total 20 30", "Helvetica"))  # a text layer's own line: never split
    assert [ln.text for ln in fulltext_lines(layer, given)] == ["Total 20 30"]


def test_a_given_line_two_overlapping_lines_hold_comes_out_once():
    """s12 of the real set (a newspaper column): MuPDF's line over "After dinner, …" reached down over the next given
    line's middle, which also stood as a line of its own, and the column read "activitiestogeth- extracurricular
    activitiestogether"; the region's lines then matched no page line one for one and were all read again."""
    given = [[404, 173, 587, 190, "After dinner, participants share"],
             [404, 188, 587, 201, "extracurricular activitiestogeth-"],
             [404, 202, 587, 214, "er--films, music,lectures."]]
    overlapping = _parsed(((404, 173, 587, 196), "After dinner, participants share extracurricular activitiestogeth-",
                           OCR_INSERT_FONT),
                          ((404, 189, 587, 202), "extracurricular activitiestogeth-", OCR_INSERT_FONT),
                          ((404, 202, 587, 214), "er--films, music,lectures.", OCR_INSERT_FONT))
    assert [ln.text for ln in fulltext_lines(overlapping, given)] == [g[4] for g in given]
    alone_first = _parsed(*[(tuple(g[:4]), g[4], OCR_INSERT_FONT) for g in given[1:2]],
                          ((404, 173, 587, 202), "After dinner, participants share extracurricular activitiestogeth-",
                           OCR_INSERT_FONT))
    assert sorted(ln.text for ln in fulltext_lines(alone_first, given)) == sorted(g[4] for g in given[:2])


@pytest.mark.slow
def test_a_scanned_table_with_close_cells_is_read_cell_by_cell(tmp_path):
    """A real PubTabNet table image (CDLA-Permissive-1.0): three columns whose first two stand close."""
    from app.core.review.table_grid import Grid
    from pipeline_kit import read

    out = read(PAGES / "p09-pubtabnet-pmc5198506_004_00.png", **DEFAULTS)
    (table,) = [r for p in out.pages for r in p.regions if r.task == "table"]
    rows = Grid.from_html(table.text).rows()
    assert all(len(row) == 3 for row in rows), rows
    values = [row for row in rows if "μM" in row[0]]  # SIV and HIV-1 at 1.25 μM, each with its two figures
    assert len(values) == 4 and all("±" in row[1] and "±" in row[2] for row in values), rows


@pytest.mark.slow
def test_a_low_resolution_table_is_read_larger_and_keeps_its_lone_figures(monkeypatch):
    """A real PubTabNet table image of 251 × 227 px (lines ~13 px tall): read at its own size, the detector misses
    most of its lone digits; read larger, every row keeps its four figures. A page of ordinary text is read at
    its own size. The scale is chosen from the detector's boxes alone: the page is recognised once, larger."""
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.review.table_grid import Grid

    from app.core.rapid.recogniser import Recogniser

    read = Recogniser.read
    sizes = []  # the crops of each batch the recogniser is given: their heights

    def watched(self, crops):
        sizes.append([c.shape[0] for c in crops])
        return read(self, crops)

    monkeypatch.setattr(Recogniser, "read", watched)
    pipe = Pipeline(PipelineOptions(formats=("md",)))
    try:
        out = pipe.run(PAGES / "p13-pubtabnet-pmc3826085_003_00.png")
        assert pipe.text_source.scan.boost(0) > 1.5 and pipe.text_source.scan.reads == 1
        page, *rest = sizes  # the page's one batch, every line read larger; then a few crops the decoder reads
        assert len(page) >= 20 and min(page) >= 16 and all(len(batch) < len(page) // 4 for batch in rest), sizes
        (table,) = [r for p in out.pages for r in p.regions if r.task == "table"]
        rows = {row[0]: row[1:] for row in Grid.from_html(table.text).rows()}
        assert rows["Mandarin"] == ["1", "3", "9", "13"] and rows["Total"] == ["20", "30", "30", "80"], rows
        assert table.extra["stats"]["crop"]["dpi"] > pipe.ocr_dpi(0, boosted=False)
        pipe.run(PAGES / "s07-phototest.png")
        assert pipe.text_source.scan.boost(0) == 1.0
    finally:
        pipe.close()


def test_recognised_pieces_keep_their_columns_rows_and_text():
    from app.core.review.table_grid import Grid
    from app.core.text.tables import from_rows

    rows = [  # padded OCR boxes: neighbours touch by a little
        [((0, 0, 60, 20), "Area"), ((58, 0, 120, 20), "Model"), ((118, 0, 170, 20), "R2")],
        [((0, 20, 60, 40), "urban"), ((58, 20, 120, 40), "CDR"), ((118, 20, 170, 40), "0.76")],
        [((58, 38, 120, 58), "RS"), ((118, 38, 170, 58), "0.64")],  # a figure row under its group's label
        [((0, 58, 60, 78), "rural"), ((0, 74, 40, 94), "(north)"), ((118, 60, 170, 80), "0.05")],  # a wrapped cell
    ]
    assert Grid.from_html(from_rows(rows)).rows() == [
        ["Area", "Model", "R2"], ["urban", "CDR", "0.76"], ["", "RS", "0.64"], ["rural (north)", "", "0.05"]]


def test_a_row_label_wrapped_over_lines_is_one_cell_and_a_group_label_under_the_header_stays_a_row():
    """The lines of a long row label ("1. Antipsychotic drug treatment is the / most effective way …", PubTabNet
    p04) each came out as a row of their own, empty but for the label's next words; a line that starts in lower
    case under a label is its next line. A group's label is a row, lower case or not, under the header too."""
    from app.core.review.table_grid import Grid
    from app.core.text.tables import from_rows

    rows = [
        [((0, 0, 150, 10), "Statement"), ((170, 0, 200, 10), "agree"), ((210, 0, 250, 10), "disagree")],
        [((0, 12, 150, 22), "whole country")],  # a group's label right under the header
        [((0, 24, 150, 34), "1. Drug treatment is the"), ((170, 24, 200, 34), "7.1"), ((210, 24, 250, 34), "4")],
        [((0, 35, 150, 45), "most effective way to treat")],
        [((0, 46, 80, 56), "illness")],
        [((0, 60, 150, 70), "Rural areas")],  # a label in upper case: a row
        [((0, 72, 150, 82), "2. Treatment carries a"), ((170, 72, 200, 82), "45"), ((210, 72, 250, 82), "35")],
        [((0, 83, 150, 93), "high risk")],
    ]
    assert Grid.from_html(from_rows(rows)).rows() == [
        ["Statement", "agree", "disagree"], ["whole country", "", ""],
        ["1. Drug treatment is the most effective way to treat illness", "7.1", "4"], ["Rural areas", "", ""],
        ["2. Treatment carries a high risk", "45", "35"]]


@pytest.mark.slow
def test_a_scanned_table_of_column_names_over_one_row_of_figures_is_a_table():
    """A real PubTabNet table image (CDLA-Permissive-1.0): six column names and one row of figures under them."""
    from app.core.review.table_grid import Grid
    from pipeline_kit import read

    out = read(PAGES / "p12-pubtabnet-pmc2753619_002_00.png", **DEFAULTS)
    (table,) = [r for p in out.pages for r in p.regions if r.task == "table"]
    rows = Grid.from_html(table.text).rows()
    assert len(rows) == 2 and rows[0][:2] == ["Trait", "Number of Phenotypes"] and rows[1][:2] == ["SCS", "1058"]
