"""Tables (born-digital cells with spans and a header; read pieces with inferred columns, "$" cells and two-line
cells) and Latin pages read as Latin (no CJK class wins on a Latin page), with the real RapidOCR recogniser."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from app.bench import documents_corpus as corpus
from app.core.rapid.script_mask import ScriptMask, count_scripts
from app.core.text.tables import from_rows

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


@pytest.fixture(scope="module")
def classic():
    from app.core.engines.classic import ClassicEngine

    return ClassicEngine()


def _font(size):
    try:
        return ImageFont.truetype(DEJAVU, size)
    except OSError:  # pragma: no cover - a machine without DejaVu
        pytest.skip("DejaVu Sans is not installed")


def _table_image():
    """Item | Amount | Notes: amounts as "$" at the cell's left and the value to its right; "blue and / black" a
    two-line cell; Toner's note empty."""
    font = _font(26)
    img = Image.new("RGB", (1100, 300), "white")
    d = ImageDraw.Draw(img)
    d.text((20, 20), "Item", font=font, fill="black")
    d.text((330, 20), "Amount", font=font, fill="black")
    d.text((640, 20), "Notes", font=font, fill="black")
    for y, item, amount, note in ((80, "Paper", "12.50", "weekly"), (140, "Printer ink", "3.10", "blue and"),
                                  (240, "Toner", "140.00", "")):
        d.text((20, y), item, font=font, fill="black")
        d.text((330, y), "$", font=font, fill="black")
        d.text((450, y), amount, font=font, fill="black")
        d.text((640, y), note, font=font, fill="black")
    d.text((640, 180), "black", font=font, fill="black")
    return img


def test_a_read_table_keeps_its_columns_with_dollar_cells_and_a_two_line_cell(classic):
    html = classic.decode_region(_table_image(), "table", region_id="t", page=0).text
    assert html == ("<table><tr><th>Item</th><th>Amount</th><th>Notes</th></tr>"
                    "<tr><td>Paper</td><td>$12.50</td><td>weekly</td></tr>"
                    "<tr><td>Printer ink</td><td>$3.10</td><td>blue and black</td></tr>"
                    "<tr><td>Toner</td><td>$140.00</td><td></td></tr></table>")


def test_columns_come_from_all_rows_so_a_row_with_a_gap_keeps_its_values_under_their_headers():
    rows = [[((0, 0, 40, 10), "A"), ((100, 0, 140, 10), "B"), ((200, 0, 240, 10), "C")],
            [((0, 20, 40, 30), "1"), ((205, 20, 230, 30), "3")],  # no B value
            [((0, 40, 140, 50), "wide"), ((200, 40, 240, 50), "6")]]  # a cell over A and B
    assert from_rows(rows) == ("<table><tr><th>A</th><th>B</th><th>C</th></tr><tr><td>1</td><td></td><td>3</td></tr>"
                               '<tr><td colspan="2">wide</td><td>6</td></tr></table>')


def test_a_born_digital_table_gets_its_header_and_spans_from_the_finder(tmp_path):
    import pymupdf

    from app.core.layout.page_boxes import find_tables

    pdf = tmp_path / "span.pdf"
    corpus.span_table(pdf)
    with pymupdf.open(str(pdf)) as doc:
        ((bbox, html),) = find_tables(doc[0])
    assert bbox == pytest.approx((50, 70, 410, 166), abs=1)
    assert html == ('<table><tr><th rowspan="2">Item</th><th colspan="2">Price</th></tr><tr><th>Net</th>'
                    "<th>Gross</th></tr><tr><td>Paper</td><td>$ 12.50</td><td>$ 14.90</td></tr><tr><td>Ink</td>"
                    "<td>$ 3.10</td><td>$ 3.70</td></tr></table>")


