"""Documents: PDFs and images opened once, pages rendered lazily at a chosen DPI through a bounded cache.

    doc = open_document("report.pdf", password=None)      # raises DocumentError (message names file + cause)
    doc.page_count, doc.page_size_pt(0), doc.rotation(0)
    img = doc.render(0, dpi=144)                            # PIL.Image (RGB), cached (LRU, bounded by count+bytes)
    words = doc.text_layer(0)                               # [TextWord(text, box_pt, block, line, word)]
    doc.close()                                             # also a context manager

Supported: PDF (and anything else MuPDF opens as a paged document: XPS, EPUB, CBZ) and the images PNG, JPEG,
TIFF (every frame is a page), WebP, BMP, GIF. Opening never renders: a 500-page PDF costs its cross-reference
table, nothing more, and paging through it keeps at most `cache_pages` rendered pages in memory.

Coordinates: PDF points (1/72 inch) for `page_size_pt` and text-layer boxes, in the page's displayed orientation
(rotation applied). Pixels of a rendering at `dpi` are points × dpi / 72. Images have a native DPI (the file's
own DPI when it has a plausible one, else 96): a page of W×H pixels is W×72/dpi × H×72/dpi points and renders
pixel-exact at `native_dpi(i)`.

Very large images: an image frame over MAX_IMAGE_PIXELS (144 megapixels, e.g. 12000 × 12000) is refused with a
message that says its size and how to shrink it. Decoding a 20000 × 20000 scan needs over a gigabyte before any
OCR starts, and no OCR model reads more than a few megapixels per region anyway; a refusal at open time is
clearer than an out-of-memory crash in the middle of a batch.

Damaged PDFs that MuPDF can repair open with `doc.warnings` saying so (content may be missing); files it cannot
open, wrong or missing passwords and zero-page documents raise DocumentError. What must never live here: layout,
OCR, Qt.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.core.document.base import (  # noqa: F401 - the document vocabulary, importable from the package
    DEFAULT_DPI,
    DEFAULT_IMAGE_DPI,
    DOCUMENT_SUFFIXES,
    IMAGE_SUFFIXES,
    MAX_IMAGE_PIXELS,
    MAX_RENDER_PIXELS,
    PDF_LIKE_SUFFIXES,
    Document,
    DocumentError,
    PageInfo,
    PasswordRequired,
    RUN_RENDERS,
    VIEW_RENDERS,
    RenderCache,
    TextWord,
    WrongPassword,
)
from app.core.document.images import ImageDocument, _open_image  # noqa: F401
from app.core.document.pdf import PdfDocument, _open_pdf  # noqa: F401


def _sniff(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(1024)
    if head.startswith(b"%PDF") or b"%PDF-" in head:
        return "pdf"
    if head.startswith((b"\x89PNG", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*", b"BM", b"GIF8")) or (
        head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    ):
        return "image"
    return "unknown"


def open_document(
    path: str | os.PathLike, password: str | None = None, *, cache_pages: int = 8, cache_bytes: int = 256 * 1024 * 1024
) -> Document:
    """Open a PDF (or other MuPDF document) or an image file. Never renders anything.

    Raises DocumentError (PasswordRequired / WrongPassword for encrypted PDFs) with a message that names the file
    and the cause."""
    path = Path(path).expanduser()
    name = path.name
    if not path.exists():
        raise DocumentError(f"{path}: no such file")
    if path.is_dir():
        raise DocumentError(f"{path}: is a folder, not a document")
    if not path.is_file():  # a FIFO or a device would block the open (or never end)
        raise DocumentError(f"{path}: not a regular file (a pipe or a device), not a document")
    try:
        size = path.stat().st_size
        kind = _sniff(path)
    except OSError as exc:
        raise DocumentError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if size == 0:
        raise DocumentError(f"{name}: the file is empty (0 bytes)")
    suffix = path.suffix.lower()
    kw = dict(cache_pages=cache_pages, cache_bytes=cache_bytes)
    if kind == "image" or (kind == "unknown" and suffix in IMAGE_SUFFIXES):
        return _open_image(path, **kw)
    if kind == "unknown" and suffix not in PDF_LIKE_SUFFIXES:
        raise DocumentError(
            f"{name}: not a PDF or a supported image (PNG, JPEG, TIFF, WebP, BMP, GIF); the file starts with "
            f"{_describe_head(path)}"
        )
    return _open_pdf(path, password, kind, **kw)


def _describe_head(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(8)
    return "bytes " + head.hex(" ") if head else "nothing"
