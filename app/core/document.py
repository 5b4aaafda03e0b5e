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
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".gif"}
PDF_LIKE_SUFFIXES = {".pdf", ".xps", ".oxps", ".epub", ".cbz", ".fb2", ".mobi"}
DOCUMENT_SUFFIXES = frozenset(PDF_LIKE_SUFFIXES | IMAGE_SUFFIXES)  # what `open_document` opens: the window and convert alike
MAX_IMAGE_PIXELS = 144_000_000
DEFAULT_IMAGE_DPI = 96.0
DEFAULT_DPI = 144.0
MAX_RENDER_PIXELS = 200_000_000  # a render request above this (page × DPI) is refused rather than attempted


class DocumentError(RuntimeError):
    """A document cannot be opened or read; the message names the file and the cause, for a person."""


class PasswordRequired(DocumentError):
    """The PDF is encrypted and no password was given (the GUI prompts for one)."""


class WrongPassword(DocumentError):
    """The PDF is encrypted and the password given does not open it."""


@dataclass(frozen=True)
class TextWord:
    text: str
    box_pt: tuple[float, float, float, float]  # x0, y0, x1, y1 in points, displayed orientation
    block: int = 0
    line: int = 0
    word: int = 0


@dataclass
class PageInfo:
    index: int
    width_pt: float
    height_pt: float
    rotation: int = 0
    native_dpi: float | None = None  # images only


class RenderCache:
    """LRU of rendered pages keyed by (page, dpi), bounded by entry count and total bytes."""

    def __init__(self, max_entries: int = 8, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[int, float], "Image.Image"] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _size(img: "Image.Image") -> int:
        return img.width * img.height * len(img.getbands())

    def get(self, key: tuple[int, float]) -> "Image.Image | None":
        img = self._items.get(key)
        if img is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return img

    def put(self, key: tuple[int, float], img: "Image.Image") -> None:
        if key in self._items:
            self._bytes -= self._size(self._items.pop(key))
        self._items[key] = img
        self._bytes += self._size(img)
        while self._items and (len(self._items) > self.max_entries or self._bytes > self.max_bytes):
            if len(self._items) == 1:  # always keep the newest one, however big
                break
            _, old = self._items.popitem(last=False)
            self._bytes -= self._size(old)

    def clear(self) -> None:
        self._items.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes


