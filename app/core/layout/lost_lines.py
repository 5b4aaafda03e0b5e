"""Text the layout dropped on a scanned page: printed lines of ink outside every region it kept.

On poor scans (low resolution, blur, speckle) a layout model can keep the title and the headings and lose the
paragraphs between them; the page would then be written without its body and nothing would say so. Here the page
image is despeckled (a 3 × 3 median), every kept region (read or skipped: headers, pictures and tables too) is
blanked, and what ink is left is cut into text lines by its row profile and, within a row band, at wide gaps. A
line counts when it is shaped like print (wider than tall, neither a hairline nor a solid bar, ink neither sparse
nor solid); the lines are grouped into blocks (a gap under two line heights joins them) that become plain text
regions marked `layout_missed` (their lines' boxes in `ink_lines`, points, for an engine that reads given
lines), placed in the reading order by their top, and the page gets a warning.

Numpy, Pillow and OpenCV's median, on a copy of the page reduced to WORK_DPI: a few tens of milliseconds a page.
What must never live here: reading text (the engine reads the new regions like any other), born-digital pages
(their text layer says what the layout missed: app.core.pipeline.text_source).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from app.core.document.regions import Region, region_id

WORK_DPI = 100.0  # 10-pt print is ~14 px high here: enough to see lines, cheap to scan
PAD_PT = 3.0  # kept regions are blanked this much beyond their box (ink of their own that pokes out)
MIN_LINE_PT = (4.0, 40.0)  # a print line's height in points: smaller is dirt, taller is a picture or a bar
MIN_ASPECT = 2.5  # a line is at least this many times wider than tall
INK_SHARE = (0.06, 0.6)  # share of a line box's pixels that are ink
MIN_LOST_WIDTH = (0.2, 0.12)  # a lost block: a line this share of the page wide, or two lines each this wide
EDGE_SHARE = 0.04  # ink this near the top or bottom edge is the scan's edge or furniture, not lost body text
MISSED = "the layout missed these lines; read as plain text (check their place in the reading order)"


def _ink(image, scale: float) -> np.ndarray:
    """Bool ink of the despeckled page reduced by `scale`. The 3 × 3 median is OpenCV's (pixel for pixel Pillow's
    MedianFilter(3) on the real set's pages, edges replicated alike; 3-150 times faster: 0.14 s on a 300-DPI scan)."""
    import cv2

    small = image.convert("L").resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    grey = cv2.medianBlur(np.ascontiguousarray(np.asarray(small, dtype=np.uint8)), 3)
    bg, dark = float(np.percentile(grey, 90)), float(np.percentile(grey, 1))
    if bg - dark < 40:  # no contrast: a blank or a flat page
        return np.zeros(grey.shape, dtype=bool)
    return grey < (bg + dark) / 2


_INK: list = []  # the last page's (weak reference to its image, scale, ink): `prepare` fills it ahead


def prepare(image, dpi: float) -> None:
    """Work out the ink of `image` (a page rendered at `dpi`) ahead, for `recover_lost_lines` on that very image
    (the pipeline does it while the layout runs in its child process)."""
    import weakref

    scale = WORK_DPI / float(dpi)
    if image is not None and image.width and image.height and _cached_ink(image, scale) is None:
        _INK[:] = [(weakref.ref(image), scale, _ink(image, scale))]


def _cached_ink(image, scale: float) -> np.ndarray | None:
    return next((ink for ref, at, ink in _INK if ref() is image and at == scale), None)


def _blank(ink: np.ndarray, boxes, scale: float) -> np.ndarray:
    """A copy of `ink` with `boxes` (page pixels) cleared."""
    out = ink.copy()
    h, w = out.shape
    for x0, y0, x1, y1 in boxes:
        out[max(0, int(y0 * scale)):min(h, int(np.ceil(y1 * scale))),
            max(0, int(x0 * scale)):min(w, int(np.ceil(x1 * scale)))] = False
    return out


def _inside(ink: np.ndarray, box, scale: float) -> np.ndarray:
    """`ink` with everything outside `box` (page pixels) cleared."""
    out = np.zeros_like(ink)
    h, w = ink.shape
    ys = slice(max(0, int(box[1] * scale)), min(h, int(np.ceil(box[3] * scale))))
    xs = slice(max(0, int(box[0] * scale)), min(w, int(np.ceil(box[2] * scale))))
    out[ys, xs] = ink[ys, xs]
    return out


