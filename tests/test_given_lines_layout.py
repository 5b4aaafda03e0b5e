"""The layout of a scan whose lines the pipeline already read (app.core.layout.given_ocr): the lines are written
into the page as its text layer and pymupdf4llm's layout model lays them out. Real pymupdf4llm, a real scan of the
development set (OCR-D's Kant page, corpora/realdocs/s08), run in this process."""
from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.core.layout.budget import parse_page

PAGE = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s08-kant-17.jpg"
LINES = [  # [x0, y0, x1, y1, text] in points
    [80.0, 270.0, 690.0, 300.0, "Beantwortung der Frage: Was ist Aufklärung?"],
    [80.0, 330.0, 690.0, 352.0, "Aufklärung ist der Ausgang des Menschen aus seiner"],
    [80.0, 356.0, 690.0, 378.0, "selbst verschuldeten Unmündigkeit. Unmündigkeit ist"],
    [80.0, 382.0, 690.0, 404.0, "das Unvermögen, sich seines Verstandes ohne Leitung"],
]


def _scan_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=720, height=1100)
    page.insert_image(page.rect, filename=str(PAGE))
    return doc.tobytes()


def _text(parsed: dict) -> str:
    return " ".join(s["text"] for b in parsed.get("boxes") or [] for ln in b.get("textlines") or []
                    for s in ln.get("spans") or [])


@pytest.mark.slow
def test_a_scan_the_layout_would_take_for_a_photo_is_laid_out_from_its_given_lines():
    """pymupdf4llm's own look at this page (a yellowed Fraktur print) says it needs no OCR, which left the page
    with no layout at all; given lines are written in and laid out, and the page is not rendered for the look."""
    from pymupdf4llm.helpers import document_layout

    looked = []
    decide = document_layout.make_ocr_decision
    document_layout.make_ocr_decision = lambda page, mode: looked.append(page) or decide(page, mode)
    try:
        with pymupdf.open(stream=_scan_pdf(), filetype="pdf") as doc:
            assert decide(doc[0], 2)[0] is False  # its own look: no OCR
        with pymupdf.open(stream=_scan_pdf(), filetype="pdf") as doc:
            parsed = parse_page(doc, 0, True, LINES)
    finally:
        document_layout.make_ocr_decision = decide
    assert not looked
    assert "Was ist Aufklärung?" in _text(parsed) and "Unvermögen" in _text(parsed)
    assert document_layout.make_ocr_decision is decide  # put back


@pytest.mark.slow
def test_a_page_of_vertical_lines_keeps_the_layouts_own_look():
    """Columns of vertical text written as horizontal lines would mislead the layout: there the layout's own
    answer stands (here: no OCR, so no text and the page is read whole)."""
    from pymupdf4llm.helpers import document_layout

    vertical = [[100.0 + 60 * k, 100.0, 140.0 + 60 * k, 900.0, "是非不得問之人要取之"] for k in range(4)]
    looked = []
    decide = document_layout.make_ocr_decision
    document_layout.make_ocr_decision = lambda page, mode: looked.append(page) or decide(page, mode)
    try:
        with pymupdf.open(stream=_scan_pdf(), filetype="pdf") as doc:
            parsed = parse_page(doc, 0, True, vertical)
    finally:
        document_layout.make_ocr_decision = decide
    assert looked and "是非" not in _text(parsed)