class Document:
    """An open document. Thread-safe: one lock serialises MuPDF/PIL access (MuPDF objects are not thread-safe)."""

    kind = "base"

    def __init__(self, path: Path, cache_pages: int = 8, cache_bytes: int = 256 * 1024 * 1024) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.warnings: list[str] = []
        self.cache = RenderCache(cache_pages, cache_bytes)
        self._lock = threading.RLock()
        self._closed = False

    # -- to be provided by subclasses ----------------------------------------------------------------------------
    @property
    def page_count(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def page_info(self, index: int) -> PageInfo:  # pragma: no cover - abstract
        raise NotImplementedError

    def _render(self, index: int, dpi: float) -> "Image.Image":  # pragma: no cover - abstract
        raise NotImplementedError

    def text_layer(self, index: int) -> list[TextWord]:
        return []

    @property
    def title(self) -> str:
        return ""

    # -- shared ---------------------------------------------------------------------------------------------------
    @property
    def is_pdf(self) -> bool:
        return self.kind == "pdf"

    def _check_index(self, index: int) -> None:
        if self._closed:
            raise DocumentError(f"{self.name}: the document is closed")
        if not 0 <= index < self.page_count:
            raise DocumentError(f"{self.name}: there is no page {index + 1} (the document has {self.page_count})")

    def page_size_pt(self, index: int) -> tuple[float, float]:
        info = self.page_info(index)
        return info.width_pt, info.height_pt

    def rotation(self, index: int) -> int:
        return self.page_info(index).rotation

    def native_dpi(self, index: int) -> float | None:
        """The DPI at which an image page renders pixel-exact (None for vector pages)."""
        return self.page_info(index).native_dpi

    def page_size_px(self, index: int, dpi: float) -> tuple[int, int]:
        w, h = self.page_size_pt(index)
        return max(1, round(w * dpi / 72.0)), max(1, round(h * dpi / 72.0))

    def render(self, index: int, dpi: float = DEFAULT_DPI) -> "Image.Image":
        """Page `index` (0-based) as an RGB PIL image at `dpi`; cached. Do not modify the returned image."""
        self._check_index(index)
        dpi = float(dpi)
        w, h = self.page_size_px(index, dpi)
        if w * h > MAX_RENDER_PIXELS:
            raise DocumentError(
                f"{self.name}: page {index + 1} at {dpi:g} DPI would be {w} × {h} px; choose a lower DPI"
            )
        key = (index, round(dpi, 3))
        with self._lock:
            img = self.cache.get(key)
            if img is None:
                try:
                    img = self._render(index, dpi)
                except DocumentError:
                    raise
                except Exception as exc:  # MuPDF/PIL errors on damaged content
                    raise DocumentError(f"{self.name}: page {index + 1} cannot be rendered ({exc})") from exc
                self.cache.put(key, img)
            return img

    def crop(self, index: int, box_pt: tuple[float, float, float, float], dpi: float) -> "Image.Image":
        """The part of page `index` inside `box_pt` (points), rendered at `dpi` (a copy, safe to keep)."""
        page = self.render(index, dpi)
        s = dpi / 72.0
        x0, y0, x1, y1 = box_pt
        box = (
            max(0, int(x0 * s)), max(0, int(y0 * s)),
            min(page.width, max(int(x0 * s) + 1, round(x1 * s))), min(page.height, max(int(y0 * s) + 1, round(y1 * s))),
        )
        return page.crop(box)

    def close(self) -> None:
        with self._lock:
            self.cache.clear()
            self._closed = True

    def __enter__(self) -> "Document":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} pages={self.page_count if not self._closed else '-'}>"


class PdfDocument(Document):
    """Anything MuPDF opens as a paged document (PDF, XPS, EPUB, CBZ)."""

    kind = "pdf"

    def __init__(self, path: Path, doc, **kw) -> None:
        super().__init__(path, **kw)
        self._doc = doc
        self._count = doc.page_count
        self._info: dict[int, PageInfo] = {}

    @property
    def page_count(self) -> int:
        return self._count

    @property
    def title(self) -> str:
        try:
            return (self._doc.metadata or {}).get("title") or ""
        except Exception:  # noqa: BLE001 - metadata of a damaged file
            return ""

    @property
    def mupdf(self):
        """The underlying pymupdf.Document (hold `doc.lock` while using it from another thread)."""
        return self._doc

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def page_info(self, index: int) -> PageInfo:
        self._check_index(index)
        info = self._info.get(index)
        if info is None:
            with self._lock:
                try:
                    page = self._doc.load_page(index)
                except Exception as exc:  # noqa: BLE001
                    raise DocumentError(f"{self.name}: page {index + 1} cannot be read ({exc})") from exc
                r = page.rect  # displayed orientation (rotation applied)
                info = PageInfo(index, float(r.width), float(r.height), int(page.rotation))
            self._info[index] = info
        return info

    def _render(self, index: int, dpi: float) -> "Image.Image":
        from PIL import Image

        page = self._doc.load_page(index)
        pix = page.get_pixmap(dpi=None, matrix=_scale_matrix(dpi), alpha=False, colorspace="rgb")
        return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)

    def text_layer(self, index: int) -> list[TextWord]:
        """Words of the embedded text layer with boxes in points (displayed orientation); [] when none."""
        self._check_index(index)
        import pymupdf

        with self._lock:
            try:
                page = self._doc.load_page(index)
                words = page.get_text("words", sort=True)
                rot = page.rotation_matrix if page.rotation else None
            except Exception as exc:  # noqa: BLE001
                self.warnings.append(f"page {index + 1}: the text layer cannot be read ({exc})")
                return []
        out = []
        for x0, y0, x1, y1, text, block, line, word in words:
            if not text.strip():
                continue
            if rot is not None:
                r = pymupdf.Rect(x0, y0, x1, y1) * rot
                x0, y0, x1, y1 = r.x0, r.y0, r.x1, r.y1
            out.append(TextWord(text, (float(x0), float(y0), float(x1), float(y1)), int(block), int(line), int(word)))
        return out

    def has_text_layer(self, index: int) -> bool:
        return bool(self.text_layer(index))

    def close(self) -> None:
        with self._lock:
            super().close()
            try:
                self._doc.close()
            except Exception:  # noqa: BLE001
                pass


