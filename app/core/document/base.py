"""What every document is (`Document`: pages, sizes, rendering through a bounded cache, the text layer), its errors,
and the limits that keep a hostile file from exhausting memory. The kinds live beside it (pdf, images).

What must never live here: opening files of one kind, layout, OCR, Qt.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.base.stages import stage

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".gif"}
PDF_LIKE_SUFFIXES = {".pdf", ".xps", ".oxps", ".epub", ".cbz", ".fb2", ".mobi"}
DOCUMENT_SUFFIXES = frozenset(PDF_LIKE_SUFFIXES | IMAGE_SUFFIXES)  # what `open_document` opens: the window and convert alike
MAX_IMAGE_PIXELS = 144_000_000
DEFAULT_IMAGE_DPI = 96.0
DEFAULT_DPI = 144.0
MAX_RENDER_PIXELS = 200_000_000  # a render request above this (page × DPI) is refused rather than attempted


def crop_origin(box_pt: tuple[float, float, float, float], dpi: float) -> tuple[int, int]:
    """The pixel of the page rendered at `dpi` where the crop of `box_pt` (points) starts (`Document.crop`)."""
    s = dpi / 72.0
    return max(0, int(box_pt[0] * s)), max(0, int(box_pt[1] * s))


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


# renderings a run keeps (`Pipeline` opens its document with this many): the page being laid out and the page being
# read, each at the layout's and the OCR's DPI; the default 8 only grew a long run's memory over its first pages
RUN_RENDERS = 4
# renderings the window's page view keeps (app.gui.render_service): the page shown and a thumbnail or two
VIEW_RENDERS = 3


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
        self._turns: dict[int, tuple[int, float]] = {}  # page → (clockwise turn, skew) applied to its renderings

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

    def has_text_layer(self, index: int) -> bool:
        return bool(self.text_layer(index))

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
        if self.turn(index) in (90, 270):
            return info.height_pt, info.width_pt
        return info.width_pt, info.height_pt

    # -- the page as read: turned and straightened (app.core.layout.orientation finds how) ----------------------
    def set_orientation(self, index: int, turn: int = 0, skew: float = 0.0) -> None:
        """Every rendering and crop of page `index` from now on is turned `turn` degrees clockwise (0, 90, 180, 270)
        and straightened by `skew` degrees (counter-clockwise); its size in points follows the turn."""
        if turn not in (0, 90, 180, 270):
            raise ValueError(f"a page turns by 0, 90, 180 or 270 degrees, not {turn}")
        value = (int(turn), float(skew))
        with self._lock:
            if self._turns.get(index, (0, 0.0)) == value:
                return
            if value == (0, 0.0):
                self._turns.pop(index, None)
            else:
                self._turns[index] = value
            self.cache.clear()

    def turn(self, index: int) -> int:
        return self._turns.get(index, (0, 0.0))[0]

    def orientation(self, index: int) -> tuple[int, float]:
        """(turn, skew) applied to page `index`."""
        return self._turns.get(index, (0, 0.0))

    def turned(self, index: int) -> bool:
        return index in self._turns

    def image_bytes(self, index: int) -> bytes:
        """The page as read, as PNG bytes (for tools that want a file, e.g. PyMuPDF's layout)."""
        import io

        buf = io.BytesIO()
        self.render(index, self.native_dpi(index) or DEFAULT_DPI).save(buf, format="PNG")
        return buf.getvalue()

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
                    with stage("render"):
                        img = _oriented(self._render(index, dpi), *self.orientation(index))
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
            *crop_origin(box_pt, dpi),
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


def _oriented(img: "Image.Image", turn: int, skew: float) -> "Image.Image":
    """`img` turned `turn` degrees clockwise and straightened by `skew` (white where there is no paper)."""
    if not turn and not skew:
        return img
    from PIL import Image

    if turn:
        img = img.transpose({90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180,
                             270: Image.Transpose.ROTATE_90}[turn])
    if skew:
        if _grey_rgb(img):  # one band turned is the three turned alike, pixel for pixel, in half the time
            return img.getchannel(0).rotate(skew, resample=Image.Resampling.BICUBIC, fillcolor=255).convert("RGB")
        fill = (255,) * len(img.getbands()) if len(img.getbands()) > 1 else 255
        img = img.rotate(skew, resample=Image.Resampling.BICUBIC, fillcolor=fill)
    return img


def _grey_rgb(img: "Image.Image") -> bool:
    """Is `img` an RGB image whose three bands are one (a grey or bilevel scan read as RGB)?"""
    import numpy as np

    if img.mode != "RGB":
        return False
    a = np.asarray(img)
    return bool(np.array_equal(a[..., 0], a[..., 1]) and np.array_equal(a[..., 1], a[..., 2]))
