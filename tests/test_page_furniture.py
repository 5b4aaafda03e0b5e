"""Page furniture by more than position (app.core.layout.furniture): a running header that repeats on the
document's pages is left out even in the body's own font; a one-page document's first paragraph near the top
edge is read; page numbers and margin lines set unlike the body stay furniture."""
from __future__ import annotations

import pymupdf
import pytest

from app.core.layout.furniture import NeighbourMargins, furniture_reason, settle
from app.core.layout.page_boxes import Line

BODY = ("Times-Roman", 10.0)


def _box(cls, x0, y0, x1, y1) -> dict:
    return {"boxclass": cls, "x0": x0, "y0": y0, "x1": x1, "y1": y1}


def _convert(path) -> str:
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(engine="auto", text_layer="prefer"))
    try:
        return pipe.run(path).to_markdown(anchors=False)
    finally:
        pipe.close()


def _body(page, n: int, top: float = 120) -> None:
    for k in range(14):
        text = f"Body line {k + 1} of page {n + 1}: the study of lichens on old walls."
        page.insert_text((72, top + 16 * k), text, fontsize=10, fontname="tiro")


def test_a_header_the_layout_guessed_from_position_alone_is_body_text():
    line = Line((72, 40, 500, 52), "Results of the survey were mixed, and we say why.", False, False, *BODY)
    boxes = [_box("page-header", 72, 40, 500, 52), _box("text", 72, 120, 500, 600)]
    body = [Line((72, 120 + 16 * k, 500, 130 + 16 * k), "a line of the body text in its own font", False,
                 False, *BODY) for k in range(20)]
    settle(boxes, lambda b: [line] if b[1] < 60 else body, 792.0, [line] + body, None)
    assert boxes[0]["boxclass"] == "text"


def test_page_numbers_and_margin_lines_set_apart_stay_furniture():
    body = BODY
    number = Line((300, 760, 310, 770), "7", False, False, *body)
    assert furniture_reason([number], number.box, 792.0, body, None) == "page number"
    small = Line((72, 30, 300, 38), "Journal of Lichens, Vol. 3", False, False, "Times-Italic", 8.0)
    reason = furniture_reason([small], small.box, 792.0, body, None)
    assert reason == "near the page's edge, set unlike the body"
    same = Line((72, 30, 300, 40), "Journal of Lichens, Vol. 3", False, False, *body)
    assert furniture_reason([same], same.box, 792.0, body, None) is None  # its position alone says nothing
    low = Line((72, 300, 300, 310), "7", False, False, *body)
    assert furniture_reason([low], low.box, 792.0, body, None) == "page number"


def test_a_header_repeated_on_nearby_pages_is_found_in_the_text_layer(tmp_path):
    from app.core.document import open_document

    doc = pymupdf.open()
    for n in range(3):
        page = doc.new_page()
        page.insert_text((72, 40), f"LICHENS OF THE NORTH - {n + 1}", fontsize=10, fontname="tiro")
        _body(page, n)
    doc.save(tmp_path / "three.pdf")
    document = open_document(tmp_path / "three.pdf")
    try:
        near = NeighbourMargins()
        near.at(document, 1)
        line = Line((72, 32, 260, 42), "LICHENS OF THE NORTH - 2", False, False, *BODY)
        assert furniture_reason([line], line.box, 792.0, BODY, near) == "repeated on a nearby page"
        other = Line((72, 32, 260, 42), "A paragraph that opens this page", False, False, *BODY)
        assert furniture_reason([other], other.box, 792.0, BODY, near) is None
    finally:
        document.close()


@pytest.mark.slow
def test_a_running_header_in_the_body_font_is_left_out_and_a_lone_pages_top_paragraph_kept(tmp_path):
    doc = pymupdf.open()
    for n in range(3):
        page = doc.new_page()
        page.insert_text((72, 40), "LICHENS OF THE NORTH", fontsize=10, fontname="tiro")
        _body(page, n)
        page.insert_text((300, 760), str(n + 1), fontsize=10, fontname="tiro")
    doc.save(tmp_path / "running.pdf")
    text = _convert(tmp_path / "running.pdf")
    assert "Body line 14 of page 3" in text and "Body line 1 of page 1" in text
    assert "LICHENS OF THE NORTH" not in text
    assert not any(line.strip() in {"1", "2", "3"} for line in text.splitlines())

    one = pymupdf.open()
    page = one.new_page(width=420, height=595)  # A5; PyMuPDF's layout calls the first line a page header
    page.insert_text((30, 30), "We met at noon and agreed on the plan for spring.", fontsize=10,
                     fontname="tiro")
    for k in range(8):
        page.insert_text((30, 120 + 16 * k), f"The note goes on with line {k + 1} of its body text.",
                         fontsize=10, fontname="tiro")
    one.save(tmp_path / "note.pdf")
    note = _convert(tmp_path / "note.pdf")
    assert "We met at noon and agreed on the plan for spring." in note
    assert "line 8 of its body text" in note


def test_a_reports_footnotes_are_read_at_their_columns_foot_and_its_running_header_left_out():
    """A real two-column report page (docling's test PDF, corpora/realdocs/d06): the layout calls its five
    footnotes `footnote` and its running title `page-header`. The footnotes are the page's text (its sources and
    the law it quotes) and are read, each after the column it ends; the running title is furniture."""
    from pathlib import Path

    pdf = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "d06-report-p2.pdf"
    md = _convert(pdf)
    assert "이슈와 논점" not in md  # the running title
    body_end, column_two = md.index("이번에 개"), md.index("정된 법에서")
    for mark in ("3) 개정 이유는", "4) 2. 가."):
        assert body_end < md.index(mark) < column_two, mark
    for mark in ("5) 「생명보험 표준약관 부표4」", "6) 한국표준질병사인분류", "7) 제5조(약관의 해석)"):
        assert md.index(mark) > column_two, mark


def test_footnotes_go_to_docling_as_footnote_items_of_the_body(tmp_path):
    """docling-core reads our DoclingDocument JSON of the real report page (corpora/realdocs/d05): its four
    footnotes are `footnote` items in the body, and docling's own Markdown holds them."""
    from pathlib import Path

    from docling_core.types.doc import ContentLayer, DocItemLabel, DoclingDocument
    from export_kit import convert

    pdf = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "d05-report-p1.pdf"
    _, files = convert(pdf, tmp_path, formats=("docling",))
    dd = DoclingDocument.load_from_json(files["docling"])
    notes = [t for t in dd.texts if t.label == DocItemLabel.FOOTNOTE]
    assert len(notes) == 4 and all(t.content_layer == ContentLayer.BODY for t in notes)
    assert notes[0].text.startswith("1) 손해보험의 표준약관")
    assert "1) 손해보험의 표준약관" in dd.export_to_markdown()
