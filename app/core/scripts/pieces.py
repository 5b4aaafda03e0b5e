"""The classic engine's pieces through the script router: what RapidOCR found in a region (its empty and
unsure pieces too), each line it could not read replaced by another recogniser's reading where one reads it.

What must never live here: RapidOCR calls, layout, the pipeline.
"""
from __future__ import annotations

from typing import Any, Sequence

from app.core.scripts.catalogue import SCRIPTS
from app.core.scripts.direction import stacked_rows
from app.core.scripts.router import LOST, Routed, ScriptRouter, route_stats
from app.core.text.textcheck import dominant_script

READER = "rapidocr"  # the classic engine's own reader
INSIDE = 0.5  # a piece this much inside a routed line's box is part of that line (a Thai mark found apart)


def inside(box: Sequence[float], outer: Sequence[float]) -> float:
    """The share of `box` inside `outer` (both x0, y0, x1, y1)."""
    w = max(0.0, min(box[2], outer[2]) - max(box[0], outer[0]))
    h = max(0.0, min(box[3], outer[3]) - max(box[1], outer[1]))
    area = max(1e-6, (box[2] - box[0]) * (box[3] - box[1]))
    return w * h / area


def absorbed(boxes: Sequence[Sequence[float]], results: Sequence) -> list[bool]:
    """Per piece: is it part of a line another recogniser read (mostly inside that line's box, and not routed
    itself)? Its ink was read with the line."""
    routed = [b for b, r in zip(boxes, results) if isinstance(r, Routed)]
    return [not isinstance(r, Routed) and any(inside(b, o) >= INSIDE for o in routed)
            for b, r in zip(boxes, results)]


def routed_pieces(router: ScriptRouter, image, pieces: Sequence[tuple], min_score: float):
    """`pieces`: (box, text, score, words) for every piece RapidOCR found in `image` (boxes in its pixels) ->
    (the pieces kept as (box, text, score), their words, their readers, the region's reader stats). A piece
    the router did not take keeps RapidOCR's reading when it is non-empty and at least `min_score` sure."""
    results = router.route(image, [(p[0], p[1], p[2]) for p in pieces])
    kept: list[tuple] = []
    words: list[list[Any]] = []
    readers: list[str] = []
    for piece, routed, part in zip(pieces, results, absorbed([p[0] for p in pieces], results)):
        if isinstance(routed, Routed):
            kept.append((piece[0], routed.text, routed.conf))
            words.append([list(w) for w in routed.words])
            readers.append(routed.reader)
        elif piece[1] and LOST not in piece[1] and piece[2] >= min_score and not part:
            kept.append(tuple(piece[:3]))
            words.append(list(piece[3]))
            readers.append(READER)
    return kept, words, readers, route_stats(readers, results, [p[0] for p in pieces])


def layout_line_readers(lines: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The reader stats of lines the layout's OCR read ([x0, y0, x1, y1, text, {"reader", "vertical"}];
    app.core.layout.ocr_scripts), each line's `reader` in `line_stats`. A line the hook's record does not name
    (its text came back changed from the layout) is, by its letters, Tesseract's ("tesseract", its model
    unknown) when in a script the router reads, else RapidOCR's; vertical lines (CJK columns, or rows cut
    across them: direction.stacked_rows) are counted."""
    known = [line[5] if len(line) > 5 and isinstance(line[5], dict) else {} for line in lines]
    readers = [str(k.get("reader") or ("tesseract" if dominant_script([str(line[4])]) in SCRIPTS else READER))
               for line, k in zip(lines, known)]
    st = route_stats(readers, [], [line[:4] for line in lines])
    upright = max(sum(int(k.get("vertical") or 0) for k in known),
                  stacked_rows([(line[:4], str(line[4])) for line in lines]))
    if upright:  # their boxes came back from the layout as lines across the page
        st["vertical_lines"] = max(upright, int(st.get("vertical_lines") or 0))
    if lines:
        st["line_stats"] = [{"text": str(line[4]), "reader": r} for line, r in zip(lines, readers)]
    return st
