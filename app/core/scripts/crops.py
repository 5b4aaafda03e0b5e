"""The images the router gives Tesseract: a line's crop (its detector box widened, the halves of neighbouring lines
that a loose box takes in whitened: `isolated`), and line crops stacked for the script detector (`stack`).

Why the whitening: the detector's boxes are loose (its unclip margin), so on a page set close a line's crop holds
the lower half of the line above and the upper half of the one below; Tesseract's single-line mode then reads
nothing or both. The crop's rows of ink are cut into bands at blank rows; the bands across the middle of the box
are the line, bands within a small gap of them its marks (Thai tone marks, Arabic dots), and the rest is another
line's.

What must never live here: reading (tesseract.py), choosing a script (router.py).
"""
from __future__ import annotations

from typing import Sequence

MIDDLE = 0.3  # a band reaching into the box's middle (between this share of its height from top and bottom) is the line
MARK_GAP = 0.1  # a band this close (share of the box height; at least 2 px) to the line's is one of its marks
INK = 128  # a grey level below this is ink


def crop_line(image, box: Sequence[float], pad_y: float, pad_x: float, *, isolate: bool = True):
    """The line's crop (its box widened by `pad_x` and `pad_y` of its height), neighbouring lines whitened
    unless `isolate` is False; `info["origin"]` says where it sits in `image`."""
    x0, y0, x1, y1 = (float(v) for v in box[:4])
    h = max(1.0, y1 - y0)
    left, top = max(0, int(x0 - pad_x * h)), max(0, int(y0 - pad_y * h))
    right = min(image.width, int(round(x1 + pad_x * h)))
    bottom = min(image.height, int(round(y1 + pad_y * h)))
    crop = image.crop((left, top, max(left + 1, right), max(top + 1, bottom)))
    if isolate:
        crop = isolated(crop, y0 - top, y1 - top)
    crop.info["origin"] = (float(left), float(top))
    return crop


def bands(rows: Sequence[bool]) -> list[tuple[int, int]]:
    """Runs of True in `rows` as (start, end) pairs."""
    out, start = [], None
    for y, ink in enumerate(rows):
        if ink and start is None:
            start = y
        elif not ink and start is not None:
            out.append((start, y))
            start = None
    if start is not None:
        out.append((start, len(rows)))
    return out


def line_band(rows: Sequence[bool], top: float, bottom: float) -> tuple[int, int] | None:
    """The rows (start, end) of the line whose box spans `top`..`bottom` in a crop whose rows hold ink where
    `rows` is True: the bands across the box's middle and the marks next to them; None when no band is there."""
    h = max(1.0, bottom - top)
    mid0, mid1 = top + MIDDLE * h, bottom - MIDDLE * h
    found = bands(rows)
    core = [b for b in found if min(b[1], mid1) > max(b[0], mid0)]
    if not core:
        return None
    start, end = core[0][0], core[-1][1]
    gap = max(2.0, MARK_GAP * h)
    for b in reversed(found):
        if b[1] <= start and start - b[1] < gap:
            start = b[0]
    for b in found:
        if b[0] >= end and b[0] - end < gap:
            end = b[1]
    return start, end


def isolated(crop, top: float, bottom: float):
    """`crop` (grey) with every row outside the line's band (`line_band`) white; as it is when no band is found."""
    import numpy as np
    from PIL import Image

    grey = np.asarray(crop.convert("L"))
    band = line_band(list((grey < INK).any(axis=1)), top, bottom)
    if band is None:
        return crop.convert("L")
    out = grey.copy()
    out[:band[0]] = 255
    out[band[1]:] = 255
    return Image.fromarray(out)


def stack(crops):
    """Line crops one under another on white (what OSD looks at)."""
    from PIL import Image

    gap = 10
    width = max(c.width for c in crops) + 2 * gap
    height = sum(c.height + gap for c in crops) + gap
    sheet = Image.new("L", (width, height), 255)
    y = gap
    for c in crops:
        sheet.paste(c.convert("L"), (gap, y))
        y += c.height + gap
    return sheet
