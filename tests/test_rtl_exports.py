"""Right-to-left text in every export: an Arabic page (with Latin digits inside its lines), rendered as an
image and read by the classic engine (Tesseract's ara model through the script router, nothing mocked), is
written in logical order — the order it is typed in, not the order its glyphs stand on the page — in Markdown
and JSON, and marked right to left where the format can say so: `dir="rtl"` in HTML and hOCR, `w:bidi`
paragraphs with `w:rtl` runs in DOCX, BASEDIRECTION="rtl" in ALTO 4.4 (valid against the official schema).
Each file is read back by a consumer nobody here wrote (python-docx, lxml with the ALTO XSD, the standard
library's HTML parser); the window's preview lays the block out from the right."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from export_kit import assert_valid_alto, convert, view
from script_pages import ARABIC, edit_ratio, need_tesseract, render_page

ALTO4 = "{http://www.loc.gov/standards/alto/ns-v4#}"
FIRST_WORD, LAST_WORD = ARABIC[0].text.split()[0], ARABIC[-1].text.split()[-1]
WANT = " ".join(t.text for t in ARABIC)
MAX_EDIT = 0.08  # Tesseract writes alef maksura for a final yeh here and there (one letter in 140)


@pytest.fixture(scope="module")
def arabic(tmp_path_factory):
    need_tesseract("ara")
    folder = tmp_path_factory.mktemp("rtl")
    out, files = convert(render_page(list(ARABIC), folder / "arabic.png"), folder / "out")
    return out, files


def _block(files) -> dict:
    doc = json.loads(Path(files["json"]).read_text(encoding="utf-8"))
    blocks = [b for p in doc["pages"] for b in p["blocks"] if b["text"].strip()]
    assert len(blocks) == 1, [b["text"] for b in blocks]
    return blocks[0]


def test_markdown_and_json_hold_the_arabic_lines_in_logical_order(arabic):
    _, files = arabic
    md = Path(files["markdown"]).read_text(encoding="utf-8")
    body = " ".join(line for line in md.splitlines() if line.strip() and not line.startswith("<a "))
    assert edit_ratio(body, WANT) <= MAX_EDIT, body
    # logical order: the first word typed comes first, the digits as typed (not mirrored: "2024", not "4202")
    assert body.split()[0] == FIRST_WORD and body.index("2024") < body.index("340") < body.index("12 ")
    block = _block(files)
    assert edit_ratio(block["text"], WANT) <= MAX_EDIT and block["text"].split()[0] == FIRST_WORD
    assert block["reader"] == "tesseract:ara"
    lines = block["stats"]["line_stats"]
    assert [s["reader"] for s in lines] == ["tesseract:ara"] * len(ARABIC)
    for got, want in zip(lines, ARABIC):
        assert edit_ratio(got["text"], want.text) <= MAX_EDIT, (got["text"], want.text)


class _Dirs(HTMLParser):
    """Each element's `dir` and the text inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str | None] = []
        self.text: dict[str | None, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "meta", "img", "hr"):
            self.stack.append(dict(attrs).get("dir") or (self.stack[-1] if self.stack else None))

    def handle_endtag(self, tag):
        if self.stack and tag not in ("br", "meta", "img", "hr"):
            self.stack.pop()

    def handle_data(self, data):
        if data.strip():
            self.text.setdefault(self.stack[-1] if self.stack else None, []).append(data.strip())


def test_html_puts_the_block_in_a_right_to_left_division(arabic):
    _, files = arabic
    parser = _Dirs()
    parser.feed(Path(files["html"]).read_text(encoding="utf-8"))
    rtl = " ".join(parser.text.get("rtl", []))
    assert edit_ratio(rtl, WANT) <= MAX_EDIT and rtl.split()[0] == FIRST_WORD
    assert not any(FIRST_WORD in t for d, ts in parser.text.items() if d != "rtl" for t in ts)


def test_docx_paragraphs_are_bidi_with_right_to_left_runs(arabic):
    from docx import Document
    from docx.oxml.ns import qn

    _, files = arabic
    paragraphs = [p for p in Document(files["docx"]).paragraphs if p.text.strip()]
    text = " ".join(p.text for p in paragraphs)
    assert edit_ratio(text, WANT) <= MAX_EDIT and text.split()[0] == FIRST_WORD
    for p in paragraphs:
        assert p._p.pPr is not None and p._p.pPr.find(qn("w:bidi")) is not None, p.text
        arabic_runs = [r for r in p.runs if any("\u0600" <= ch <= "\u06ff" for ch in r.text)]
        assert arabic_runs and all(r.font.rtl for r in arabic_runs)


def test_alto_lines_say_rtl_and_hold_their_strings_in_reading_order(arabic):
    _, files = arabic
    tree = assert_valid_alto(Path(files["alto"]), 4)
    blocks = [b for b in tree.iter(f"{ALTO4}TextBlock") if b.find(f"{ALTO4}TextLine") is not None]
    assert len(blocks) == 1 and blocks[0].get("BASEDIRECTION") == "rtl"
    lines = list(blocks[0].iter(f"{ALTO4}TextLine"))
    assert len(lines) == len(ARABIC)
    for line, want in zip(lines, ARABIC):
        assert line.get("BASEDIRECTION") == "rtl"
        strings = line.findall(f"{ALTO4}String")
        assert edit_ratio(" ".join(s.get("CONTENT") for s in strings), want.text) <= MAX_EDIT
        xs = [int(s.get("HPOS")) for s in strings]
        assert xs == sorted(xs, reverse=True), xs  # the first word read is the rightmost
        for sp in line.findall(f"{ALTO4}SP"):  # every gap lies between its two words
            assert int(sp.get("WIDTH")) >= 0


