"""Columns inside one text box of a scanned page: a newspaper article laid out as one box over four columns.

PyMuPDF's layout sometimes gives a whole multi-column article one `text` box, and the OCR's line detector joins
pieces of neighbouring columns across a narrow gutter, so the box would be read straight across the columns. Here
the gutters are found in the page image itself: vertical bands of paper, at least `MIN_GUTTER` of a text line wide,
that no ink crosses over most of the box's height (a headline over all the columns may cross them above, a footer
below); a thin vertical rule down the gutter (a gazette's column separator) is part of it, not ink across it.
A box with gutters is cut into a full-width band above the columns, the columns left to right, and a band
below, each a box of its own in that reading order.

    split_columns(mask, box, line_height) -> [box, ...]   # boxes in the mask's pixels; [box] when there is no gutter
    cut_columns(detections, lines, image, scale)          # a page's detections, each multi-column text box cut

Where boxes overlap (the layout gave a column of one box under another box too), a piece yields to the boxes that
were not cut and to the pieces before it, so the text is read once, and a box that was not cut is read right after
the column piece above it.

What must never live here: OCR, the layout model, reading order between boxes (page_boxes.order_columns).
"""
from __future__ import annotations

import numpy as np

from app.core.layout.orientation import ink
from app.core.layout.postprocess import Detection
from app.core.scripts.router import LOST
from app.core.text.textlayer import inside_fraction

MIN_GUTTER = 0.6  # a gutter is at least this many text-line heights wide (word spaces are narrower: ~0.3)
MIN_RUN = 0.5  # ... and clear of ink over at least this share of the box's height, in one run
MIN_COLUMN = 4.0  # a column is at least this many line heights wide (a gap beside a drop cap is no gutter)
MIN_LINES = 6  # a box of fewer text lines than this is not cut
RULE = 0.2  # a rule in a gutter: ink at most this many line heights wide, down most of the box's height
CUT_MIN = 1.0  # a line cut at a piece's edge keeps a part at least this many line heights wide
SHARE_IN, SHARE_OUT = 0.8, 0.2  # a line this much of whose height lies in a piece is its own; this little: not


def _longest_clear_run(column: np.ndarray) -> tuple[int, int]:
    """(start, end) of the longest run of False in a bool column."""
    ink = np.flatnonzero(column)
    bounds = np.concatenate(([-1], ink, [column.size]))
    k = int(np.argmax(np.diff(bounds)))
    return int(bounds[k] + 1), int(bounds[k + 1])


def _through_rules(clear: list[bool], inked: np.ndarray, widest: int) -> list[bool]:
    """`clear` with each run of columns at most `widest` wide between two clear ones made clear where each of
    them is inked (`inked`: its share of ink) over most of the height: a thin vertical rule down a gutter (a
    gazette's column separator) keeps the gutter one band; a letter (a "(1)" ending a line) is not as long."""
    out = list(clear)
    x, n = 0, len(clear)
    while x < n:
        if clear[x]:
            x += 1
            continue
        end = x
        while end < n and not clear[end]:
            end += 1
        if x > 0 and end < n and end - x <= widest and bool((inked[x:end] >= MIN_RUN).all()):
            out[x:end] = [True] * (end - x)
        x = end
    return out


def gutters(mask: np.ndarray, line_height: float) -> list[tuple[int, int, int, int]]:
    """Interior gutters of an ink mask as (x0, x1, y0, y1): x range of the band, y range where it is clear."""
    h, w = mask.shape
    if h < MIN_LINES * line_height or w < 2 * MIN_COLUMN * line_height:
        return []
    runs = [_longest_clear_run(mask[:, x]) for x in range(w)]
    paper = [(b - a) >= MIN_RUN * h for a, b in runs]
    clear = _through_rules(paper, mask.mean(axis=0), max(2, int(RULE * line_height)))
    out, start = [], None
    for x, on in enumerate(clear + [False]):
        if on and start is None:
            start = x
        elif not on and start is not None:
            if x - start >= MIN_GUTTER * line_height:
                band = [k for k in range(start, x) if paper[k]]  # a rule's columns say nothing of the band
                y0 = int(np.median([runs[k][0] for k in band]))  # the band's edges are ragged
                y1 = int(np.median([runs[k][1] for k in band]))
                if y1 - y0 >= MIN_RUN * h:
                    out.append((start, x, y0, y1))
            start = None
    # only gutters with a real column on both sides (the paper at the box's edges is a margin, not a gutter);
    # where some have none, the one clear over the least height goes first (a short paragraph's blank end by
    # a gutter that runs down the whole box) and the rest are judged again, their columns wider
    inked = lambda a, b: mask[:, a:b].any(axis=0).sum() >= MIN_COLUMN * line_height  # noqa: E731
    while out:
        edges = [0] + [x for g in out for x in g[:2]] + [w]
        lacking = [g for i, g in enumerate(out)
                   if not (inked(edges[2 * i], g[0]) and inked(g[1], edges[2 * i + 3]))]
        if not lacking:
            break
        out.remove(min(lacking, key=lambda g: g[3] - g[2]))
    return out


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


