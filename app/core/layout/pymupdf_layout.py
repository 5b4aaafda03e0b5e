"""PyMuPDF's built-in layout analysis (pymupdf4llm ≥ 2 with its ONNX model; no download).

Born-digital pages are analysed from their content; pages without a text layer (scans, image files) go through
pymupdf4llm's OCR hook, which uses RapidOCR when it is installed (its wheel ships its ONNX models).
The layout's `boxclass` is mapped onto the PP-DocLayoutV3 vocabulary so routing and assembly treat both alike;
the original goes to `region.extra["native_label"]`.
"""
from __future__ import annotations

import contextlib
import io
import json

from app.core.layout.base import LayoutError, make_regions
from app.core.layout.postprocess import Detection, clamp_boxes
from app.core.regions import Region

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
}


def map_boxclass(box: dict) -> str:
    cls = box.get("boxclass") or "text"
    if cls == "section-header" and box.get("header_level") == 1:
        return "doc_title"
    return BOXCLASS_TO_LABEL.get(cls, "text")


@contextlib.contextmanager
def _quiet():
    """pymupdf4llm prints progress lines to stdout (some through pymupdf.message, whose stream is bound at import
    time); a headless convert must keep stdout for its own output."""
    import pymupdf

    sink = io.StringIO()
    saved = getattr(pymupdf, "_g_out_message", None)
    if saved is not None:
        pymupdf._g_out_message = sink
    try:
        with contextlib.redirect_stdout(sink):
            yield
    finally:
        if saved is not None:
            pymupdf._g_out_message = saved


def _parse_page(mupdf_doc, index: int, use_ocr: bool) -> dict:
    with _quiet():
        import pymupdf4llm

        data = pymupdf4llm.to_json(mupdf_doc, pages=[index], use_ocr=use_ocr, write_images=False, embed_images=False,
                                   show_progress=False)
    pages = json.loads(data).get("pages") or []
    return pages[0] if pages else {"boxes": []}


class PyMuPDFLayout:
    name = "pymupdf"

    def __init__(self, use_ocr: bool = True, **_ignored) -> None:
        self.use_ocr = use_ocr
        try:
            with _quiet():
                import pymupdf4llm  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            raise LayoutError(f"PyMuPDF layout is not available ({exc}); install pymupdf4llm >= 2") from exc

    def analyse(self, document, index, image, dpi, *, keep_headers: bool = False) -> list[Region]:
        import pymupdf

        if document.kind == "pdf":
            with document.lock:
                page = document.mupdf.load_page(index)
                rot = page.rotation_matrix if page.rotation else None
                parsed = _parse_page(document.mupdf, index, self.use_ocr)
        else:  # an image page: wrap it in a one-page PDF so the layout (and its OCR hook) can read it
            w_pt, h_pt = document.page_size_pt(index)
            tmp = pymupdf.open()
            try:
                page = tmp.new_page(width=w_pt, height=h_pt)
                page.insert_image(page.rect, stream=document.image_bytes(index))
                rot = None
                parsed = _parse_page(tmp, 0, self.use_ocr)
            finally:
                tmp.close()
        s = dpi / 72.0
        dets, natives = [], []
        for n, box in enumerate(parsed.get("boxes") or []):
            r = pymupdf.Rect(box["x0"], box["y0"], box["x1"], box["y1"])
            if rot is not None:
                r = r * rot
            dets.append(Detection(map_boxclass(box), 1.0, (r.x0 * s, r.y0 * s, r.x1 * s, r.y1 * s), n))
            natives.append(box.get("boxclass") or "text")
        w, h = image.width, image.height
        kept = clamp_boxes(dets, w, h)
        natives = [natives[d.order] for d in kept]
        return make_regions(kept, index, dpi, self.name, keep_headers=keep_headers, native_labels=natives)