def _scale_matrix(dpi: float):
    import pymupdf

    s = dpi / 72.0
    return pymupdf.Matrix(s, s)


class ImageDocument(Document):
    """A raster image file; each frame of a multi-frame TIFF/GIF/WebP is a page."""

    kind = "image"

    def __init__(self, path: Path, frames: list[tuple[int, int, float]], **kw) -> None:
        super().__init__(path, **kw)
        self._frames = frames  # (width px, height px, native dpi) per frame; decoded lazily
        self._native: OrderedDict[int, "Image.Image"] = OrderedDict()

    @property
    def page_count(self) -> int:
        return len(self._frames)

    def page_info(self, index: int) -> PageInfo:
        self._check_index(index)
        w, h, dpi = self._frames[index]
        return PageInfo(index, w * 72.0 / dpi, h * 72.0 / dpi, 0, dpi)

    def page_size_px(self, index: int, dpi: float) -> tuple[int, int]:
        w, h, native = self._frames[index]
        if abs(dpi - native) < 1e-6:
            return w, h
        return super().page_size_px(index, dpi)

    def _frame(self, index: int) -> "Image.Image":
        img = self._native.get(index)
        if img is not None:
            self._native.move_to_end(index)
            return img
        from PIL import Image, ImageOps

        with Image.open(self.path) as src:
            if index:
                src.seek(index)
            src.load()
            frame = ImageOps.exif_transpose(src) if index == 0 else src
            img = _to_rgb(frame)
        self._native[index] = img
        while len(self._native) > 2:
            self._native.popitem(last=False)
        return img

    def _render(self, index: int, dpi: float) -> "Image.Image":
        from PIL import Image

        img = self._frame(index)
        size = self.page_size_px(index, dpi)
        if size == img.size:
            return img
        return img.resize(size, Image.Resampling.LANCZOS if size[0] < img.width else Image.Resampling.BICUBIC)

    def image_bytes(self, index: int) -> bytes:
        """The frame as PNG bytes (for tools that want a file, e.g. PyMuPDF's layout on scanned pages)."""
        import io

        buf = io.BytesIO()
        with self._lock:
            self._frame(index).save(buf, format="PNG")
        return buf.getvalue()

    def close(self) -> None:
        with self._lock:
            self._native.clear()
            super().close()


def _to_rgb(img: "Image.Image") -> "Image.Image":
    from PIL import Image

    if img.mode == "RGB":
        return img.copy()
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        bg = Image.new("RGB", rgba.size, (255, 255, 255))
        bg.paste(rgba, mask=rgba.getchannel("A"))
        return bg
    if img.mode.startswith("I;16") or img.mode in ("I", "F"):
        img = img.point(lambda v: v / 256).convert("L") if img.mode != "F" else img.convert("L")
    return img.convert("RGB")


def _image_dpi(info: dict) -> float:
    dpi = info.get("dpi")
    try:
        value = float(dpi[0] if isinstance(dpi, (tuple, list)) else dpi)
    except (TypeError, ValueError, IndexError):
        return DEFAULT_IMAGE_DPI
    return round(value, 1) if 50 <= value <= 2400 else DEFAULT_IMAGE_DPI  # BMP/PNG store pixels per metre


