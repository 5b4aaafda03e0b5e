"""The searchable PDF: the source's own pages with an invisible text layer (PDF text render mode 3) placed from the
region boxes, so that selecting and searching in any PDF viewer finds the reviewed text where it stands on the page.
The text goes where the one geometry model puts it (app.core.formats.geometry, as ALTO and hOCR do): where the
engine found the block's lines (the built-in and classic engines' `stats["line_boxes"]`, in crop pixels, mapped to
points by the crop's DPI and origin the pipeline records as `stats["crop"]`; the classic layout's own line OCR,
`extra["ocr_lines"]`, in points), each line's text lies over its own line box: the block's words go to the line
that read them, or, once a person's edit changed them, flow over the lines in proportion to what each line read.
A text block whose engine reports only its text goes over the lines a line finder sees in its crop
(app.core.pipeline.found_lines). Otherwise the box is split into equal bands, one per line of the block's text.

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

from app.core.formats.geometry import Line, assign_lines, bands, block_geometry
from app.core.formats.geometry import line_boxes_pt, lines_inside  # noqa: F401 - named here too (callers, tests)
from app.core.pipeline.found_lines import found_lines
from app.core.document.regions import Region
from app.core.text.textlayer import normalise

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


def place_line(page, font, box: Sequence[float], line: str) -> None:
    """Write `line` invisibly over `box` (points): scaled to the box's height, stretched to its width."""
    import pymupdf

    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    em = max(font.ascender - font.descender, 1e-3)  # a line's extent, top of ascenders to foot of descenders
    size = max(0.5, height / em)
    natural = font.text_length(line, fontsize=size)
    if natural <= 0 or width <= 0.5 or height <= 0.5:
        return
    start = pymupdf.Point(x0, y0 + font.ascender * size)  # the baseline: the line fills the box's height
    writer = pymupdf.TextWriter(page.rect)
    writer.append(start, line, font=font, fontsize=size)
    writer.write_text(page, render_mode=3, morph=(start, pymupdf.Matrix(width / natural, 1)))


def place_text(page, box: tuple[float, float, float, float], lines: list[str],
               line_boxes: Sequence[tuple[Sequence[float], str | None]] = ()) -> None:
    """Write `lines` invisibly into `box` (points, top-left origin): over the engine's `line_boxes` (points, each
    with the text that line read, None when unknown) when there are any, else into equal bands of the box."""
    x0, y0, x1, y1 = box
    if not lines or x1 - x0 <= 1 or y1 - y0 <= 1:
        return
    placed = ([Line(tuple(b), t) for b, t in zip((b for b, _ in line_boxes), assign_lines(lines, line_boxes))]
              if line_boxes else bands(box, lines))
    place_lines(page, placed)


def place_lines(page, lines: Sequence[Line]) -> None:
    """Write each line's text invisibly over its box (app.core.formats.geometry: the one geometry model)."""
    lines = [ln for ln in lines if ln.text]
    if not lines:
        return
    font = _font_for(ln.text for ln in lines)
    for ln in lines:
        place_line(page, font, ln.box, ln.text)


def crop_note(box_pt: Sequence[float], dpi: float) -> dict:
    """What maps a crop's pixels to page points: its DPI and the page pixel it starts at (`stats["crop"]`)."""
    from app.core.document.base import crop_origin

    return {"dpi": float(dpi), "origin": list(crop_origin(tuple(box_pt), dpi))}


def noting_crop(emit, note: dict):
    """`emit`, with `note` (crop_note) recorded in the stats of the RegionFinished it passes on (before it goes on,
    so the window records the same stats as the pipeline)."""
    from app.core.record.events import RegionFinished

    def wrapped(event) -> None:
        if isinstance(event, RegionFinished) and isinstance(event.stats, dict):
            event.stats.setdefault("crop", note)
        emit(event)

    return wrapped


def render_pdf(source_path: str, pages: Sequence[tuple[int, Sequence[Region]]], blocks_markdown: dict[str, str],
               password: str | None = None, turns: dict[int, tuple[int, float]] | None = None) -> bytes:
    """The searchable PDF of the document at `source_path`, its `pages` (index, regions) in order, as bytes.
    `blocks_markdown`: region id → the Markdown the export writes for the block; `turns`: page → (turn, skew) of the
    pages read turned (app.core.pipeline.orient), which go in as read. Raises OSError with a message for a person
    when the source cannot be read."""
    import pymupdf

    from app.core.document import DocumentError, open_document

    try:
        source = open_document(source_path, password)
    except DocumentError as exc:
        raise OSError(f"the searchable PDF needs the source document: {exc}") from None
    pdf = pymupdf.open()
    try:
        for index, regions in pages:
            if (turns or {}).get(index, (0, 0.0)) != (0, 0.0):
                source.set_orientation(index, *turns[index])  # the boxes are of the page as read
            page = _add_page(pdf, source, index)
            for region in sorted(regions, key=lambda r: r.order):
                if region.task not in PLACED_TASKS:
                    continue
                lines = block_lines(blocks_markdown.get(region.id, ""), region.task)
                place_lines(page, block_geometry(region, lines, found=found_lines(source, region) if lines else ()))
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
            if original.rotation == 0 and not source.has_text_layer(index) and not source.turned(index):
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
