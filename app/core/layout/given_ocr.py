"""The layout's OCR hook when the page's lines were already read: pymupdf4llm calls an OCR function that would
detect and recognise the page again (RapidOCR, in the layout process); `inserting(lines)` is one that only writes
the given lines' text into the page, each in its box (x0, y0, x1, y1 in points, the page as shown), as pymupdf4llm's
own hook writes what RapidOCR read (a CJK-capable font, the text stretched to the box's width), so the layout
model sees the same kind of text layer it was built on; letters that font lacks are written as stand-ins.

What must never live here: detection or recognition, the mapping of the layout's boxes (pymupdf_layout).
"""
from __future__ import annotations

from typing import Sequence


def inserting(lines: Sequence[Sequence]):
    """pymupdf4llm's `ocr_function(page, dpi=, language=, keep_ocr_text=)` writing `lines` ([x0, y0, x1, y1, text])
    into the page."""

    def ocr_function(page, dpi=None, language=None, keep_ocr_text=False) -> None:  # noqa: ARG001 - its signature
        import pymupdf
        from pymupdf4llm.ocr.exec_ocr_interface import FONT, FONTNAME, adjust_width

        if not lines:
            return
        page.insert_font(fontname=FONTNAME, fontbuffer=FONT.buffer)
        for x0, y0, x1, y1, text, *_ in lines:
            rect = pymupdf.Rect(x0, y0, x1, y1)
            if not str(text).strip() or rect.is_empty:
                continue
            size = rect.height
            text = stand_in(str(text), FONT)
            page.insert_text(rect.bl + (0, -0.2 * size), text, fontsize=size, fontname=FONTNAME,
                             morph=(rect.bl, adjust_width(text, size, rect)))

    return ocr_function


def stand_in(text: str, font) -> str:
    """`text` with each letter `font` has no glyph for (Arabic, Devanagari, Thai in pymupdf4llm's CJK font) written
    as "o": the layout sees a line of text filling its box, not missing glyphs that come back as U+FFFD in
    boxes of another size (the engine is given the line's own reading: app.core.pipeline.page_ocr)."""
    return "".join(c if c.isspace() or font.has_glyph(ord(c)) else "o" for c in text)
