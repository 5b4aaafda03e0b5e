"""Word, Excel and Docling JSON: read back by their own libraries (python-docx, mammoth, openpyxl, docling-core) they
hold the Markdown's text and tables; merged cells, numbers, headers, captions and boxes survive; bad input (ragged
rows, a picture that cannot be read, control characters, an empty document) gives a good file."""
from __future__ import annotations

import io
import json
import re

import pytest

from export_kit import convert, view


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    from app.core.base.paths import sample_document

    out_dir = tmp_path_factory.mktemp("office")
    output, files = convert(sample_document(), out_dir, "auto", ("md", "json", "docx", "xlsx", "docling"))
    blocks = [b for p in json.loads(files["json"].read_text())["pages"] for b in p["blocks"]]
    return output, files, blocks


def _squash(text: str) -> str:
    return re.sub(r"[\s^_{}\\$]", "", text)


def _expected(blocks):
    """What the Markdown holds, block by block: ("p", text) for text, ("t", rows) for tables, ("f", squashed LaTeX)."""
    from app.core.formats.model import table_grid

    out = []
    for b in blocks:
        md = b["markdown"]
        if not md or b["task"] == "picture":
            continue
        if b["task"] == "table":
            cells, n_rows, n_cols = table_grid(md)
            rows = [[""] * n_cols for _ in range(n_rows)]
            for c in cells:
                rows[c.row][c.col] = c.text
            out.append(("t", rows))
        elif b["task"] == "formula":
            out.append(("f", _squash(md)))
        else:
            out.append(("p", re.sub(r"^#+ ", "", md)))
    return out


def _docx_items(path):
    """The DOCX body in order, as python-docx reads it."""
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    d = docx.Document(str(path))
    out = []
    for item in d.iter_inner_content():
        if isinstance(item, Table):
            out.append(("t", [[c.text for c in row.cells] for row in item.rows]))
        elif isinstance(item, Paragraph):
            math = "".join(t.text or "" for t in item._p.iter(
                "{http://schemas.openxmlformats.org/officeDocument/2006/math}t"))
            if math:
                out.append(("f", _squash(math)))
            elif item.text.strip():
                out.append(("p", item.text))
    return d, out


def test_docx_read_back_by_python_docx_holds_the_markdowns_text_tables_and_formulas(sample):
    output, files, blocks = sample
    d, items = _docx_items(files["docx"])
    assert items == _expected(blocks)
    styles = {p.text: p.style.name for p in d.paragraphs}
    title = next(b for b in blocks if b["label"] == "doc_title")
    section = next(b for b in blocks if b["label"] == "paragraph_title")
    assert styles[re.sub(r"^#+ ", "", title["markdown"])] == "Heading 1"
    assert styles[re.sub(r"^#+ ", "", section["markdown"])] == "Heading 2"
    assert d.core_properties.title == "sample" or d.core_properties.title
    assert "classic" in d.core_properties.comments and d.core_properties.created is None
    body = d.element.body.xml
    assert body.count('w:type="page"') == len(output.pages) - 1
    pictures = [b for b in blocks if b["task"] == "picture"]
    assert len(d.inline_shapes) == len(pictures)
    for shape, b in zip(d.inline_shapes, pictures):  # at their size on the page
        assert abs(shape.width.pt - (b["box_pt"][2] - b["box_pt"][0])) < 1.0


def test_docx_read_by_mammoth_holds_the_same_text_and_tables(sample):
    import mammoth
    from lxml import html

    _, files, blocks = sample
    with open(files["docx"], "rb") as f:
        result = mammoth.convert_to_html(f)
    # mammoth does not read Word equations (it says so); everything else must be there
    assert all("oMathPara" in m.message or "style" in m.message for m in result.messages), result.messages
    tree = html.fromstring(f"<div>{result.value}</div>")
    items = []
    for el in tree:
        if el.tag == "table":
            items.append(("t", [[td.text_content() for td in tr.iter("td", "th")] for tr in el.iter("tr")]))
        elif el.text_content().strip():
            items.append(("p", el.text_content()))
    assert items == [e for e in _expected(blocks) if e[0] != "f"]
    assert tree.find(".//h1") is not None and tree.find(".//h2") is not None and tree.find(".//img") is not None


