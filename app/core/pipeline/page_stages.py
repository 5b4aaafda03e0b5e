"""Where each page's time went, in the run's own output: every page a run lays out and reads is timed stage by stage
(app.core.base.stages: render, layout, column cut, orientation, detector, recogniser, word list, decoder, assembly)
on a clock of its own; `PageOutput.stages` and `PageFinished.stages` carry its milliseconds (the JSON's page
`stages`, the window's status for the page), and the document's stats their sum (`stats["stages"]`). A clock that
was already current (`bench documents --profile`) still gets every page's stages.

What must never live here: the stage clock itself (app.core.base.stages), printing.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from app.core.base.stages import StageClock, current, measuring


class PageClock(StageClock):
    """One page's stage clock (a run's clock, as against a benchmark's around the whole run)."""


@contextlib.contextmanager
def timing_page() -> Iterator[PageClock]:
    """Time the work inside as one page's; an outer clock (a benchmark's) absorbs it afterwards."""
    outer, clock = current(), PageClock()
    try:
        with measuring(clock):
            yield clock
    finally:
        if outer is not None:
            outer.absorb(clock.ms)


def page_stages() -> dict[str, float]:
    """The current page's stage milliseconds so far ({} outside a timed page)."""
    clock = current()
    return clock.rounded() if isinstance(clock, PageClock) else {}


def document_stages(pages) -> dict[str, float]:
    """The stage milliseconds of all `pages` (PageOutput) together."""
    total = StageClock()
    for page in pages:
        for name, ms in (page.stages or {}).items():
            total.add(name, ms)
    return total.rounded()
