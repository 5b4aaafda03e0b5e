"""The built-in engine's lines in scripts its recogniser cannot read: handed to the script router
(app.core.scripts.router) and written as that recogniser read them.

A region whose given line boxes (the layout's OCR) hold a line the recogniser left mostly unread has its lines
found again by the engine's own detector first: the layout's OCR boxes a line it could not read poorly (a
Russian line came back 4 points high). A routed line is not decoded: the other recogniser's text, its
confidences as the line's probabilities, no rounds (the rounds view shows no empty rounds for it), and its
stats say who read it (`reader`, e.g. "tesseract:rus"; the built-in decoder's lines say "builtin", the
recogniser's own "rapidocr").

What must never live here: decoding, the recognisers themselves, the pipeline.
"""
from __future__ import annotations

import math
from typing import Any

from app.core.scripts.direction import right_first, stacked_rows
from app.core.scripts.pieces import INSIDE, absorbed, inside
from app.core.scripts.router import SUSPECT_COVERAGE, Routed, route_stats, suspect
from app.core.record.events import TokensCommitted
from app.core.text.textcheck import line_coverage

DECODER, RECOGNISER = "builtin", "rapidocr"  # the readers of the lines the engine reads itself


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def route_page(engine, image, boxes, readings) -> None:
    """A scanned page's lines read once (page_lines.py): each line the router reads instead gets its reading
    (`reading.routed`), which the layout is given as the line's text and the engine writes (an Unread: no
    installed recogniser reads it)."""
    lines = [(box, rd.text, mean(rd.conf)) for box, rd in zip(boxes, readings)]
    for reading, other in zip(readings, with_parts(boxes, engine.router.route(image, lines)) if lines else ()):
        reading.routed = other  # a Routed reading, an Unread (flagged with its region), or None


def route_region(engine, image, rows, readings, *, given: bool, known: bool = False, fresh=()):
    """(rows, flat pieces, readings, routed per piece): the router's verdict on each line; lines found again
    by the detector first when given boxes hold a line left mostly unread. Lines read with the page (`known`)
    carry the page pass's verdict; those of them read here (`fresh`: their indices) get the router's now."""
    flat = [piece for row in rows for piece in row]
    if known:
        routed = [rd.routed for rd in readings]
        lines = [(flat[k][0], readings[k].text, mean(readings[k].conf)) for k in fresh]
        for k, other in zip(fresh, engine.router.route(image, lines) if lines else ()):
            routed[k] = other
        return rows, flat, readings, routed
    bad_box = any(suspect(box, rd.text, mean(rd.conf)) and line_coverage(box, rd.text) < SUSPECT_COVERAGE
                  for (box, _), rd in zip(flat, readings))
    if given and bad_box:
        found = engine.find_lines(image)
        if found:
            rows = found
            flat = [piece for row in rows for piece in row]
            readings = engine.recogniser.read([crop for _, crop in flat])
    lines = [(box, rd.text, mean(rd.conf)) for (box, _), rd in zip(flat, readings)]
    routed = with_parts([box for box, _ in flat], engine.router.route(image, lines))
    return rows, flat, readings, routed


def with_parts(boxes, results) -> list:
    """The router's results, a piece found apart from a routed line it lies in (a Thai mark) read with it: an
    empty reading by the same recogniser (app.core.scripts.pieces.absorbed)."""
    out = list(results)
    for k, part in enumerate(absorbed(boxes, results)):
        if part:
            host = next(r for b, r in zip(boxes, results) if isinstance(r, Routed) and inside(boxes[k], b) >= INSIDE)
            out[k] = Routed("", 1.0, host.reader, host.script)
    return out


def routed_line(engine, line: Routed, recognised: str, *, region_id: str, emit, offsets: dict, sep: str):
    """A line another recogniser read: (stats, token ids, log-probabilities, text), as `fallback_line`."""
    text = line.text
    ids = [int(engine.codec.char.get(ch, engine.codec.unk)) for ch in text]
    per_char = [float(w[5]) for w in line.words for _ in str(w[4])] if line.words else []
    if len(per_char) != len(text):
        per_char = [line.conf] * len(text)
    lps = [math.log(max(1e-6, min(1.0, p))) for p in per_char]
    if text:
        emit(TokensCommitted(region_id, offsets["step"], ids, (sep + text) if sep else text, 0.0, 0,
                             token_texts=list(text)))
    st = {"mode": "recogniser", "fallback": "routed", "reader": line.reader, "script": line.script,
          "recogniser": recognised, "text": text, "stopped": "done", "tokens": len(ids),
          "output_tokens": len(ids), "rounds": 0, "forwards": 0, "conf": line.conf}
    if line.words:
        st["words"] = [list(w) for w in line.words]
    if line.rtl:
        st["rtl"] = True
    return st, ids, lps, text


def reader_stats(per_line: list[dict[str, Any]], routed, boxes) -> dict[str, Any]:
    """The region's `reader`, `readers`, `unreadable_scripts` and `vertical_lines` (router.route_stats; and
    rows that are vertical columns read across: direction.stacked_rows), each line's `reader` set."""
    for s in per_line:
        s.setdefault("reader", RECOGNISER if s.get("fallback") == "recogniser" else DECODER)
    st = route_stats([s["reader"] for s in per_line], routed, boxes)
    across = stacked_rows([(s.get("box") or (0, 0, 0, 0), str(s.get("text") or "")) for s in per_line])
    if across:  # vertical columns the detector joined row by row: counted as vertical text (flagged)
        st["vertical_lines"] = max(across, int(st.get("vertical_lines") or 0))
    return st


def reading_rows(texts: list[list[str]], per_line: list[dict[str, Any]]) -> list[list[str]]:
    """Each row's pieces in reading order: a row of right-to-left lines or of vertical CJK columns from its right
    end (app.core.scripts.direction)."""
    out, k = [], 0
    for row in texts:
        lines = per_line[k:k + len(row)]
        k += len(row)
        pieces = [(s.get("box") or (0, 0, 0, 0), t) for s, t in zip(lines, row)]
        out.append(row[::-1] if len(lines) == len(row) and right_first(pieces) else row)
    return out