def test_xlsx_cells_equal_the_table_cells(sample):
    import openpyxl

    from app.core.formats.model import table_grid
    from app.core.formats.workbook import cell_value

    _, files, blocks = sample
    wb = openpyxl.load_workbook(files["xlsx"])
    tables = [b for b in blocks if b["task"] == "table"]
    assert wb.sheetnames == [b["id"].replace("-", " ") for b in tables]
    for b, ws in zip(tables, wb.worksheets):
        cells, n_rows, n_cols = table_grid(b["markdown"])
        assert (ws.max_row, ws.max_column) == (n_rows, n_cols)
        for c in cells:
            cell = ws.cell(row=c.row + 1, column=c.col + 1)
            assert cell.value == cell_value(c.text)[0], (c, cell.value)
            assert bool(cell.font.b) == (c.row == 0)
        assert ws.freeze_panes == "A2"
    ws = wb.worksheets[0]
    assert ws["B2"].value == 1204 and ws["B2"].number_format == "#,##0"  # "1,204"
    assert ws["C2"].value == pytest.approx(0.031) and ws["C2"].number_format == "0.0%"  # "3.1%"
    assert ws["A2"].value == "Q1"


def test_docling_json_loads_back_with_boxes_and_its_markdown_holds_our_text(sample):
    from docling_core.types.doc import DoclingDocument, PictureItem, TableItem

    _, files, blocks = sample
    dd = DoclingDocument.load_from_json(files["docling"])
    items = [item for item, _ in dd.iterate_items()]
    assert items and all(item.prov and item.prov[0].bbox.area() > 0 for item in items)
    assert {p.page_no for item in items for p in item.prov} == {1, 2}
    tables = [i for i in items if isinstance(i, TableItem)]
    pictures = [i for i in items if isinstance(i, PictureItem)]
    assert len(tables) == sum(b["task"] == "table" for b in blocks) and tables[0].data.num_cols == 3
    assert pictures and all(p.captions and p.caption_text(dd).startswith("Figure") for p in pictures)
    assert pictures[0].image is not None and str(pictures[0].image.uri).endswith(".png")
    md = dd.export_to_markdown().replace("\\_", "_")
    words = set(re.findall(r"\w+", md))
    for b in blocks:
        if b["task"] in ("text",) and b["markdown"]:
            assert set(re.findall(r"\w+", re.sub(r"^#+ ", "", b["markdown"]))) <= words, b["id"]
    assert dd.origin is not None and dd.origin.filename == "sample.pdf"


def _bad_view(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\nnot an image at all")
    doc = view([("text", "doc_title", (20.0, 10.0, 280.0, 30.0), "# Title\x07 here"),
                ("table", "table", (20.0, 40.0, 280.0, 120.0),
                 '<table><tr><th colspan="2">Wide</th><th>n</th></tr><tr><td rowspan="2">tall</td><td>007</td>'
                 '<td>-2.50</td></tr><tr><td>x\x0by</td></tr><tr><td>a</td><td>b</td><td>c</td><td>extra</td></tr>'
                 '</table>'),
                ("picture", "image", (20.0, 130.0, 120.0, 190.0), "![Figure p1-r03](img/broken.png)"),
                ("text", "figure_title", (20.0, 190.0, 120.0, 198.0), "Figure 1: gone.")])
    pic = doc.pages[0].blocks[2]
    pic.picture, pic.picture_ref = str(broken), "img/broken.png"
    return doc


def test_ragged_merged_tables_broken_pictures_and_control_characters_give_good_files(tmp_path):
    import docx
    import mammoth
    import openpyxl
    from docling_core.types.doc import DoclingDocument, PictureItem

    from app.core.formats.docling_json import render_docling
    from app.core.formats.word import render_docx
    from app.core.formats.workbook import render_xlsx

    doc = _bad_view(tmp_path)
    d = docx.Document(io.BytesIO(render_docx(doc)))
    assert d.paragraphs[0].text == "Title here" and d.paragraphs[0].style.name == "Heading 1"
    t = d.tables[0]
    assert t.cell(0, 0)._tc is t.cell(0, 1)._tc and t.cell(0, 0).text == "Wide"  # colspan
    assert t.cell(1, 0).text == "tall" and t.cell(2, 0)._tc is t.cell(1, 0)._tc  # rowspan
    assert [c.text for c in t.rows[3].cells] == ["a", "b", "c", "extra"] and t.cell(2, 3).text == ""  # ragged
    assert t.cell(2, 1).text == "xy"
    assert any("could not be read" in p.text for p in d.paragraphs)
    html = mammoth.convert_to_html(io.BytesIO(render_docx(doc))).value
    assert 'colspan="2"' in html and 'rowspan="2"' in html

    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(doc)))
    ws = wb["p1 r02"]
    assert {str(r) for r in ws.merged_cells.ranges} == {"A1:B1", "A2:A3"}
    assert ws["B2"].value == "007" and ws["C2"].value == -2.5 and ws["C2"].number_format == "0.00"
    assert ws["B3"].value == "xy" and ws["D4"].value == "extra" and ws["A1"].font.b and ws.freeze_panes == "A2"

    dd = DoclingDocument.model_validate_json(render_docling(doc))
    pic = next(i for i, _ in dd.iterate_items() if isinstance(i, PictureItem))
    assert pic.image is None and pic.caption_text(dd) == "Figure 1: gone."


