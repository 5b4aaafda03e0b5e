"""The Unlimited-OCR generation's blocks handed over while it grows: a block is complete once the next
`<|det|>` or `<PAGE>` begins (or the run ends); each complete page's regions go to `on_blocks` and each
complete region is announced with RegionFinished, once.

What must never live here: the generation itself (app.core.engines.unlimited), parsing the raw output
(app.core.engines.unlimited_output), torch.
"""
from __future__ import annotations

from dataclasses import replace

from app.core.engines.base import BlocksCallback, Emit
from app.core.engines.unlimited_output import IncrementalParser, to_regions
from app.core.record import events as ev


class LiveRegions:
    """Hands the growing output's blocks over as they complete: a block is complete once the next `<|det|>` or
    `<PAGE>` begins (or the run ends). Ids are page + order, so a block keeps its id as text grows."""

    def __init__(self, keep_headers: bool, n_pages: int, sizes, dpis, numbers, emit: Emit,
                 on_blocks: BlocksCallback) -> None:
        self.keep_headers, self.n_pages, self.sizes, self.dpis = keep_headers, n_pages, sizes, dpis
        self.emit = emit
        self.on_blocks = on_blocks
        self.numbers = numbers
        self.finished: set[str] = set()
        self.layout_sent: dict[int, tuple[str, ...]] = {}
        self.parser = IncrementalParser(n_pages)  # re-parses only the page being written

    def update(self, text: str, *, final: bool, cancelled: bool = False):
        """Parse `text`; hand over the complete regions of pages whose blocks changed (`on_blocks`, by
        position in the page sequence) and emit RegionFinished for regions completed since the last call (ids
        name document pages); the returned regions index `pages`."""
        parsed = self.parser.parse(text)
        regions = to_regions(parsed, self.sizes, dpis=self.dpis, keep_headers=self.keep_headers,
                             page_numbers=self.numbers)
        complete = regions if final else regions[:-1]
        by_page: dict[int, list] = {}
        for r in complete:
            by_page.setdefault(r.page, []).append(r)
        for page in (range(self.n_pages) if final else sorted(by_page)):
            regs = by_page.get(page, [])
            key = tuple(f"{r.id}:{r.label}:{r.box}" for r in regs)
            if self.layout_sent.get(page) != key:
                self.layout_sent[page] = key
                self.on_blocks(page, [replace(r, page=self.numbers[page]) for r in regs])
            for r in regs:
                if r.id not in self.finished:
                    self.finished.add(r.id)
                    self.emit(ev.RegionFinished(region_id=r.id, text=r.text, cancelled=cancelled and final and
                                                r is regions[-1]))
        return regions
