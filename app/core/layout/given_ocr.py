"""The layout's OCR hook when the page's lines were already read: pymupdf4llm calls an OCR function that would
detect and recognise the page again (RapidOCR, in the layout process); `inserting(lines)` is one that only writes
the given lines' text into the page, each in its box (x0, y0, x1, y1 in points, the page as shown), as pymupdf4llm's
own hook writes what RapidOCR read (a CJK-capable font, the text stretched to the box's width), so the layout
model sees the same kind of text layer it was built on; letters that font lacks are written as stand-ins.

What must never live here: detection or recognition, the mapping of the layout's boxes (pymupdf_layout).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Sequence

FULL_PAGE = 0.9  # an image over this share of the page is the scan itself (pymupdf4llm's own bar for a picture)


def inserting(lines: Sequence[Sequence]):
    """pymupdf4llm's `ocr_function(page, dpi=, language=, keep_ocr_text=)` writing `lines` ([x0, y0, x1, y1, text])
    into the page.

    The page's content comes out byte for byte as pymupdf4llm's own hook writes it (`Page.insert_text` with its
    `adjust_width`), but each line goes to `Shape.insert_text` already encoded (`encoded`): given plain text,
    PyMuPDF measures every code point up to the line's highest (65,000 of them for a line with one Chinese
    letter) and looks each character up in the font for its width. Each character is measured here once a page:
    40-125 ms of a scanned page's layout."""

    def ocr_function(page, dpi=None, language=None, keep_ocr_text=False) -> None:  # noqa: ARG001 - its signature
        import pymupdf
        from pymupdf4llm.ocr.exec_ocr_interface import FONT, FONTNAME

        if not lines:
            return
        page.insert_font(fontname=FONTNAME, fontbuffer=FONT.buffer)
        shape = page.new_shape()  # every line in one content stream (`Page.insert_text` adds one per line)
        font = _Measured(FONT)
        for x0, y0, x1, y1, text, *_ in lines:
            rect = pymupdf.Rect(x0, y0, x1, y1)
            if not str(text).strip() or rect.is_empty:
                continue
            size = rect.height
            text = stand_in(str(text), FONT)
            length = font.length(text) * size  # pymupdf4llm's adjust_width, its sum in the same order
            stretch = pymupdf.Matrix(rect.width / length, 1) if length > 0 else pymupdf.Matrix(1, 1)
            shape.insert_text(rect.bl + (0, -0.2 * size), font.encoded(text), fontsize=size, fontname=FONTNAME,
                              morph=(rect.bl, stretch))
        shape.commit()

    return ocr_function


class _Measured:
    """A font's advance and glyph number per character, each looked up once: the sums `Font.text_length` makes
    (`fz_encode_character_with_fallback`, then the advance) and the glyph string `Shape.insert_text` writes for a
    font embedded whole (`fz_encode_character`, four hex digits a glyph, as `Document.get_char_widths` lists
    them)."""

    def __init__(self, font) -> None:
        self.font = font
        self._advance: dict[str, float] = {}
        self._glyph: dict[str, str] = {}

    def length(self, text: str) -> float:
        import pymupdf

        total = 0
        for ch in text:
            advance = self._advance.get(ch)
            if advance is None:
                glyph, font = pymupdf.mupdf.fz_encode_character_with_fallback(self.font.this, ord(ch), 0, 0)
                advance = self._advance[ch] = pymupdf.mupdf.fz_advance_glyph(font, glyph, 0)
            total += advance
        return total

    def encoded(self, text: str) -> str:
        """`text` as the TJ operand `Shape.insert_text` passes on as it is; a text it would split into lines
        (a line or paragraph separator in it) is left to it."""
        import pymupdf

        if len(text.splitlines()) != 1:
            return text
        glyphs = self._glyph
        for ch in set(text) - glyphs.keys():
            glyphs[ch] = "%04x" % pymupdf.mupdf.fz_encode_character(self.font.this, ord(ch))
        return "[<" + "".join(glyphs[ch] for ch in text) + ">]"


def stand_in(text: str, font) -> str:
    """`text` with each letter `font` has no glyph for (Arabic, Devanagari, Thai in pymupdf4llm's CJK font) written
    as "o": the layout sees a line of text filling its box, not missing glyphs that come back as U+FFFD in
    boxes of another size (the engine is given the line's own reading: app.core.pipeline.page_ocr)."""
    return "".join(c if c.isspace() or font.has_glyph(ord(c)) else "o" for c in text)


@contextmanager
def lines_written(lines: Sequence[Sequence] | None):
    """While pymupdf4llm reads a page whose lines are given (`lines` not None): its per-page question "does this
    page need OCR?" is answered yes at once. It would answer from a full rendering of the page and its edge
    statistics (0.26 s on a 300-DPI scan) only to run the hook that writes the lines, and a "no" (a page it took
    for a photo) would leave the layout with no text where the recogniser read lines. Pages read from their text
    layer (`lines` None) keep its own answer, and so do pages of mostly vertical lines (a Chinese page set in
    columns): written as horizontal lines of the text layer they would mislead the layout, while its own look at
    such a page finds no text and leaves the page to be read whole."""
    from pymupdf4llm.helpers import document_layout

    decide = getattr(document_layout, "make_ocr_decision", None)
    if lines is None or decide is None or 2 * sum(map(_upright, lines)) < len(lines):
        yield
        return
    document_layout.make_ocr_decision = lambda page, use_ocr: (True, 0, False)  # OCR it; no earlier OCR spans
    try:
        yield
    finally:
        document_layout.make_ocr_decision = decide


@contextmanager
def scan_image_unlisted(lines: Sequence[Sequence] | None, doc, index: int):
    """While pymupdf4llm lays out page `index` of `doc` with its lines given (`lines` not None), where the page's
    one image covers FULL_PAGE of it or more (a scan): its text page is made without that image. pymupdf4llm lists
    the page's blocks as a dict, and MuPDF writes each image of the list out as a PNG, a scan stored deflated
    (every page that came as a PNG) anew each time: 80-250 ms a page. What the layout does with the image of a
    scan: no orphan picture (pymupdf4llm leaves an image of 90 % of the page or more aside), no reading-order
    vector (it lies within no body), and a picture box it would have grown to the whole page only when that
    picture is the page's one box. Pages with other images, or read from their text layer, are left as they
    are."""
    import pymupdf
    from pymupdf4llm.helpers import document_layout

    flags = getattr(document_layout, "FLAGS", None)
    if lines is None or flags is None or not _one_page_image(doc.load_page(index)):
        yield
        return
    document_layout.FLAGS = flags & ~pymupdf.TEXT_PRESERVE_IMAGES
    try:
        yield
    finally:
        document_layout.FLAGS = flags


def _one_page_image(page) -> bool:
    """Is the page's one image over FULL_PAGE of it (a scan)?"""
    import pymupdf

    info = page.get_image_info()
    return len(info) == 1 and abs(pymupdf.Rect(info[0]["bbox"]) & page.rect) >= FULL_PAGE * abs(page.rect)


def _upright(line: Sequence) -> bool:
    """Is a given line written across (wider than tall, or a single letter)?"""
    x0, y0, x1, y1, text = line[:5]
    return x1 - x0 >= y1 - y0 or len(str(text).strip()) <= 1
