"""PyMuPDF's built-in layout analysis (pymupdf4llm ≥ 2 with its ONNX model; no download).

Born-digital pages are analysed from their content; pages without a text layer (scans, image files) go through
pymupdf4llm's OCR hook, which uses RapidOCR when it is installed (its wheel ships its ONNX models).
The layout's `boxclass` is mapped onto the PP-DocLayoutV3 vocabulary so routing and assembly treat both alike;
the original goes to `region.extra["native_label"]`.

Headings: PyMuPDF ranks section headers per page (`header_level` 1 is the largest on *that* page), so a page
without a title would promote its first section to a title. Only the document's title becomes `doc_title`
(`# `): the first level-1 header (or `title` box) on the document's first page, and only when its font is larger
than every other header on that page and than any text on the next pages. Every other header is a
`paragraph_title` (`## `).

Before mapping, app.core.layout.page_boxes corrects the boxes (text inside pictures kept, table boxes widened to
the table finder's, math vs prose) and attaches the layout's OCR lines; they reach the region as
`extra["ocr_lines"]` ([x0, y0, x1, y1, text] in points, then {"reader", "vertical"} where the OCR hook said
who read the line: app.core.layout.ocr_scripts) and `extra["layer_table"]` (the finder's HTML).
"""
from __future__ import annotations

from app.core.layout.base import LayoutError, make_regions
from app.core.layout.columns import cut_columns
from app.core.layout.ocr_scripts import line_record
from app.core.layout.page_boxes import MarginMemory, fulltext_lines, refine
from app.core.layout.postprocess import Detection, clamp_boxes
from app.core.document.regions import Region

BOXCLASS_TO_LABEL = {
    "title": "doc_title",
    "section-header": "paragraph_title",
    "text": "text",
    "list-item": "text",
    "table": "table",
    "picture": "image",
    "formula": "formula",
    "caption": "figure_title",
    "footnote": "footnote",
    "page-header": "header",
    "page-footer": "footer",
    "code": "algorithm",
    "picture-text": "text",  # the text inside a picture box (app.core.layout.page_boxes)
}


TITLE_LOOKAHEAD_PAGES = 3  # pages after the first whose largest text a title must exceed


def map_boxclass(box: dict) -> str:
    """The canonical label of one box, without document context: every heading is a section title here;
    `title_index` picks the one that is the document's title."""
    cls = box.get("boxclass") or "text"
    if cls == "title":
        return "paragraph_title"
    return BOXCLASS_TO_LABEL.get(cls, "text")


def _is_heading(box: dict) -> bool:
    return (box.get("boxclass") or "") in ("title", "section-header")


def title_index(boxes: list[dict], page: int, later_max_size: float | None = None) -> int | None:
    """Which box of page `page` is the document's title (None: none). Only the first page has one: its first
    `title` box or level-1 section header, when no other heading on the page (nor any text on the following pages,
    `later_max_size`) is as large."""
    if page != 0:
        return None
    heads = [i for i, b in enumerate(boxes) if _is_heading(b)]
    first = next((i for i in heads if boxes[i].get("boxclass") == "title" or boxes[i].get("header_level") == 1), None)
    if first is None:
        return None
    size = boxes[first].get("max_fontsize")
    if not size:  # no font sizes (an OCR'd scan): PyMuPDF's own ranking is all there is
        return first
    others = [boxes[i].get("max_fontsize") or 0 for i in heads if i != first]
    if any(o >= size for o in others) or (later_max_size is not None and later_max_size >= size):
        return None
    return first


JPEG_PIXELS = 2_000_000  # a scan page this large goes to the layout as JPEG when it runs no OCR (`layout_image`)


