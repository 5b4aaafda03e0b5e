"""Which way the pieces of one visual row are read: left to right, except a row of right-to-left lines
(Arabic, Hebrew: their pieces from the right end) and a row of vertical columns of CJK text (traditional
vertical writing: columns from the right). The text of each piece is in logical order either way.

What must never live here: recognition, layout, assembly.
"""
from __future__ import annotations

from typing import Sequence

from app.core.text.textcheck import WIDE_SCRIPTS, dominant_script, right_to_left

VERTICAL = 2.0  # a piece this many times taller than wide is a vertical column of text


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