def test_an_empty_document_gives_readable_files_and_the_same_bytes_twice():
    import docx
    import openpyxl
    from docling_core.types.doc import DoclingDocument

    from app.core.formats.docling_json import render_docling
    from app.core.formats.word import render_docx
    from app.core.formats.workbook import render_xlsx

    empty = view([])
    assert not [p for p in docx.Document(io.BytesIO(render_docx(empty))).paragraphs if p.text]
    wb = openpyxl.load_workbook(io.BytesIO(render_xlsx(empty)))
    assert wb.sheetnames == ["no tables"] and "has no tables" in wb.active["A1"].value
    assert DoclingDocument.model_validate_json(render_docling(empty)).pages
    for render in (render_docx, render_xlsx, render_docling):
        assert render(view([("table", "table", (1.0, 1.0, 99.0, 50.0), "<table><tr><td>1</td></tr></table>")])) \
            == render(view([("table", "table", (1.0, 1.0, 99.0, 50.0), "<table><tr><td>1</td></tr></table>")]))


def test_a_scanned_page_reads_back_the_same_in_word_excel_and_docling(tmp_path):
    """The scan (no text layer: the layout's OCR and the classic engine) through the same read-backs."""
    import mammoth
    import openpyxl
    from docling_core.types.doc import DoclingDocument
    from lxml import html

    from app.core.formats.model import table_grid
    from app.core.formats.workbook import cell_value
    from export_kit import scanned_page

    _, files = convert(scanned_page(tmp_path), tmp_path / "out", "auto", ("json", "docx", "xlsx", "docling"))
    blocks = [b for p in json.loads(files["json"].read_text())["pages"] for b in p["blocks"]]
    expected = _expected(blocks)
    assert len([e for e in expected if e[0] == "p"]) >= 4, expected  # the layout found the paragraphs
    assert _docx_items(files["docx"])[1] == expected
    with open(files["docx"], "rb") as f:
        tree = html.fromstring(f"<div>{mammoth.convert_to_html(f).value}</div>")
    texts = [el.text_content() for el in tree if el.tag != "table" and el.text_content().strip()]
    assert texts == [e[1] for e in expected if e[0] == "p"]
    wb = openpyxl.load_workbook(files["xlsx"])
    for b in (b for b in blocks if b["task"] == "table" and "<table" in b["markdown"]):
        ws = wb[b["id"].replace("-", " ")]
        for c in table_grid(b["markdown"])[0]:
            assert ws.cell(row=c.row + 1, column=c.col + 1).value == cell_value(c.text)[0]
    md = DoclingDocument.load_from_json(files["docling"]).export_to_markdown().replace("\\_", "_")
    words = set(re.findall(r"\w+", md))
    for kind, text in expected:
        if kind == "p":
            assert set(re.findall(r"\w+", text)) <= words, text