def layout_image(document, index: int) -> bytes:
    """The page image for the layout child when the page's lines are given (it runs no OCR on it): the image file's
    own bytes where they are the page as read (`source_bytes`: a JPEG, or a PNG under JPEG_PIXELS), else the page
    as read (`Document.image_bytes`, PNG), but JPEG for a large page. Encoded as PNG, a skewed 300-DPI scan was
    25 MB: 0.9 s to encode, more to send and to decode each of the four times the layout lists the page's blocks
    (its layout 2.0 s a page, 0.7 s as JPEG; the regions of the real set's large scans the same). Small pages keep
    PNG: it costs little there, and the layout model's reading of a small table crop moved with JPEG's artefacts
    (a JPEG file is given as it is: its pixels are the ones read). A JPEG passes through MuPDF's listing of the
    page's blocks as it is stored, where a PNG is written out again each time; encoded afresh by Pillow, it also
    cost the parent 30-100 ms."""
    import io

    from app.core.document.base import DEFAULT_DPI

    page = document.render(index, document.native_dpi(index) or DEFAULT_DPI)
    own = document.source_bytes(index) if hasattr(document, "source_bytes") else None
    if own is not None and (own[:2] == b"\xff\xd8" or page.width * page.height < JPEG_PIXELS):
        return own
    if page.width * page.height < JPEG_PIXELS:
        return document.image_bytes(index)
    buf = io.BytesIO()
    page.convert("RGB").save(buf, format="JPEG", quality=92)
    return buf.getvalue()


def _displayed(parsed: dict, shown_size: tuple[float, float]) -> bool:
    """Are the layout's boxes in the page's displayed (rotated) frame? True when the page size it reports is the
    displayed one, and the page is not square (then both frames have the same size and nothing tells them apart)."""
    w, h = float(parsed.get("width") or 0.0), float(parsed.get("height") or 0.0)
    sw, sh = shown_size
    return abs(sw - sh) > 1 and abs(w - sw) < 1 and abs(h - sh) < 1


