"""The given lines written into a scan's page for the layout (app.core.layout.given_ocr.inserting) come out byte
for byte as PyMuPDF writes them from plain text with pymupdf4llm's own width stretch: the glyph string and the
width are worked out here once a character (PyMuPDF measured every code point up to a line's highest), and the
layout must see the very same text layer. Real PyMuPDF and pymupdf4llm, a real scan of the development set."""
from __future__ import annotations

from pathlib import Path

import pymupdf

from app.core.layout.given_ocr import inserting, stand_in

PAGE = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s15-chinese-journal.jpg"
LINES = [  # [x0, y0, x1, y1, text] in points: what a scan's lines read as, in several scripts and shapes
    [40.0, 40.0, 560.0, 58.0, "自底向上的表格结构识别深度学习算法框架"],
    [40.0, 62.0, 560.0, 76.0, "Table structure recognition — “bottom-up” (Shigarov, 2016)"],
    [40.0, 80.0, 300.0, 92.0, "Ελληνικά · Кириллица · ไทย · हिन्दी · العربية"],
    [40.0, 96.0, 300.0, 108.0, "a\ttab, ½ and ﬁ ligature, 𝔄 outside the BMP"],
    [40.0, 112.0, 300.0, 124.0, "a line\u2028with a separator"],
    [40.0, 128.0, 300.0, 140.0, "   "],  # blank: not written
    [40.0, 144.0, 40.0, 150.0, "no width"],  # an empty box: not written
    [310.0, 96.0, 330.0, 140.0, "竖"],  # one letter in a tall box
]


def _page_content(write) -> tuple[bytes, str]:
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    page.insert_image(page.rect, filename=str(PAGE))
    write(page)
    content = b"".join(doc.xref_stream(x) or b"" for x in page.get_contents())
    return content, page.get_text()


def _as_pymupdf_writes(page) -> None:
    """Plain text through `Shape.insert_text`, stretched by pymupdf4llm's `adjust_width`: the former hook."""
    from pymupdf4llm.ocr.exec_ocr_interface import FONT, FONTNAME, adjust_width

    page.insert_font(fontname=FONTNAME, fontbuffer=FONT.buffer)
    shape = page.new_shape()
    for x0, y0, x1, y1, text in LINES:
        rect = pymupdf.Rect(x0, y0, x1, y1)
        if not text.strip() or rect.is_empty:
            continue
        text = stand_in(text, FONT)
        shape.insert_text(rect.bl + (0, -0.2 * rect.height), text, fontsize=rect.height, fontname=FONTNAME,
                          morph=(rect.bl, adjust_width(text, rect.height, rect)))
    shape.commit()


def test_the_lines_written_are_byte_identical_to_pymupdfs_own_writing():
    ours, our_text = _page_content(inserting(LINES))
    theirs, their_text = _page_content(_as_pymupdf_writes)
    assert ours == theirs
    assert our_text == their_text
    assert "自底向上" in our_text and "bottom-up" in our_text


def test_a_page_of_no_lines_is_left_as_it_is():
    blank, _ = _page_content(lambda page: None)
    written, _ = _page_content(inserting([]))
    assert written == blank
