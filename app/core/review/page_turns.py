"""Which way up a page is read, as a person says: rotate left / right turns the page a quarter from the way it was
last read (`turn_page`); the next run lays the page out again turned so, and every later run keeps that turn
(`page_turns` goes with the run request, app.core.review.runs). A page a person laid out keeps the turn it was read
with (its regions' boxes are of the page as read). The journal keeps the person's turns with the work.

What must never live here: Qt, rendering, finding the turn (app.core.layout.orientation).
"""
from __future__ import annotations

from typing import Any

from app.core.review.document import DocumentWork
from app.core.review.region_edits import PERSON_LAYOUT


def page_turns(work: DocumentWork, layouts: dict[int, Any]) -> dict[int, tuple[int, float]]:
    """(turn, skew) per page a run must read turned: those a person turned, and those a person laid out."""
    out = {i: (p.rotation, p.skew) for i, p in work.pages.items() if i in layouts}
    out.update({int(i): (int(t), 0.0) for i, t in work.person_turns.items()})
    return out


def turn_page(work: DocumentWork, page: int, quarter: int) -> int:
    """Turn `page` a quarter clockwise (`quarter` +1) or counter-clockwise (-1) from the way it was last read;
    returns the new turn. The page's regions were of the page as it was: it is laid out again on its next run."""
    frame = work.pages.get(page)
    current = work.person_turns.get(page, frame.rotation if frame is not None else 0)
    turn = (int(current) + 90 * quarter) % 360
    work.person_turns[page] = turn
    if frame is not None and frame.layout == PERSON_LAYOUT:
        frame.layout = ""  # the person's regions were drawn on the page as it was
    return turn