def _open_image(path: Path, **kw) -> ImageDocument:
    from PIL import Image, UnidentifiedImageError

    frames: list[tuple[int, int, float]] = []
    try:
        with Image.open(path) as img:
            n = getattr(img, "n_frames", 1)
            for i in range(n):
                if i:
                    img.seek(i)
                w, h = img.size
                if i == 0 and img.format == "JPEG":  # EXIF rotation swaps the displayed size
                    try:
                        if img.getexif().get(0x0112, 1) in (5, 6, 7, 8):
                            w, h = h, w
                    except Exception:  # noqa: BLE001
                        pass
                _check_pixels(path, w, h, i, n)
                frames.append((w, h, _image_dpi(img.info)))
    except Image.DecompressionBombError as exc:
        raise DocumentError(_too_big_message(path, *_bomb_size(path), detail=str(exc))) from exc
    except UnidentifiedImageError as exc:
        raise DocumentError(f"{path.name}: not a readable image (the file is damaged or not an image)") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise DocumentError(f"{path.name}: the image cannot be read ({exc}); the file may be truncated") from exc
    if not frames:
        raise DocumentError(f"{path.name}: the image has no frames")
    doc = ImageDocument(path, frames, **kw)
    try:  # decode the first frame now: a truncated image should fail at open, not halfway through a run
        doc._frame(0)
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise DocumentError(f"{path.name}: the image cannot be decoded ({exc}); the file may be truncated") from exc
    return doc


def _bomb_size(path: Path) -> tuple[int | None, int | None]:
    """Width and height from the file header when PIL refuses to open a huge image."""
    import struct

    with open(path, "rb") as fh:
        head = fh.read(32)
    if head.startswith(b"\x89PNG") and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    return None, None


def _too_big_message(path: Path, w: int | None, h: int | None, frame: int = 0, n: int = 1, detail: str = "") -> str:
    size = f"{w} × {h} px ({w * h / 1e6:.0f} megapixels)" if w and h else "too large to decode safely"
    where = f" (frame {frame + 1} of {n})" if n > 1 else ""
    return (
        f"{path.name}{where}: the image is {size}; Scriptorium reads images up to "
        f"{MAX_IMAGE_PIXELS / 1e6:.0f} megapixels (e.g. 12000 × 12000). Downscale it first, e.g. "
        f"`magick '{path.name}' -resize 50% smaller.png`, or split it into parts."
        + (f" ({detail})" if detail and not (w and h) else "")
    )


def _check_pixels(path: Path, w: int, h: int, frame: int = 0, n: int = 1) -> None:
    if w * h > MAX_IMAGE_PIXELS:
        raise DocumentError(_too_big_message(path, w, h, frame, n))


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


def _open_pdf(path: Path, password: str | None, kind: str, **kw) -> PdfDocument:
    import pymupdf

    name = path.name
    pymupdf.TOOLS.mupdf_warnings()  # reset, so that the warnings read below are this file's
    try:
        doc = pymupdf.open(str(path))
    except Exception as exc:  # pymupdf.FileDataError, RuntimeError, ...
        if kind == "pdf":
            cause = "it is damaged or truncated beyond repair"
        else:
            cause = "it is not a PDF (its first bytes are no PDF header) or it is damaged"
        raise DocumentError(f"{name}: cannot be opened: {cause} ({exc})") from exc
    try:
        if doc.needs_pass:
            if password is None or password == "":
                raise PasswordRequired(f"{name}: the PDF is encrypted; give its password (convert: --password)")
            if not doc.authenticate(password):
                raise WrongPassword(f"{name}: the password given does not open this encrypted PDF")
        count = doc.page_count
        if count == 0:
            cause = " (it is damaged: no page could be recovered)" if doc.is_repaired else ""
            raise DocumentError(f"{name}: the document has no pages{cause}")
        try:
            doc.load_page(0)
        except Exception as exc:  # noqa: BLE001
            raise DocumentError(f"{name}: its first page cannot be read; the file is damaged ({exc})") from exc
    except DocumentError:
        doc.close()
        raise
    out = PdfDocument(path, doc, **kw)
    if getattr(doc, "is_repaired", False):
        log = pymupdf.TOOLS.mupdf_warnings().splitlines()
        first = next((line for line in log if line.strip()), "")
        out.warnings.append(
            f"{name}: the file is damaged (truncated or malformed: {first or 'broken cross-reference table'}) and "
            "was repaired; some content may be missing"
        )
    return out
