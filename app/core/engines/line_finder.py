"""A projection-profile line finder: split a text region image into its printed lines, and normalise a line crop
to the built-in model's input (height LINE_HEIGHT, width a multiple of 16, padded with the background).

The rows whose ink count exceeds a small threshold form bands; thin bands that sit close to a neighbour (accents,
dots, underscores) are merged into it, and a band much taller than the median is split at its weakest rows. Numpy
and Pillow only; no model. What must never live here: decoding.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

LINE_HEIGHT = 32
COLUMN = 16

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (x1, y1 exclusive)


def to_grey(image) -> np.ndarray:
    """uint8 (h, w), dark ink on a light background (inverted when the image is mostly dark)."""
    from PIL import Image

    if isinstance(image, Image.Image):
        arr = np.asarray(image.convert("L"))
    else:
        arr = np.asarray(image)
        if arr.ndim == 3:
            arr = (arr[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)).astype(np.uint8)
    if arr.size and np.median(arr) < 110:
        arr = 255 - arr
    return arr.astype(np.uint8, copy=False)


def ink_mask(grey: np.ndarray) -> np.ndarray:
    """Bool ink pixels: darker than the midpoint between the background (a high percentile) and the darkest ink."""
    if grey.size == 0:
        return np.zeros_like(grey, dtype=bool)
    bg = float(np.percentile(grey, 90))
    dark = float(np.percentile(grey, 1))
    if bg - dark < 24:  # no contrast: blank
        return np.zeros_like(grey, dtype=bool)
    return grey < (bg + dark) / 2


def _bands(rows: np.ndarray) -> list[list[int]]:
    bands, start = [], None
    for y, on in enumerate(rows):
        if on and start is None:
            start = y
        elif not on and start is not None:
            bands.append([start, y])
            start = None
    if start is not None:
        bands.append([start, len(rows)])
    return bands


def find_lines(image, *, min_height: int = 4) -> list[Box]:
    """Boxes of the text lines in `image` (PIL image or array), top to bottom."""
    grey = to_grey(image)
    ink = ink_mask(grey)
    h, w = ink.shape if ink.ndim == 2 else (0, 0)
    if not h or not w or not ink.any():
        return []
    profile = ink.sum(axis=1)
    rows = profile > max(1, int(0.002 * w))
    bands = _bands(rows)
    if not bands:
        return []
    # merge thin bands (accents, dots, underline fragments) into the nearest neighbour when close
    heights = np.array([b[1] - b[0] for b in bands])
    med = float(np.median(heights[heights >= np.percentile(heights, 50)])) if len(heights) else 0.0
    changed = True
    while changed and len(bands) > 1:
        changed = False
        for i, (y0, y1) in enumerate(bands):
            if y1 - y0 >= 0.45 * med:
                continue
            gaps = []
            if i > 0:
                gaps.append((y0 - bands[i - 1][1], i - 1))
            if i + 1 < len(bands):
                gaps.append((bands[i + 1][0] - y1, i + 1))
            gap, j = min(gaps)
            if gap <= 0.4 * med:
                lo, hi = min(i, j), max(i, j)
                bands[lo] = [bands[lo][0], bands[hi][1]]
                del bands[hi]
                changed = True
                break
    # split bands much taller than the median (touching lines) at their weakest row
    out: list[list[int]] = []
    heights = np.array([b[1] - b[0] for b in bands])
    med = float(np.median(heights))
    for y0, y1 in bands:
        pieces = [[y0, y1]]
        while True:
            tall = [p for p in pieces if p[1] - p[0] > 1.8 * med and med >= min_height]
            if not tall:
                break
            p = tall[0]
            inner = profile[p[0] + int(0.3 * med):p[1] - int(0.3 * med)]
            if inner.size == 0:
                break
            cut = p[0] + int(0.3 * med) + int(np.argmin(inner))
            k = pieces.index(p)
            pieces[k:k + 1] = [[p[0], cut], [cut, p[1]]]
        out += pieces
    boxes: list[Box] = []
    for i, (y0, y1) in enumerate(out):
        if y1 - y0 < min_height:
            continue
        cols = np.nonzero(ink[y0:y1].any(axis=0))[0]
        if cols.size == 0:
            continue
        bh = y1 - y0
        pad_y = max(1, int(round(0.2 * bh)))
        top_limit = out[i - 1][1] if i > 0 else 0
        bottom_limit = out[i + 1][0] if i + 1 < len(out) else h
        ty = max(top_limit, y0 - pad_y, 0)
        by = min(bottom_limit, y1 + pad_y, h)
        pad_x = max(1, int(round(0.25 * bh)))
        boxes.append((max(0, int(cols[0]) - pad_x), int(ty), min(w, int(cols[-1]) + 1 + pad_x), int(by)))
    return boxes


def normalize_line(image, box: Box | None = None, *, height: int = LINE_HEIGHT) -> "Image.Image":
    """Crop `box`, scale to `height` px keeping the aspect ratio, pad the width to a multiple of 16 with the
    background grey; returns an RGB image (what the processor expects)."""
    from PIL import Image

    grey = to_grey(image)
    if box is not None:
        x0, y0, x1, y1 = box
        grey = grey[y0:y1, x0:x1]
    crop = Image.fromarray(grey)
    scale = height / max(1, crop.height)
    new_w = max(1, int(round(crop.width * scale)))
    crop = crop.resize((new_w, height), Image.BILINEAR)
    total = max(COLUMN, -(-new_w // COLUMN) * COLUMN)
    bg = int(np.percentile(grey, 90)) if grey.size else 255
    canvas = Image.new("L", (total, height), bg)
    canvas.paste(crop, (0, 0))
    return canvas.convert("RGB")


def split_lines(image, *, height: int = LINE_HEIGHT) -> list[tuple[Box, "Image.Image"]]:
    """(box, normalised line image) for every line of a region image."""
    return [(box, normalize_line(image, box, height=height)) for box in find_lines(image)]
