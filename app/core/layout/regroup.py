"""Layout boxes regrouped after the layout model: a display equation it cut into rows joined again
(`join_display_pieces`), and numbered sections set as cards in a grid put in their numbers' order
(`numbered_order`), a paragraph cut mid-sentence at a column's foot read on in its continuation
(`continued_sentences`), and a piece of a paragraph boxed a second time inside it left out (`nested_pieces`).

What must never live here: reading text, classifying a single box (app.core.layout.page_boxes).
"""
from __future__ import annotations

import re

from app.core.text.textlayer import inside_fraction


def _box_of(b: dict) -> tuple[float, float, float, float]:
    return (float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"]))


def join_display_pieces(boxes: list[dict], lines_in, math_piece) -> list[dict]:
    """A display equation the layout cut into rows — a formula box per row and the fractions' lower halves as text
    boxes between them — as one formula box again. A run of boxes one under the other in reading order (each
    overlapping the next across, a line's height apart at most) joins when it holds a formula and a text piece
    of math (`math_piece(box, its lines)`); formulas that follow each other with no such piece stay apart."""
    out: list[dict] = []
    run: list[dict] = []

    def flush() -> None:
        if len(run) > 1 and any(b.get("boxclass") == "formula" for b in run) and \
                any(b.get("boxclass") != "formula" for b in run):
            # a numerator above the first row's box, a denominator below the last's: half a row more each way
            pad = 0.5 * min(float(b["y1"]) - float(b["y0"]) for b in run)
            joined = dict(run[0], boxclass="formula", x0=min(b["x0"] for b in run),
                          y0=min(b["y0"] for b in run) - pad, x1=max(b["x1"] for b in run),
                          y1=max(b["y1"] for b in run) + pad)
            for key in ("textlines", "ocr_lines"):
                joined.pop(key, None)
            out.append(joined)
        else:
            out.extend(run)
        run.clear()

    for b in boxes:
        held = lines_in(_box_of(b))
        piece = b.get("boxclass") == "formula" or math_piece(b, held)
        if piece and run:
            last = run[-1]
            height = max((ln.box[3] - ln.box[1] for ln in held), default=10.0)
            across = min(last["x1"], b["x1"]) - max(last["x0"], b["x0"])
            if across > 0.3 * min(last["x1"] - last["x0"], b["x1"] - b["x0"]) and \
                    -height <= float(b["y0"]) - float(last["y1"]) <= 1.5 * height:
                run.append(b)
                continue
        flush()
        if piece:
            run.append(b)
        else:
            out.append(b)
    flush()
    return out


_NUMBERED = re.compile(r"^\s*(\d{1,2})[.)]\s+\S")


def numbered_order(boxes: list[dict], text_of) -> list[dict]:
    """Sections numbered 1, 2, 3, … read in their numbers' order. Cards set in a grid (1 and 2 side by side, 3 and
    4 under them) are read column by column; when the page's numbered headings then come out of order but are
    consecutive numbers, each heading with the boxes after it (up to the next) moves into its number's place."""
    heads = [(k, int(m.group(1))) for k, b in enumerate(boxes) if b.get("boxclass") == "section-header"
             for m in [_NUMBERED.match(text_of(_box_of(b)))] if m]
    numbers = [n for _, n in heads]
    if len(heads) < 3 or numbers == sorted(numbers) or sorted(numbers) != list(range(min(numbers),
                                                                                    min(numbers) + len(numbers))):
        return boxes
    starts = [k for k, _ in heads] + [len(boxes)]
    groups = sorted((n, boxes[starts[i]:starts[i + 1]]) for i, (_, n) in enumerate(heads))
    return boxes[:starts[0]] + [b for _, group in groups for b in group]


LOOK_AHEAD = 6  # boxes after a sentence cut off at a box's end searched for the box it goes on in
_ENDS = re.compile(r"[.!?:;)\]”\"’]\s*$")


def continued_sentences(boxes: list[dict], text_of) -> list[dict]:
    """A paragraph cut mid-sentence at the foot of a column ("…examines whether a") goes on in the first text box
    after it that starts in lower case ("tobacco company espousing…"); the boxes the reading order put between
    them (a sidebar, the next column's start) follow the continuation. Only text boxes; only when the box right
    after the cut is prose starting otherwise (an upper-case letter, a digit: a display formula or a table after
    "…is" goes on the sentence); and only a continuation in the next column, starting higher than the cut ends."""
    out = list(boxes)
    k = 0
    while k < len(out) - 2:
        text = text_of(_box_of(out[k])).rstrip()
        if out[k].get("boxclass") != "text" or not text or _ENDS.search(text) or not (
                text[-1].isalpha() and text[-1].islower()):
            k += 1
            continue
        nxt = text_of(_box_of(out[k + 1])).lstrip()
        between = out[k + 1].get("boxclass") in ("text", "section-header", "caption", "footnote")
        if between and not (out[k + 1].get("boxclass") == "text" and nxt[:1].islower()):
            a = _box_of(out[k])
            for j in range(k + 2, min(len(out), k + 2 + LOOK_AHEAD)):
                start, b = text_of(_box_of(out[j])).lstrip(), _box_of(out[j])
                if out[j].get("boxclass") == "text" and start[:1].isalpha() and start[:1].islower() \
                        and b[0] >= a[2] - 0.1 * (a[2] - a[0]) and b[1] < a[3]:  # the next column, higher up
                    out.insert(k + 1, out.pop(j))
                    break
        k += 1
    return out


NESTED = 0.8  # a text box this much inside another text box is a piece of it the layout boxed again


def nested_pieces(boxes: list[dict]) -> list[dict]:
    """The boxes without a text box that lies inside another text (or list) box: the layout boxed a piece of a
    paragraph a second time (a proof's end-of-proof box at the end of its last line), and its words, read with the
    paragraph already, came out twice."""
    def area(b: dict) -> float:
        x0, y0, x1, y1 = _box_of(b)
        return max(0.0, x1 - x0) * max(0.0, y1 - y0)

    hosts = [b for b in boxes if b.get("boxclass") in ("text", "list-item")]
    return [b for b in boxes if b.get("boxclass") != "text" or not any(
        h is not b and area(h) > area(b) and inside_fraction(_box_of(b), _box_of(h)) >= NESTED for h in hosts)]
