"""Which way the pieces of one visual row are read: left to right, except a row of right-to-left lines
(Arabic, Hebrew: their pieces from the right end) and a row of vertical columns of CJK text (traditional
vertical writing: columns from the right). The text of each piece is in logical order either way. And where
vertical writing was read across its columns (`stacked_rows`), so that it can be flagged.

What must never live here: recognition, layout, assembly.
"""
from __future__ import annotations

from typing import Sequence

from app.core.text.textcheck import WIDE_SCRIPTS, dominant_script, right_to_left, script_of

VERTICAL = 2.0  # a piece this many times taller than wide is a vertical column of text
STACKED_ROWS = 4  # at least this many rows ...
STACKED_GLYPHS = 3  # ... of at most this many CJK glyphs each, one under another: columns read across


def vertical(box: Sequence[float]) -> bool:
    x0, y0, x1, y1 = (float(v) for v in box[:4])
    return y1 - y0 > VERTICAL * max(1.0, x1 - x0)


def right_first(pieces: Sequence[tuple[Sequence[float], str]]) -> bool:
    """Is this row (its pieces as (box, text), left to right) read from its right end?"""
    texts = [t for _, t in pieces if t.strip()]
    if len(pieces) < 2 or not texts:
        return False
    if all(right_to_left(t) for t in texts):
        return True
    return all(vertical(b) for b, _ in pieces) and dominant_script(texts) in WIDE_SCRIPTS


def in_reading_order(pieces: list) -> list:
    """The row's pieces ((box, text, ...), left to right) in reading order."""
    return pieces[::-1] if right_first([(p[0], p[1]) for p in pieces]) else pieces


def stacked_rows(lines: Sequence[tuple[Sequence[float], str]]) -> int:
    """How many of a block's lines ((box, text), top to bottom) are vertical CJK columns read across: a
    detector that joins neighbouring columns' glyphs row by row gives at least STACKED_ROWS rows of one to
    STACKED_GLYPHS CJK glyphs (and punctuation) each, every one under the one before it. 0 for anything
    else."""
    rows = [(box, "".join(text.split())) for box, text in lines]
    if len(rows) < STACKED_ROWS:
        return 0
    for _, text in rows:
        kinds = {script_of(ch) for ch in text}
        if not 1 <= len(text) <= STACKED_GLYPHS or "cjk" not in kinds or not kinds <= {"cjk", ""}:
            return 0
    for (a, _), (b, _) in zip(rows, rows[1:]):
        overlap = min(a[2], b[2]) - max(a[0], b[0])
        if overlap < 0.5 * min(a[2] - a[0], b[2] - b[0]) or b[1] < a[1]:
            return 0
    return len(rows)
