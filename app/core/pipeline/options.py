"""What a run is asked to do: `PipelineOptions` (built once, by the CLI or the GUI, as this dataclass), the page
ranges people type, and the error a run stops with.

What must never live here: running anything (app.core.pipeline.run).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from app.core.document import DEFAULT_DPI
from app.core.base.wording import count

DEFAULT_OCR_DPI = 200.0
# what the one writer writes (app.core.pipeline.output); pdf: searchable; docx, xlsx (the tables), alto, hocr and
# docling (DoclingDocument JSON): app.core.formats
FORMATS = ("md", "json", "html", "pdf", "docx", "xlsx", "alto", "hocr", "docling")
DEFAULT_FORMATS = ("md", "json")
EXPORT_FORMATS = ("md", "json", "html", "pdf")  # what the window's Export writes unless Preferences → Files say
ALTO_VERSIONS = (4, 2)  # ALTO 4.4 (the default) or 2.1
TEXT_LAYER_MODES = ("prefer", "compare", "ignore")  # a PDF's own text layer: taken where good | measured | unused
AUTO_BATCH = 0  # PipelineOptions.batch: the engine's own batch size (convert's default; the app reads one at a time)
DEFAULT_LAYOUT_TIMEOUT_S = 20.0  # a page's layout past this falls back to the whole page (app.core.layout.budget)
# a page with no text layer is read by the layout's OCR while it is laid out: that time is the page's reading, not
# overhead, so its budget is this many times the layout budget (a dense scan on a busy CPU takes ~1 min)
SCAN_LAYOUT_BUDGET_FACTOR = 8.0


def parse_formats(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """"md,json,html,pdf" (any order, case-insensitive) → the formats in FORMATS order. Raises ValueError with a
    message for a person."""
    if spec is None:
        return DEFAULT_FORMATS
    parts = [p.strip().lower() for p in (spec.split(",") if isinstance(spec, str) else spec) if p.strip()]
    if not parts:
        raise ValueError("no output format chosen (use e.g. md,json,html,pdf,docx)")
    unknown = [p for p in parts if p not in FORMATS]
    if unknown:
        raise ValueError(f"unknown output format {unknown[0]!r}; choose from {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in parts)


class PipelineError(RuntimeError):
    """A run could not proceed; the message is written for a person. `kind` is document | engine | layout |
    options | output."""

    def __init__(self, message: str, kind: str = "document") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class PipelineOptions:
    engine: str = "auto"  # gravity | gravity-ar | glm | unlimited | builtin | classic | auto
    layout: str = "auto"  # ppdoclayout | pymupdf | page | auto
    dpi: float = DEFAULT_DPI  # display/layout rendering
    ocr_dpi: float | None = None  # crops; None = the engine's preferred_dpi (200)
    pages: str | Sequence[int] | None = None  # "1-5,8" (1-based) or 0-based indices; None = all
    password: str | None = None
    keep_headers: bool = False
    device: str | None = None
    dtype: str | None = None
    model_path: str | None = None
    layout_model_path: str | None = None
    block_size: int | None = None
    cache: str | None = None  # the decoders' KV cache: dynamic | static; None = the engine's choice
    compare_text_layer: bool = True
    # the text layer (app.core.pipeline.text_source): the app compares (it exists to watch the OCR models); convert
    # prefers the layer's text where it is trustworthy
    text_layer: str = "compare"
    engine_options: dict[str, Any] = field(default_factory=dict)
    # save picture crops here as soon as a page is laid out (the GUI's working folder), their absolute path in
    # region.extra["picture_path"] (so LayoutDone carries it); None: only `write` saves them, next to the export
    picture_dir: str | None = None
    formats: tuple[str, ...] = DEFAULT_FORMATS  # what `Pipeline.write` writes (parse_formats)
    alto_version: int = 4  # the ALTO the `alto` format writes: 4 (4.4) or 2 (2.1)
    layout_timeout: float = DEFAULT_LAYOUT_TIMEOUT_S  # seconds a page's layout may take (0: no limit)
    # regions of a page read together by a local engine with `decode_batch` (app.core.pipeline.batching): AUTO_BATCH
    # (0) = the engine's batch size, 1 = one at a time (the default: each region's rounds in turn), N = at most N
    batch: int = 1
    # scanned pages turned the right way up and straightened before their layout (app.core.pipeline.orient):
    # auto | none
    rotate: str = "auto"


def parse_pages(spec: str | Sequence[int] | None, page_count: int) -> list[int]:
    """'1-3,7,9-' (1-based, inclusive; open ends allowed) or 0-based indices → sorted 0-based indices.
    Raises ValueError with a message for a person."""
    if spec is None or spec == "" or spec == "all":
        return list(range(page_count))
    if not isinstance(spec, str):
        out = sorted({int(i) for i in spec})
        bad = [i for i in out if not 0 <= i < page_count]
        if bad:
            raise ValueError(f"page {bad[0] + 1} does not exist (the document has {count(page_count, 'page')})")
        return out
    chosen: set[int] = set()
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                start = int(a) if a else 1
                end = int(b) if b else page_count
            else:
                start = end = int(part)
        except ValueError:
            raise ValueError(f"cannot read the page range {part!r} (use e.g. 1-5,8)") from None
        if start < 1 or end < start:
            raise ValueError(f"the page range {part!r} is empty or starts before page 1")
        if start > page_count:
            raise ValueError(f"page {start} does not exist (the document has {count(page_count, 'page')})")
        chosen.update(range(start - 1, min(end, page_count)))
    if not chosen:
        raise ValueError(f"no pages chosen by {spec!r}")
    return sorted(chosen)


def scanned(document, index: int) -> bool:
    """Is page `index` a picture of a page: an image file, or a PDF page mostly covered by images?"""
    if document.kind != "pdf":
        return True
    with document.lock:
        page = document.mupdf.load_page(index)
        area = abs(page.rect) or 1.0
        try:
            shown = sum(abs(page.rect & info["bbox"]) for info in page.get_image_info())
        except (RuntimeError, ValueError):  # a damaged image list: not known to be a scan
            return False
    return shown >= 0.5 * area


def layout_budget(timeout: float, document, index: int, has_text_layer: bool) -> float | None:
    """Seconds page `index`'s layout may take (None: no limit): `timeout`, times SCAN_LAYOUT_BUDGET_FACTOR for a
    scanned page, whose layout reads it with its OCR meanwhile."""
    if not timeout:
        return None
    return timeout * SCAN_LAYOUT_BUDGET_FACTOR if not has_text_layer and scanned(document, index) else timeout