def test_hocr_paragraph_and_lines_say_rtl_with_words_in_reading_order(arabic):
    from lxml import etree

    _, files = arabic
    tree = etree.parse(str(files["hocr"]))
    ns = {"h": "http://www.w3.org/1999/xhtml"}
    pars = [p for p in tree.iterfind(".//h:p[@class='ocr_par']", ns)]
    assert len(pars) == 1 and pars[0].get("dir") == "rtl"
    lines = pars[0].findall("h:span[@class='ocr_line']", ns)
    assert len(lines) == len(ARABIC)
    for line, want in zip(lines, ARABIC):
        assert line.get("dir") == "rtl"
        words = line.findall("h:span[@class='ocrx_word']", ns)
        assert edit_ratio(" ".join(w.text for w in words), want.text) <= MAX_EDIT
        xs = [int(w.get("title").split(";")[0].split()[1]) for w in words]
        assert xs == sorted(xs, reverse=True), xs


def test_estimated_words_of_a_right_to_left_line_start_at_its_right_end():
    """A block with no measured words (a person's edit, an engine that reports text only): its words are
    spread over the line from the right, still in logical order, and the ALTO (4.4 and 2.1) stays valid."""
    from app.core.formats.alto import render_alto
    from app.core.formats.hocr import render_hocr

    doc = view([("text", "text", (20, 20, 280, 60), ARABIC[0].text),
                ("text", "text", (20, 80, 280, 120), "Plain Latin text 2024")])
    rtl_line, ltr_line = (b.geometry[0] for b in doc.pages[0].blocks)
    assert rtl_line.rtl and not ltr_line.rtl
    assert [w.text for w in rtl_line.words] == ARABIC[0].text.split()
    assert rtl_line.words[0].box[2] == pytest.approx(280)
    assert rtl_line.words[-1].box[0] == pytest.approx(20, abs=1)
    assert ltr_line.words[0].box[0] == pytest.approx(20)
    tree = assert_valid_alto(render_alto(doc, 4), 4)
    assert [b.get("BASEDIRECTION") for b in tree.iter(f"{ALTO4}TextBlock")] == ["rtl", None]
    assert_valid_alto(render_alto(doc, 2), 2)  # ALTO 2.1 has no BASEDIRECTION: left out, still valid
    hocr = render_hocr(doc).decode("utf-8")
    assert hocr.count('dir="rtl"') == 2  # the Arabic paragraph and its line; nothing on the Latin one


def test_the_preview_lays_an_arabic_block_out_from_the_right(qtbot):
    from PySide6.QtCore import Qt

    from app.gui.preview import Preview

    preview = Preview()
    qtbot.addWidget(preview)
    preview.resize(640, 260)
    preview.set_blocks([("p1-r01", "Annual report"), ("p1-r02", "\n".join(t.text for t in ARABIC))])
    preview.render_now()
    preview.show()
    qtbot.waitExposed(preview)
    directions = {}
    block = preview.document().begin()
    while block.isValid():
        if block.text().strip():
            directions[block.text().split()[0]] = block.blockFormat().layoutDirection()
        block = block.next()
    assert directions["Annual"] != Qt.LayoutDirection.RightToLeft
    assert directions[FIRST_WORD] == Qt.LayoutDirection.RightToLeft
    artifacts = Path(__file__).parent / "artifacts"
    artifacts.mkdir(exist_ok=True)
    preview.grab().save(str(artifacts / "preview_rtl.png"))


def test_a_right_to_left_table_runs_from_the_right_in_docx_and_xlsx():
    import io

    from docx import Document
    from docx.oxml.ns import qn
    from openpyxl import load_workbook

    from app.core.formats.word import render_docx
    from app.core.formats.workbook import render_xlsx

    words = ARABIC[0].text.split()
    table = (f"<table><tr><th>{words[0]}</th><th>{words[1]}</th></tr>"
             f"<tr><td>{words[2]}</td><td>2024</td></tr></table>")
    doc = view([("table", "table", (20, 20, 280, 120), table)])
    sheet = load_workbook(io.BytesIO(render_xlsx(doc))).worksheets[0]
    assert sheet.sheet_view.rightToLeft
    assert sheet["A1"].value == words[0] and sheet["A1"].alignment.readingOrder == 2
    assert sheet["B2"].value == 2024 and sheet["B2"].alignment.readingOrder != 2  # a number has no direction
    cells = Document(io.BytesIO(render_docx(doc))).tables[0]._cells
    first = cells[0].paragraphs[0]
    assert first.text == words[0] and first._p.pPr.find(qn("w:bidi")) is not None
    assert cells[3].paragraphs[0]._p.pPr is None or cells[3].paragraphs[0]._p.pPr.find(qn("w:bidi")) is None
