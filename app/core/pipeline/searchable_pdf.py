"""The searchable PDF: the source's own pages with an invisible text layer (PDF text render mode 3) placed from the
region boxes, one line of text per band of the box when the block's text has several lines, so that selecting and
searching in any PDF viewer finds the reviewed text where it stands on the page.

Which page goes in: an image-only PDF page is copied as it is (its vectors and images untouched); a page that
already has a text layer of its own, or is rotated, goes in as its rendering (what the reviewer saw), so a search
finds the reviewed text once and the boxes need no rotation; an image file's frames go in as images at their own
size. The text is the block's Markdown as exported (a person's edit included) reduced to plain text (tags, heading
markers and `$$` removed; a table one line per row). Bytes are deterministic (no dates, no random file id), so the
window's export and `convert` write the same file.

What must never live here: decoding, layout, Qt, choosing which files a run writes (app.core.pipeline.output).
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from app.core.regions import Region
from app.core.textlayer import normalise

RASTER_DPI = 150.0  # pages that go in as their rendering
_ROW_END = re.compile(r"</tr\s*>", re.I)
_CELL_END = re.compile(r"</t[dh]\s*>", re.I)
PLACED_TASKS = ("text", "table", "formula")


def block_lines(markdown: str, task: str) -> list[str]:
    """The plain-text lines of a block's Markdown, as the invisible layer holds them."""
    if task == "table":
        rows = _ROW_END.split(_CELL_END.sub(" ", markdown))
    else:
        rows = markdown.split("\n")
    lines = [normalise(r) for r in rows]
    return [ln for ln in lines if ln]


def _font_for(lines: Iterable[str]):
    import pymupdf

    text = "".join(lines)
    return pymupdf.Font("helv") if all(ord(c) < 256 for c in text) else pymupdf.Font("cjk")


def place_text(page, box: tuple[float, float, float, float], lines: list[str]) -> None:
    """Write `lines` invisibly into `box` (points, top-left origin): the box split into equal bands, each line
    scaled to its band's height and stretched to the box's width, so a selection covers the words on the page."""
    import pymupdf

    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    if not lines or width <= 1 or height <= 1:
        return
    font = _font_for(lines)
    band = height / len(lines)
    em = max(font.ascender - font.descender, 1e-3)  # a line's extent, top of ascenders to foot of descenders
    size = max(0.5, band / em)
    for i, line in enumerate(lines):
        natural = font.text_length(line, fontsize=size)
        if natural <= 0:
            continue
        start = pymupdf.Point(x0, y0 + band * i + font.ascender * size)  # the baseline: the line fills its band
        writer = pymupdf.TextWriter(page.rect)
        writer.append(start, line, font=font, fontsize=size)
        writer.write_text(page, render_mode=3, morph=(start, pymupdf.Matrix(width / natural, 1)))


def render_pdf(source_path: str, pages: Sequence[tuple[int, Sequence[Region]]], blocks_markdown: dict[str, str],
               password: str | None = None) -> bytes:
    """The searchable PDF of the document at `source_path`, its `pages` (index, regions) in order, as bytes.
    `blocks_markdown`: region id → the Markdown the export writes for the block. Raises OSError with a message for a
    person when the source cannot be read."""
    import pymupdf

    from app.core.document import DocumentError, open_document

    try:
        source = open_document(source_path, password)
    except DocumentError as exc:
        raise OSError(f"the searchable PDF needs the source document: {exc}") from None
    pdf = pymupdf.open()
    try:
        for index, regions in pages:
            page = _add_page(pdf, source, index)
            for region in sorted(regions, key=lambda r: r.order):
                if region.task not in PLACED_TASKS:
                    continue
                lines = block_lines(blocks_markdown.get(region.id, ""), region.task)
                place_text(page, tuple(region.box_pt), lines)
        pdf.set_metadata({"title": source.title or "", "producer": "Scriptorium", "creator": "Scriptorium"})
        return pdf.tobytes(garbage=3, deflate=True, no_new_id=True)
    except (RuntimeError, ValueError, DocumentError) as exc:  # a damaged page of the source: said, not a traceback
        raise OSError(f"the searchable PDF could not be made from {source.name}: {exc}") from None
    finally:
        pdf.close()
        source.close()


def _add_page(pdf, source, index: int):
    """The source's page `index` appended to `pdf` (see the module docstring for which form it takes)."""
    import pymupdf

    w, h = source.page_size_pt(index)
    if source.kind == "pdf":
        src = source.mupdf
        with source.lock:
            original = src[index]
            if original.rotation == 0 and not source.has_text_layer(index):
                pdf.insert_pdf(src, from_page=index, to_page=index)
                return pdf[-1]
    dpi = RASTER_DPI if source.kind == "pdf" else (source.native_dpi(index) or 72.0)
    image = source.render(index, dpi)
    import io

    buf = io.BytesIO()
    image.save(buf, format="JPEG" if source.kind == "pdf" else "PNG", quality=85, optimize=False)
    page = pdf.new_page(width=w, height=h)
    page.insert_image(pymupdf.Rect(0, 0, w, h), stream=buf.getvalue())
    return page
