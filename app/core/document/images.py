"""Image files as documents (PNG, JPEG, TIFF with every frame a page, WebP, BMP, GIF): native DPI, decompression
bombs refused at open time with their size, frames rendered exactly."""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

from app.core.document.base import (
    DEFAULT_IMAGE_DPI,
    MAX_IMAGE_PIXELS,
    Document,
    DocumentError,
    PageInfo,
)


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
            return (h, w) if self.turn(index) in (90, 270) else (w, h)
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
        w, h = self.page_size_px(index, dpi)
        size = (h, w) if self.turn(index) in (90, 270) else (w, h)  # the frame as stored; the turn comes after
        if size == img.size:
            return img
        return img.resize(size, Image.Resampling.LANCZOS if size[0] < img.width else Image.Resampling.BICUBIC)

    def image_bytes(self, index: int) -> bytes:
        """The frame as PNG bytes (for tools that want a file, e.g. PyMuPDF's layout on scanned pages), as read."""
        import io

        if self.turned(index):
            return super().image_bytes(index)

        buf = io.BytesIO()
        with self._lock:
            self._frame(index).save(buf, format="PNG")
        return buf.getvalue()

    def source_bytes(self, index: int) -> bytes | None:
        """The file's own bytes where they are the page exactly as read: a JPEG (grey or RGB) or a PNG (bilevel, grey
        or RGB) of one frame, not turned, with no EXIF turn. None otherwise. What a tool that takes a file is given
        in place of the frame encoded again (the layout child: app.core.layout.pymupdf_layout.layout_image)."""
        from PIL import Image

        if index != 0 or len(self._frames) != 1 or self.turned(index):
            return None
        try:
            with Image.open(self.path) as src:
                plain = ((src.format == "JPEG" and src.mode in ("L", "RGB"))
                         or (src.format == "PNG" and src.mode in ("1", "L", "RGB") and "transparency" not in src.info))
                if not plain or src.getexif().get(0x0112, 1) != 1:  # 0x0112: the EXIF orientation
                    return None
            return self.path.read_bytes()
        except OSError:
            return None

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