def _runs(on: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of the True runs of a 1-d bool array."""
    edges = np.diff(np.concatenate(([0], on.astype(np.int8), [0])))
    return list(zip(np.nonzero(edges == 1)[0].tolist(), np.nonzero(edges == -1)[0].tolist()))


def ink_lines(ink: np.ndarray, px_per_pt: float) -> list[tuple[int, int, int, int]]:
    """Print-shaped lines (x0, y0, x1, y1 in `ink`'s pixels) of the ink left on the page, top to bottom."""
    lo, hi = (v * px_per_pt for v in MIN_LINE_PT)
    out = []
    for y0, y1 in _runs(ink.sum(axis=1) >= 2):
        height = y1 - y0
        if not lo <= height <= hi:
            continue
        band = ink[y0:y1]
        cols = band.any(axis=0)
        # pieces of the band apart by more than two line heights are separate lines (columns, a margin note)
        pieces: list[list[int]] = []
        for a, b in _runs(cols):
            if pieces and a - pieces[-1][1] <= 2 * height:
                pieces[-1][1] = b
            else:
                pieces.append([a, b])
        for a, b in pieces:
            share = float(band[:, a:b].mean())
            if b - a >= MIN_ASPECT * height and INK_SHARE[0] <= share <= INK_SHARE[1]:
                out.append((a, y0, b, y1))
    return out


def _blocks(lines: list[tuple[float, float, float, float]]) -> list[list[tuple[float, float, float, float]]]:
    """Lines (points, top to bottom) grouped into blocks: a line joins the block above when the gap is under two
    line heights and the two overlap across."""
    blocks: list[list[tuple[float, float, float, float]]] = []
    for line in lines:
        if blocks:
            last = blocks[-1][-1]
            height = max(last[3] - last[1], line[3] - line[1])
            across = min(last[2], line[2]) - max(last[0], line[0])
            if line[1] - last[3] < 2 * height and across > 0:
                blocks[-1].append(line)
                continue
        blocks.append([line])
    return blocks


def _grow(box, pad: float) -> tuple[float, float, float, float]:
    return (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)


def trust_layout_lines(ink: np.ndarray, scale: float, dpi: float, regions: list[Region]) -> None:
    """A region whose lines the layout's OCR read (`extra["ocr_lines"]`, points) but that holds print outside
    them (a line cut short, a line not seen) loses those lines: the engine finds the region's lines itself, and
    where that print lies is kept (`extra["print_outside"]`: its line boxes, points)."""
    to_px, pad = float(dpi) / 72.0, PAD_PT * dpi / 72.0
    for r in regions:
        lines = r.extra.get("ocr_lines")
        if r.task != "text" or not lines:
            continue
        rest = _blank(_inside(ink, r.box, scale), [_grow([v * to_px for v in ln[:4]], pad) for ln in lines], scale)
        outside = ink_lines(rest, WORK_DPI / 72.0)
        if outside:
            del r.extra["ocr_lines"]
            r.extra["layout_lines_dropped"] = "print outside the layout's lines: the engine finds them itself"
            r.extra["print_outside"] = [[round(v * 72.0 / WORK_DPI, 2) for v in box] for box in outside]


def recover_lost_lines(image, dpi: float, regions: list[Region]) -> tuple[list[Region], int]:
    """`regions` with a plain text region added for each block of print-shaped ink no region covers, and the
    number of lines found so (0: no block added). Regions are renumbered in reading order; a small text region
    inside a new block is the layout's fragment of it and goes (the block reads it)."""
    if image is None or not image.width or not image.height or not regions:
        return regions, 0
    scale = WORK_DPI / float(dpi)
    px_per_pt = WORK_DPI / 72.0
    pad = PAD_PT * dpi / 72.0
    ink = _cached_ink(image, scale)
    ink = _ink(image, scale) if ink is None else ink
    trust_layout_lines(ink, scale, dpi, regions)
    found = ink_lines(_blank(ink, [_grow(r.box, pad) for r in regions], scale), px_per_pt)
    page_w, page_h = (v * 72.0 / float(dpi) for v in (image.width, image.height))
    lines_pt = [box for box in (tuple(v / px_per_pt for v in b) for b in found)
                if EDGE_SHARE * page_h < (box[1] + box[3]) / 2 < (1 - EDGE_SHARE) * page_h]
    blocks = [b for b in _blocks(lines_pt) if _worth_reading(b, page_w)]
    if not blocks:
        return regions, 0
    to_px = float(dpi) / 72.0
    page, template = regions[0].page, regions[0]
    added = []
    for block in blocks:
        box_pt = (min(b[0] for b in block), min(b[1] for b in block), max(b[2] for b in block),
                  max(b[3] for b in block))
        added.append(replace(
            template, label="text", task="text", score=0.0, text="", source=f"{template.source}+ink",
            box=tuple(round(v * to_px, 2) for v in box_pt), box_pt=tuple(round(v, 2) for v in box_pt),
            flags=[], extra={"native_label": "text", "layout_missed": MISSED, "lost_lines": len(block),
                             "ink_lines": [[round(v, 2) for v in line] for line in block]},
        ))
    ordered = [r for r in regions if not (r.task == "text" and any(_within(r.box, a.box) for a in added))]
    for new in added:  # before the first region that starts below it and shares its columns
        at = next((i for i, r in enumerate(ordered) if r.box[1] > new.box[1] and
                   min(r.box[2], new.box[2]) > max(r.box[0], new.box[0])), len(ordered))
        ordered.insert(at, new)
    for n, r in enumerate(ordered):
        r.id, r.order = region_id(page, n), n
    return ordered, sum(len(b) for b in blocks)


def _worth_reading(block, page_w: float) -> bool:
    """A block of lost lines is text worth a region (not a figure's label, a stray mark): one line a good share
    of the page wide, or two lines each a fair share."""
    widths = sorted((b[2] - b[0] for b in block), reverse=True)
    return widths[0] >= MIN_LOST_WIDTH[0] * page_w or (len(widths) > 1 and widths[1] >= MIN_LOST_WIDTH[1] * page_w)


def _within(inner, outer, share: float = 0.8) -> bool:
    w = max(0.0, min(inner[2], outer[2]) - max(inner[0], outer[0]))
    h = max(0.0, min(inner[3], outer[3]) - max(inner[1], outer[1]))
    area = max(1e-6, (inner[2] - inner[0]) * (inner[3] - inner[1]))
    return w * h >= share * area
