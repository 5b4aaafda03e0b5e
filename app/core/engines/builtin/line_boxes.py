"""The geometry of a region's line boxes for the built-in line reader: boxes grouped into visual rows (pieces
of one row are joined by a space, a table's rows become its rows) and neighbouring lines cut apart where their
boxes overlap, so a crop holds one line.

What must never live here: detection or recognition (app.core.engines.builtin.engine, RapidOCR), decoding."""
from __future__ import annotations

from typing import Any


def group_rows(boxes: list[tuple[float, float, float, float]]) -> list[list[int]]:
    """Indices of `boxes` (x0, y0, x1, y1) grouped into visual rows: a box joins a row when it overlaps the
    row's vertical extent by half the smaller height. Rows top to bottom, boxes left to right."""
    rows: list[dict[str, Any]] = []
    for i in sorted(range(len(boxes)), key=lambda i: ((boxes[i][1] + boxes[i][3]) / 2, boxes[i][0])):
        x0, y0, x1, y1 = boxes[i]
        for row in rows:
            overlap = min(row["y1"], y1) - max(row["y0"], y0)
            if overlap >= 0.5 * min(y1 - y0, row["y1"] - row["y0"]):
                row["items"].append(i)
                row["y0"], row["y1"] = min(row["y0"], y0), max(row["y1"], y1)
                break
        else:
            rows.append({"y0": y0, "y1": y1, "items": [i]})
    rows.sort(key=lambda r: r["y0"])
    return [sorted(r["items"], key=lambda i: boxes[i][0]) for r in rows]


def apart(boxes: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """`boxes` with the lines above and below cut off: where two boxes of different rows overlap (a layout's
    line boxes are font boxes, taller than the ink, and padding makes them taller still), both are cut at the
    middle of the overlap, so a crop never holds half of its neighbour's line (which the recogniser would read
    into it)."""
    out = [list(b) for b in boxes]
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if min(a[2], b[2]) <= max(a[0], b[0]):  # side by side: no shared column
                continue
            top, low = (a, b) if a[1] + a[3] <= b[1] + b[3] else (b, a)
            overlap = top[3] - low[1]
            # apart, or the same row
            if overlap <= 0 or overlap >= 0.7 * min(top[3] - top[1], low[3] - low[1]):
                continue
            cut = (top[3] + low[1]) / 2
            ti, li = (i, j) if top is a else (j, i)
            out[ti][3] = min(out[ti][3], cut)
            out[li][1] = max(out[li][1], cut)
    return [tuple(b) for b in out]  # type: ignore[misc]


GIVEN_PAD = 0.15  # a given line box widened by this share of its height on every side (detector boxes are loose)


def padded_apart(lines, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Given line boxes (x0, y0, x1, y1, …) widened by GIVEN_PAD of their height within the image, then cut
    apart from their neighbours: the crops the built-in engine reads (a region's lines and a page's alike)."""
    padded = []
    for line in lines:
        x0, y0, x1, y1 = (float(v) for v in line[:4])
        pad = GIVEN_PAD * (y1 - y0)
        padded.append((max(0.0, x0 - pad), max(0.0, y0 - pad), min(float(width), x1 + pad),
                       min(float(height), y1 + pad)))
    return apart(padded)