def cut_columns(dets: list[Detection], lines: dict[int, list], image, scale: float):
    """The detections cut at their gutters (`_cut_columns`), timed as the page's "column cut" stage."""
    from app.core.base.stages import stage

    with stage("column cut"):
        return _cut_columns(dets, lines, image, scale)


def _cut_columns(dets: list[Detection], lines: dict[int, list], image, scale: float):
    """The detections with each multi-column text box of a scan cut into its columns (app.core.layout.columns), and
    per detection the OCR lines ([x0, y0, x1, y1, text], points) it holds: a piece keeps the lines inside it, and
    the part of a line joined across a gutter that lies in it (`piece_lines`)."""
    out, own, mask, cut, made_ids = [], [], None, {}, set()
    for d in dets:
        held = lines.get(d.order) or []
        if d.label == "text" and len(held) >= MIN_LINES:
            if mask is None:
                mask = ink(np.asarray(image.convert("L")))
            height = float(np.median([ln[3] - ln[1] for ln in held])) * scale
            pieces = split_columns(mask, d.box, height)
            if len(pieces) > 1:
                cut[id(d)] = pieces
    # a piece yields to the boxes that were not cut and to the pieces read before it (overlapping boxes: once)
    placed = [e.box for e in dets if e.label == "text" and id(e) not in cut]
    for d in dets:
        held = lines.get(d.order) or []
        if id(d) not in cut:
            out.append(d)
            own.append(held)
            continue
        for piece in (p for piece in cut[id(d)] for p in uncovered(piece, [b for b in placed if b != d.box])):
            made = Detection(d.label, d.score, piece, d.order)
            pt = tuple(v / scale for v in piece)
            near = [ln for ln in held if inside_fraction(tuple(ln[:4]), pt) > 0.1]
            out.append(made)
            own.append(piece_lines(near, pt))
            placed.append(piece)
            made_ids.add(id(made))
    if cut:
        _follow_pieces(out, own, made_ids)
    return out, own


def piece_lines(near: list, piece: tuple[float, ...]) -> list:
    """The OCR lines of a column piece (points) from the lines that reach into it: those inside it as they are;
    of a line the detector joined across the piece's edges (over a gutter, or two lines into one box) the part
    inside it, its text unknown here (`LOST`: app.core.pipeline.page_ocr gives it the characters the line was read
    with there, or the engine reads that part again, and only that part) — the line's own height where it lies
    mostly (SHARE_IN) within the piece's height, else cut there too; a line mostly above or below it (SHARE_OUT) is
    its neighbour's."""
    out = []
    for ln in near:
        box = tuple(float(v) for v in ln[:4])
        if inside_fraction(box, piece) >= 0.9:
            out.append(ln)
            continue
        height = max(1e-6, box[3] - box[1])
        share = (min(box[3], piece[3]) - max(box[1], piece[1])) / height
        if share <= SHARE_OUT:
            continue
        y0, y1 = (box[1], box[3]) if share >= SHARE_IN else (max(box[1], piece[1]), min(box[3], piece[3]))
        x0, x1 = max(box[0], piece[0]), min(box[2], piece[2])
        if x1 - x0 >= CUT_MIN * (y1 - y0):  # (a sliver is the neighbour's padding, not its letters)
            out.append([round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2), LOST])
    return out


def _follow_pieces(out: list, own: list, pieces: set[int]) -> None:
    """Move each box that was not cut to just after the column piece right above it (in place): the layout's order
    knew the box, not the pieces, so a column's middle box would otherwise be read after the last column."""
    for d in [e for e in out if id(e) not in pieces and e.label == "text"]:
        x0, y0, x1, _ = d.box
        above = [e for e in out if id(e) in pieces and min(x1, e.box[2]) - max(x0, e.box[0]) >= 0.8 * (x1 - x0)
                 and abs(e.box[3] - y0) <= 0.05 * (x1 - x0) + 20]
        if not above:
            continue
        i, j = out.index(d), out.index(above[0])
        if i == j + 1:
            continue
        item, held = out.pop(i), own.pop(i)
        j = out.index(above[0])
        out.insert(j + 1, item)
        own.insert(j + 1, held)


def uncovered(piece, others, min_height: float = 8.0) -> list:
    """The parts of `piece` (x0, y0, x1, y1) that no other box covers across most of its width: where the layout gave
    two overlapping boxes (a column of one box lying under another box), the column's text is read once."""
    x0, y0, x1, y1 = piece
    covered = sorted((max(y0, o[1]), min(y1, o[3])) for o in others
                     if min(x1, o[2]) - max(x0, o[0]) >= 0.8 * (x1 - x0) and min(y1, o[3]) > max(y0, o[1]))
    out, top = [], y0
    for a, b in covered + [(y1, y1)]:
        if a - top >= min_height:
            out.append((x0, top, x1, a))
        top = max(top, b)
    return out

