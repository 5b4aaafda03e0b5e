"""Text boxes side by side that are one table's columns, joined back into the table.

On a scanned table with no rules and wide gaps, a layout model can box each column on its own as a paragraph: the
reader then writes "Primer name Tnfrsf12a sense IL6 sense …" and the sequences beside them as two paragraphs, and
the rows are lost. Boxes that stand side by side over the same stretch of the page, whose lines pair up row by row
(the same band in every box), and whose lines are short (a few words: cells, not the lines of a column of prose,
whose lines also meet on the same baselines across a gutter) are one table. Only a scan's lines are judged here: a
text layer's tables come from the table finder and the word grid.
"""

from __future__ import annotations

import re
from statistics import median

SIDE_OVERLAP = 0.7  # boxes side by side share this much of the shorter one's height
ROWS_PAIRED = 0.8  # this share of every box's lines has a line of each other box on its band
MIN_ROWS = 3
CELL_WORDS = 4  # a cell's line: at most this many words (median over a box's lines); CJK characters count one each
_WORDS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[^\s\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


def _words(text: str) -> int:
    return len(_WORDS.findall(text))


def _band(a, b) -> bool:
    """Two line boxes on one row: their vertical extents overlap by half the shorter one's height."""
    h = min(a[3] - a[1], b[3] - b[1]) or 1.0
    return min(a[3], b[3]) - max(a[1], b[1]) >= 0.5 * h


def _side_by_side(a: dict, b: dict) -> bool:
    h = min(a["y1"] - a["y0"], b["y1"] - b["y0"]) or 1.0
    return (min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) >= SIDE_OVERLAP * h
            and (a["x1"] <= b["x0"] or b["x1"] <= a["x0"]))


def _paired(lines_a, lines_b) -> bool:
    return all(sum(any(_band(x.box, y.box) for y in other) for x in own) >= ROWS_PAIRED * len(own)
               for own, other in ((lines_a, lines_b), (lines_b, lines_a)))


def _cells(lines) -> bool:
    return (len(lines) >= MIN_ROWS and all(ln.ocr for ln in lines)
            and median(_words(ln.text) for ln in lines) <= CELL_WORDS)


def join_side_tables(boxes: list[dict], lines_of) -> list[dict]:
    """`boxes` (reading order) with each group of text boxes that are one table's columns replaced by one table box
    where the group's first box stood (`lines_of(box)`: the text lines inside a box)."""
    text = [k for k, b in enumerate(boxes) if (b.get("boxclass") or "text") == "text"]
    held = {k: lines_of((boxes[k]["x0"], boxes[k]["y0"], boxes[k]["x1"], boxes[k]["y1"])) for k in text}
    text = [k for k in text if _cells(held[k])]
    groups: list[list[int]] = []
    for k in sorted(text, key=lambda k: boxes[k]["x0"]):
        for g in groups:
            if all(_side_by_side(boxes[k], boxes[j]) and _paired(held[k], held[j]) for j in g):
                g.append(k)
                break
        else:
            groups.append([k])
    joined = {min(g): g for g in groups if len(g) >= 2}
    gone = {k for g in joined.values() for k in g}
    out = []
    for k, b in enumerate(boxes):
        if k in joined:
            g = joined[k]
            table = {key: v for key, v in b.items() if key not in ("textlines", "ocr_lines")}
            table.update(boxclass="table", textlines=None, side_columns=len(g),
                         x0=min(boxes[j]["x0"] for j in g), y0=min(boxes[j]["y0"] for j in g),
                         x1=max(boxes[j]["x1"] for j in g), y1=max(boxes[j]["y1"] for j in g))
            out.append(table)
        elif k not in gone:
            out.append(b)
    return out
