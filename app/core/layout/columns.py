"""Columns inside one text box of a scanned page: a newspaper article laid out as one box over four columns.

PyMuPDF's layout sometimes gives a whole multi-column article one `text` box, and the OCR's line detector joins
pieces of neighbouring columns across a narrow gutter, so the box would be read straight across the columns. Here
the gutters are found in the page image itself: vertical bands of paper, at least `MIN_GUTTER` of a text line wide,
that no ink crosses over most of the box's height (a headline over all the columns may cross them above, a footer
below). A box with gutters is cut into a full-width band above the columns, the columns left to right, and a band
below, each a box of its own in that reading order.

    split_columns(mask, box, line_height) -> [box, ...]   # boxes in the mask's pixels; [box] when there is no gutter

What must never live here: OCR, the layout model, reading order between boxes (page_boxes.order_columns).
"""
from __future__ import annotations

import numpy as np

MIN_GUTTER = 0.6  # a gutter is at least this many text-line heights wide (word spaces are narrower: ~0.3)
MIN_RUN = 0.5  # ... and clear of ink over at least this share of the box's height, in one run
MIN_COLUMN = 4.0  # a column is at least this many line heights wide (a gap beside a drop cap is no gutter)
MIN_LINES = 6  # a box of fewer text lines than this is not cut


def _longest_clear_run(column: np.ndarray) -> tuple[int, int]:
    """(start, end) of the longest run of False in a bool column."""
    ink = np.flatnonzero(column)
    bounds = np.concatenate(([-1], ink, [column.size]))
    k = int(np.argmax(np.diff(bounds)))
    return int(bounds[k] + 1), int(bounds[k + 1])


def gutters(mask: np.ndarray, line_height: float) -> list[tuple[int, int, int, int]]:
    """Interior gutters of an ink mask as (x0, x1, y0, y1): x range of the band, y range where it is clear."""
    h, w = mask.shape
    if h < MIN_LINES * line_height or w < 2 * MIN_COLUMN * line_height:
        return []
    runs = [_longest_clear_run(mask[:, x]) for x in range(w)]
    clear = [(b - a) >= MIN_RUN * h for a, b in runs]
    out, start = [], None
    for x, on in enumerate(clear + [False]):
        if on and start is None:
            start = x
        elif not on and start is not None:
            if x - start >= MIN_GUTTER * line_height:
                y0 = int(np.median([runs[k][0] for k in range(start, x)]))  # the band's edges are ragged
                y1 = int(np.median([runs[k][1] for k in range(start, x)]))
                if y1 - y0 >= MIN_RUN * h:
                    out.append((start, x, y0, y1))
            start = None
    # only gutters with a real column on both sides (the paper at the box's edges is a margin, not a gutter)
    edges = [0] + [x for g in out for x in g[:2]] + [w]
    inked = lambda a, b: mask[:, a:b].any(axis=0).sum() >= MIN_COLUMN * line_height  # noqa: E731
    return [g for i, g in enumerate(out) if inked(edges[2 * i], g[0]) and inked(g[1], edges[2 * i + 3])]


def split_columns(mask: np.ndarray, box: tuple[float, float, float, float],
                  line_height: float) -> list[tuple[float, float, float, float]]:
    """`box` (x0, y0, x1, y1 in the mask's pixels) cut at its gutters: [band above, columns…, band below], bands
    only where they hold ink; [box] when it has no gutter."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    sub = mask[max(0, y0):y1, max(0, x0):x1]
    if sub.size == 0 or line_height <= 0:
        return [box]
    found = gutters(sub, line_height)
    if not found:
        return [box]
    top = max(g[2] for g in found)
    bottom = min(g[3] for g in found)
    if bottom - top < MIN_RUN * sub.shape[0]:
        return [box]
    out = []
    if sub[:top].any():
        out.append((x0, y0, x1, y0 + top))
    edges = [0] + [x for g in found for x in g[:2]] + [sub.shape[1]]
    for a, b in zip(edges[::2], edges[1::2]):
        if sub[top:bottom, a:b].any():
            out.append((x0 + a, y0 + top, x0 + b, y0 + bottom))
    if sub[bottom:].any():
        out.append((x0, y0 + bottom, x1, y1))
    return [tuple(float(v) for v in b) for b in out]  # type: ignore[misc]