def test_the_mask_lets_the_best_latin_class_win_only_on_a_latin_page():
    mask = ScriptMask()
    mask.set_characters(["blank", "a", "b", "=", "二", " "])
    frames = np.zeros((1, 6, 6), dtype=np.float32)
    for t, (k, p) in enumerate([(1, .9), (0, .9), (4, .6), (0, .9), (2, .9), (0, .9)]):
        frames[0, t, k] = p
        frames[0, t, 3 if k == 4 else 0] += 1 - p  # "=" is the runner-up where "二" won
    out = mask(frames)  # 2 Latin letters < LATIN_MIN: not yet a Latin page
    assert out is frames
    mask.latin = 10  # the page so far read as Latin
    out = mask(frames)
    assert out[0].argmax(axis=1).tolist() == [1, 0, 3, 0, 2, 0] and np.allclose(out.sum(axis=2), 1)
    mask.reset()
    mask.cjk = 50  # a Chinese page: nothing is masked
    assert mask(frames) is frames


def test_a_cjk_line_on_a_latin_page_is_not_masked():
    """An English table on a Chinese journal page makes the page "Latin" by count; its Chinese lines must still read
    as Chinese: only a stray CJK class inside a Latin line is masked."""
    mask = ScriptMask()
    mask.set_characters(["blank", "a", "b", "=", "二", "中", "文", " "])
    frames = np.zeros((2, 4, 8), dtype=np.float32)
    for t, k in enumerate([5, 0, 6, 0]):  # row 0 reads "中文"
        frames[0, t, k] = 0.7
        frames[0, t, 1 if k else 0] += 0.3
    for t, k in enumerate([1, 4, 2, 0]):  # row 1 reads "a二b": a misread "="
        frames[1, t, k] = 0.6
        frames[1, t, 3 if k == 4 else 0] += 0.4
    mask.latin = 40  # the page so far read as Latin
    out = mask(frames)
    assert out[0].argmax(axis=1).tolist() == [5, 0, 6, 0]  # the Chinese line kept
    assert out[1].argmax(axis=1).tolist() == [1, 3, 2, 0]  # the stray CJK class in the Latin line masked


def test_a_latin_page_reads_no_cjk_characters(classic):
    """PP-OCR's recogniser reads a lone "=" (a formula line of its own) as "二" unmasked; after a Latin region of
    the same page it reads "="."""
    font = _font(14)
    para = Image.new("RGB", (420, 60), "white")
    d = ImageDraw.Draw(para)
    d.text((8, 8), "The balance holds when both sides", font=font, fill="black")
    d.text((8, 32), "are equal in weight.", font=font, fill="black")
    first = classic.decode_region(para, "text", region_id="p9-r01", page=8).text
    equals = Image.new("RGB", (300, 30), "white")
    ImageDraw.Draw(equals).text((6, 8), "=", font=font, fill="black")
    second = classic.decode_region(equals, "text", region_id="p9-r02", page=8).text
    assert "balance" in first and second == "="
    assert count_scripts(first + second)[1] == 0


def test_column_names_above_a_ruled_table_are_its_header_row(tmp_path):
    """A table ruled below its column names (booktabs style): PyMuPDF's finder calls the names an external header.
    They are the table's header row, each over its own column, not a line of text read on its own."""
    import pymupdf

    from app.core.layout.page_boxes import find_tables
    from app.core.text.finder_tables import from_finder

    doc = pymupdf.open()
    page = doc.new_page()
    xs = [72, 200, 330, 460]
    for x, name in zip(xs, ["Name", "Count", "Price", "Total"]):
        page.insert_text((x, 100), name)
    page.draw_line((70, 108), (540, 108))
    for r, row in enumerate([["apple", "3", "1.20", "3.60"], ["pear", "5", "0.80", "4.00"], ["plum", "7", "0.50", "3.50"]]):
        y = 125 + r * 18
        for x, t in zip(xs, row):
            page.insert_text((x, y), t)
        page.draw_line((70, y + 5), (540, y + 5))
    for x in [70, 190, 320, 450, 540]:
        page.draw_line((x, 108), (x, 184))
    path = tmp_path / "ruled.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        first = pdf[0]  # the page must outlive its tables (PyMuPDF holds it weakly)
        (table,) = first.find_tables().tables
        assert table.header.external  # the case this test is about
        html = from_finder(table, first.get_text("words"))
        ((bbox, found),) = find_tables(first)
    assert html.startswith("<table><tr><th>Name</th><th>Count</th><th>Price</th><th>Total</th></tr><tr><td>apple</td>")
    assert found == html and bbox[1] < 100  # the table's box takes in its column names
