"""Display equations the layout left inside a paragraph's box, cut out as formula boxes of their own.

PyMuPDF's layout often draws one `text` box over a paragraph, the display equation under it and the paragraph
that goes on after it; the equation is then read as prose ("F(g) = 6 X r=1 brgr + …"). A display is a band of
rows (a sum's limits, a fraction's numerator and denominator are rows of their own, close together) set apart
from the paragraph: centred in the box, indented from its left edge, narrower than it, and mathematical — a
relation sign with few words around it, or no words at all (a vector of numbers). `split_displays(boxes,
lines)` returns the boxes with each such band cut out as a `formula` box between the text before and after it,
a text box that is one display of several rows and nothing else (`whole_display`) called a formula, and
formula boxes stacked one just under the other (an `align`'s numbered lines, boxed line by line) made one
(`merge_stacked`).

What must never live here: reading the formula (app.core.text.formula_layout), other corrections (page_boxes).
"""
from __future__ import annotations

import re

INDENT = 0.08  # of the box's width: a display starts at least this far in from the box's left edge
CENTRED = 0.15  # of the box's width: its middle this near the box's middle
NARROW = 0.85  # of the box's width at most
ROW_GAP = 3.5  # points: rows of one display (limits, a fraction's parts) sit this close
_RELATION = re.compile(r"[=<>≤≥≈≠∝∈⊂→≡∼]")
_WORD = re.compile(r"[A-Za-z]{3,}")
_FUNCTIONS = frozenset("sum int prod lim log ln exp sin cos tan max min det mod sup inf".split())


def _rows(lines) -> list[list]:
    rows: list[list] = []
    for ln in sorted(lines, key=lambda ln: ln.box[1]):
        for row in rows:
            top, bottom = min(r.box[1] for r in row), max(r.box[3] for r in row)
            if min(bottom, ln.box[3]) - max(top, ln.box[1]) >= 0.3 * min(bottom - top, ln.box[3] - ln.box[1]):
                row.append(ln)
                break
        else:
            rows.append([ln])
    return rows


def _extent(row) -> tuple[float, float, float, float]:
    return (min(ln.box[0] for ln in row), min(ln.box[1] for ln in row), max(ln.box[2] for ln in row),
            max(ln.box[3] for ln in row))


def _set_apart(row, box) -> bool:
    x0, _, x1, _ = _extent(row)
    width = box[2] - box[0]
    return x0 - box[0] >= INDENT * width and abs((x0 + x1) / 2 - (box[0] + box[2]) / 2) <= CENTRED * width \
        and x1 - x0 <= NARROW * width


def _mathematical(band) -> bool:
    text = " ".join(ln.text for row in band for ln in row)
    words = [w for w in _WORD.findall(text) if w.lower() not in _FUNCTIONS]
    relations = len(_RELATION.findall(text))
    if not words:
        return bool(relations) or sum(c.isdigit() for c in text) >= 8 \
            or any(ln.math for row in band for ln in row)
    return relations > 0 and len(words) <= relations + 1


def whole_display(lines) -> bool:
    """Does a text box hold one display equation and nothing else: its rows one band, math fonts in it, and no
    more words than relation signs (a box of its own that the layout called text)?"""
    rows = sorted(_rows(lines), key=lambda r: _extent(r)[1])
    if not rows or any(_extent(b)[1] - _extent(a)[3] > ROW_GAP for a, b in zip(rows, rows[1:])):
        return False
    text = " ".join(ln.text for ln in lines)
    words = [w for w in _WORD.findall(text) if w.lower() not in _FUNCTIONS]
    relations = len(_RELATION.findall(text))
    return any(ln.math for ln in lines) and (relations > 0 or not words) and len(words) <= max(1, relations)


def display_bands(box, lines) -> list[tuple[float, float, float, float]]:
    """The display equations inside a text box (their extents), top to bottom."""
    rows = sorted(_rows(lines), key=lambda r: _extent(r)[1])
    bands: list[list] = []
    for row in rows:
        if _set_apart(row, box):
            if bands and bands[-1] and _extent(row)[1] - _extent(bands[-1][-1])[3] <= ROW_GAP:
                bands[-1].append(row)
            else:
                bands.append([row])
        elif bands and bands[-1]:
            bands.append([])  # a prose row ends the band before it
    out = []
    for band in (b for b in bands if b and _mathematical(b)):
        ext = [_extent(r) for r in band]
        out.append((min(e[0] for e in ext), min(e[1] for e in ext), max(e[2] for e in ext),
                    max(e[3] for e in ext)))
    return out


STACK_GAP = 6.0  # points: formula boxes this close one under the other are the rows of one display


def merge_stacked(boxes: list[dict]) -> list[dict]:
    """Formula boxes that follow each other in reading order, one just under the other and overlapping
    sideways (the numbered lines of one `align`, which the layout boxes line by line), as one formula box."""
    out: list[dict] = []
    for b in boxes:
        prev = out[-1] if out else None
        if prev is not None and prev.get("boxclass") == b.get("boxclass") == "formula" \
                and 0 <= float(b["y0"]) - float(prev["y1"]) <= STACK_GAP \
                and min(float(b["x1"]), float(prev["x1"])) > max(float(b["x0"]), float(prev["x0"])):
            out[-1] = {**prev, "x0": min(prev["x0"], b["x0"]), "x1": max(prev["x1"], b["x1"]), "y1": b["y1"]}
            continue
        out.append(b)
    return out


def split_displays(boxes: list[dict], lines_in) -> list[dict]:
    """`boxes` with each text box that holds display equations cut into text / formula / text pieces (empty
    pieces left out), in reading order. `lines_in(box)`: the lines a box holds."""
    out: list[dict] = []
    for b in boxes:
        box = (float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"]))
        held = lines_in(box) if b.get("boxclass") == "text" else []
        if held and len(_rows(held)) >= 2 and whole_display(held):  # (one row: page_boxes' own rule)
            out.append({**b, "boxclass": "formula"})
            continue
        bands = display_bands(box, held) if len(held) >= 2 else []
        if not bands:
            out.append(b)
            continue
        top = box[1]
        for x0, y0, x1, y1 in bands:
            if any(ln.box[3] <= y0 + 0.5 and ln.box[1] >= top - 0.5 for ln in held):
                out.append({**b, "y0": top, "y1": y0 - 0.1})
            out.append({**b, "boxclass": "formula", "x0": x0 - 1, "y0": y0 - 0.5, "x1": x1 + 1,
                        "y1": y1 + 0.5})
            top = y1 + 0.1
        if any(ln.box[1] >= top - 0.5 for ln in held):
            out.append({**b, "y0": top})
    return merge_stacked(out)