class PyMuPDFLayout:
    name = "pymupdf"
    overlaps = True  # it lays a page out in another process: `analyse(meanwhile=...)` runs the caller's work then

    def __init__(self, use_ocr: bool = True, **_ignored) -> None:
        self.use_ocr = use_ocr
        self._later_size: tuple[tuple, float | None] | None = None  # (document key, size) of the last document
        self._margins = MarginMemory()  # the running headers/footers of the document being read
        import importlib.util

        if importlib.util.find_spec("pymupdf4llm") is None:  # imported in the layout process only
            raise LayoutError("PyMuPDF layout is not available; install pymupdf4llm >= 2")

    def analyse(self, document, index, image, dpi, *, keep_headers: bool = False, cancel=None,
                timeout: float | None = None, page_lines: list | None = None, meanwhile=None) -> list[Region]:
        """The page's regions. The analysis runs in a child process under `timeout` seconds (LayoutTimeout past
        it) and stops at once on `cancel` or Ctrl+C (app.core.layout.budget); timed as the "layout" stage, the
        child's detector and recogniser apart (app.core.base.stages). `page_lines` ([x0, y0, x1, y1, text] in
        points, the page as shown): a scan's lines the pipeline already read, inserted in place of the layout's own
        OCR (none is run). `meanwhile`: the caller's work for this page that needs no layout, done while the child
        lays the page out."""
        from app.core.base.stages import stage

        with stage("layout"):
            return self._analyse(document, index, image, dpi, keep_headers=keep_headers, cancel=cancel,
                                 timeout=timeout, page_lines=page_lines, meanwhile=meanwhile)

    def _analyse(self, document, index, image, dpi, *, keep_headers: bool, cancel, timeout,
                 page_lines=None, meanwhile=None) -> list[Region]:
        import pymupdf

        from app.core.layout.budget import shared_process

        tmp = pymupdf.open()
        try:
            if document.kind == "pdf" and not document.turned(index):
                with document.lock:
                    page = document.mupdf.load_page(index)
                    rot = page.rotation_matrix if page.rotation else None
                    if document.mupdf.is_pdf:
                        tmp.insert_pdf(document.mupdf, from_page=index, to_page=index)
                    else:  # XPS, EPUB, CBZ: MuPDF writes the page as PDF
                        tmp.close()
                        tmp = pymupdf.open("pdf", document.mupdf.convert_to_pdf(index, index))
            else:  # an image page (or a page read turned): wrap it in a one-page PDF so the layout can read it
                w_pt, h_pt = document.page_size_pt(index)
                page = tmp.new_page(width=w_pt, height=h_pt)
                page.insert_image(page.rect, stream=document.image_bytes(index) if page_lines is None
                                  else layout_image(document, index))
                rot = None
            one_page = tmp.tobytes(garbage=0)
        finally:
            tmp.close()
        parsed = shared_process().parse(one_page, self.use_ocr, timeout=timeout, cancel=cancel,
                                        given=page_lines, meanwhile=meanwhile)
        s = dpi / 72.0
        dets, natives = [], []
        boxes = parsed.get("boxes") or []
        finder = [(tuple(bbox), html) for bbox, html in parsed.get("finder_tables") or []]
        margins = (self._margins, (id(document), str(document.path)), float(parsed.get("height") or 0.0))
        self._margins.neighbours.at(document, index)  # headers that repeat on nearby pages (app.core.layout.furniture)
        given = page_lines if rot is None else None  # (in the page's points only when it is not rotated)
        boxes = refine(boxes, fulltext_lines(parsed, given), tables=lambda: finder, margins=margins)
        title = title_index(boxes, index, self._later_max_size(document)) if index == 0 else None
        if rot is not None and _displayed(parsed, document.page_size_pt(index)):
            rot = None  # pymupdf4llm removed the rotation itself: its boxes are already where the page shows them
        shown = (lambda r: r * rot) if rot is not None else (lambda r: r)
        for n, box in enumerate(boxes):
            r = shown(pymupdf.Rect(box["x0"], box["y0"], box["x1"], box["y1"]))
            label = "doc_title" if n == title else map_boxclass(box)
            dets.append(Detection(label, 1.0, (r.x0 * s, r.y0 * s, r.x1 * s, r.y1 * s), n))
            natives.append(box.get("boxclass") or "text")
        w, h = image.width, image.height
        kept = clamp_boxes(dets, w, h)
        # each OCR line with who read it, where the hook said so ([…, text, {"reader", "vertical"}])
        read = parsed.get("ocr_read") or {}
        lines = {d.order: [[*(round(v, 2) for v in shown(pymupdf.Rect(line[:4]))), line[4],
                            *filter(None, [line_record(line[4], read)])]
                           for line in boxes[d.order].get("ocr_lines") or []] for d in kept}
        kept, lines = cut_columns(kept, lines, image, s)
        regions = make_regions(kept, index, dpi, self.name, keep_headers=keep_headers, page_size=(w, h),
                               native_labels=[natives[d.order] for d in kept])
        for region, d, own in zip(regions, kept, lines):
            if own:
                region.extra["ocr_lines"] = own
            if boxes[d.order].get("layer_table"):
                region.extra["layer_table"] = boxes[d.order]["layer_table"]
        return regions

    def _later_max_size(self, document) -> float | None:
        """The largest font size on the pages after the first (up to TITLE_LOOKAHEAD_PAGES), from the text layer;
        None when there is no such page or no text there. Cached for the last document."""
        key = (id(document), str(getattr(document, "path", "")))
        if self._later_size is not None and self._later_size[0] == key:
            return self._later_size[1]
        size = None
        if document.kind == "pdf":
            with document.lock:
                for i in range(1, min(document.page_count, 1 + TITLE_LOOKAHEAD_PAGES)):
                    for block in document.mupdf.load_page(i).get_text("dict").get("blocks", []):
                        for line in block.get("lines", []):
                            for span in line.get("spans", []):
                                if span.get("text", "").strip():
                                    size = max(size or 0.0, float(span.get("size") or 0.0))
        self._later_size = (key, size)
        return size
