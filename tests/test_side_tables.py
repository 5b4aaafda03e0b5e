"""A scanned table the layout boxed column by column (each column a paragraph of its own) is one table again;
two columns of prose, whose lines also meet on the same baselines across the gutter, stay two columns."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.layout.page_boxes import Line, lines_in, refine
from app.core.layout.side_tables import join_side_tables

PAGES = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"
DEFAULTS = {"engine": "auto", "text_layer": "compare", "formats": ("md",)}  # the app's own defaults


def _column(x0: float, x1: float, texts: list[str]) -> tuple[dict, list[Line]]:
    lines = [Line((x0, 14 * n, x1 - 5 * (n % 2), 14 * n + 10), t, True) for n, t in enumerate(texts)]
    return {"x0": x0, "y0": 0, "x1": x1, "y1": 14 * len(texts), "boxclass": "text", "textlines": [1]}, lines


def test_text_boxes_that_are_one_tables_columns_become_the_table():
    names, name_lines = _column(0, 60, ["Primer name", "IL6 sense", "IL6 antisense", "GAPDH sense"])
    seqs, seq_lines = _column(120, 230, ["Primer sequence (5'-3')", "GCCCACCAAGAAC", "ACCAGCATCAGTC", "TGGTGAAGCAG"])
    lines = name_lines + seq_lines
    out = join_side_tables([names, seqs], lambda box: lines_in(lines, box))
    assert len(out) == 1 and out[0]["boxclass"] == "table" and out[0]["side_columns"] == 2
    assert (out[0]["x0"], out[0]["y0"], out[0]["x1"], out[0]["y1"]) == (0, 0, 230, 56)
    (table,) = refine([names, seqs], lines)
    assert table["boxclass"] == "table" and len(table["ocr_lines"]) == 8  # the engine reads it as a table


def test_two_columns_of_prose_on_the_same_baselines_stay_two_columns():
    prose = ["the layout of a page is read", "down each column before the", "next one, as a person reads it",
             "and the gutter between them"]
    left, left_lines = _column(0, 200, prose)
    right, right_lines = _column(220, 420, prose)
    lines = left_lines + right_lines
    assert join_side_tables([left, right], lambda box: lines_in(lines, box)) == [left, right]
    short, short_lines = _column(0, 60, ["a", "b", "c", "d"])
    lower, lower_lines = _column(120, 230, ["e", "f"])  # beside only half of it: rows do not pair up
    lower.update(y0=28, y1=56)
    for ln in lower_lines:
        ln.box = (ln.box[0], ln.box[1] + 28, ln.box[2], ln.box[3] + 28)
    lines = short_lines + lower_lines
    assert len(join_side_tables([short, lower], lambda box: lines_in(lines, box))) == 2


@pytest.mark.slow
def test_a_real_table_boxed_column_by_column_is_read_as_one_table():
    """A real PubTabNet table image (CDLA-Permissive-1.0): primer names and their sequences, no rules, a wide gap;
    PyMuPDF's layout boxes each column as a paragraph."""
    from app.core.review.table_grid import Grid
    from pipeline_kit import read

    out = read(PAGES / "p06-pubtabnet-pmc5897438_004_00.png", **DEFAULTS)
    (table,) = [r for p in out.pages for r in p.regions if r.task == "table"]
    rows = Grid.from_html(table.text).rows()
    assert len(rows) == 11 and all(len(row) == 2 for row in rows), rows
    assert rows[3][0] == "IL6 sense" and rows[3][1].startswith("G")
