"""The images the router gives Tesseract: a line's crop (its detector box widened, the halves of neighbouring lines
that a loose box takes in whitened: `isolated`), and line crops stacked for the script detector (`stack`).

Why the whitening: the detector's boxes are loose (its unclip margin), so on a page set close a line's crop holds
the lower half of the line above and the upper half of the one below; Tesseract's single-line mode then reads
nothing or both. The crop's rows of ink are cut into bands at blank rows; the bands across the middle of the box
are the line, bands within a small gap of them its marks (Thai tone marks, Arabic dots), and the rest is another
line's. On a page set so close that no blank row parts a line from its neighbour (a gazette's accents
touching the descenders above), the line is cut from it at the least-inked row between them (`apart`). A thin
rule down the whole crop (a column rule beside the line, a table's border) is whitened too (`without_rules`):
Tesseract reads it as "|" or "1." and reads the line unsure.

What must never live here: reading (tesseract.py), choosing a script (router.py).
"""
from __future__ import annotations

from typing import Sequence

MIDDLE = 0.3  # a band reaching into the box's middle (between this share of its height from top and bottom) is the line
MARK_GAP = 0.1  # a band this close (share of the box height; at least 2 px) to the line's is one of its marks
INK = 128  # a grey level below this is ink
TOUCH = 0.25  # a row with at most this share of the line's median row ink parts it from a neighbour
EDGE = 0.15  # ... looked for between the crop's edge and this share of the box's height inside it
RULE_DARK = 40  # a rule's grey is at least this far below the paper's (a thin rule is antialiased grey)
RULE_DOWN = 0.9  # ... down at least this share of the crop's height
RULE_WIDE = 0.15  # ... and at most this share of the box's height wide (2 px at least)


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


def apart(counts: Sequence[int], band: tuple[int, int], top: float, bottom: float) -> tuple[int, int]:
    """`band` (rows of the line, `line_band`) cut from a neighbour it runs into: where it reaches the crop's
    edge (no blank row between the line and the one above or below), it ends at the least-inked row between
    that edge and EDGE of the box inside it, when that row holds at most TOUCH of the line's median row ink.
    `counts`: ink pixels per row of the crop."""
    h = max(1.0, bottom - top)
    core = sorted(counts[max(0, int(top + MIDDLE * h)):int(bottom - MIDDLE * h) + 1])
    if not core or not core[len(core) // 2]:
        return band
    most = TOUCH * core[len(core) // 2]
    start, end = band
    if start == 0:
        upper = list(counts[:max(1, int(top + EDGE * h))])
        k = min(range(len(upper)), key=lambda y: (upper[y], -y))  # the least-inked, nearest the line
        start = k if upper[k] <= most else start
    if end == len(counts):
        first = min(len(counts) - 1, int(bottom - EDGE * h))
        k = min(range(first, len(counts)), key=lambda y: (counts[y], y))
        end = k + 1 if counts[k] <= most else end
    return start, end


def without_rules(grey, height: float):
    """A grey crop (numpy) with each thin vertical rule down its whole height whitened: a run of columns at
    most RULE_WIDE of the line's `height` wide, darker than the paper over RULE_DOWN of the rows."""
    import numpy as np

    paper = float(np.percentile(grey, 90))
    down = (grey < paper - RULE_DARK).mean(axis=0) >= RULE_DOWN
    widest = max(2, int(RULE_WIDE * height))
    out, x = None, 0
    while x < down.size:
        if not down[x]:
            x += 1
            continue
        end = x
        while end < down.size and down[end]:
            end += 1
        if end - x <= widest:
            out = grey.copy() if out is None else out
            out[:, x:end] = 255
        x = end
    return grey if out is None else out


def isolated(crop, top: float, bottom: float):
    """`crop` (grey) with every row outside the line's band (`line_band`, cut `apart` from a neighbour it
    touches) white, and its thin rules (`without_rules`); only the rules are whitened when no band is
    found."""
    import numpy as np
    from PIL import Image

    grey = without_rules(np.asarray(crop.convert("L")), bottom - top)
    dark = grey < INK
    band = line_band(list(dark.any(axis=1)), top, bottom)
    if band is None:
        return Image.fromarray(grey)
    band = apart([int(n) for n in dark.sum(axis=1)], band, top, bottom)
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
