"""Reading a document's pages through the region queue (app.core.engines.region_queue): each page's regions are
queued as soon as the page is laid out, the outcomes are applied to the document in reading order, and each page is
finished once it and every earlier page are complete.

It is given what it reads with (a ReadContext, app.core.pipeline.reading), the document's pages (`Pages`) and,
in a batch, its `Seat`: never the Pipeline. What must never live here: HTTP (the engine modules), Qt, the lifecycle
events (app.core.pipeline.run).
"""
from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from app.core.base.cancel import Cancelled
from app.core.engines.region_queue import RegionQueue, Seat, Sink
from app.core.engines.scheduler import Job, Outcome
from app.core.record.events import PhaseChanged
from app.core.pipeline.output import DocumentOutput, PageOutput
from app.core.pipeline.reading import ReadContext, record_failure
from app.core.document.regions import Region, record_result


@dataclass(frozen=True)
class Pages:
    """The document's pages as the reader sees them (a Pipeline's, but not the Pipeline)."""

    output: DocumentOutput  # laid-out pages are appended to it; the queue's statistics go in its stats
    lay_out: Callable[..., PageOutput]  # lay_out(index, current=, total=): lay out one page
    to_read: Callable[[PageOutput, Sequence[str] | set[str]], list[Region]]  # its regions the engine must read
    finish: Callable[[PageOutput, float], object]  # finish(page, t0): all its regions are read


class DocumentReader:
    """One document's regions on a queue: pages handed in as they are laid out, outcomes applied in order."""

    def __init__(self, ctx: ReadContext, pages: Pages, regions: RegionQueue, rank: int = 0) -> None:
        self.ctx, self.book, self.regions, self.rank = ctx, pages, regions, rank
        self.sink = Sink(rank, ctx.cancel)
        self.expected: list[Job] = []
        self.position: dict[int, int] = {}
        self.done: dict[int, Outcome] = {}
        self.applied = self.received = 0
        self.pages: list[int] = []
        self.left: dict[int, int] = {}
        self.started: dict[int, float] = {}
        self.finished: set[int] = set()

    @property
    def outstanding(self) -> int:
        return len(self.expected) - self.received

    def add_page(self, index: int, keep: Sequence[str] | set[str] = ()) -> None:
        """Render the crops of a laid-out page's regions and queue them (a page with none is finished in turn)."""
        ctx = self.ctx
        jobs = []
        for r in self.book.to_read(self.book.output.page(index), keep):
            ctx.cancel.check()
            jobs.append(Job((self.rank, index, r.order), r, ctx.crop_region(r)))
        self.pages.append(index)
        self.left[index] = len(jobs)
        self.started[index] = time.perf_counter()
        for job in jobs:
            self.position[id(job)] = len(self.expected)
            self.expected.append(job)
        if jobs:
            ctx.emit(PhaseChanged("decoding", detail=f"page {index + 1}: {len(jobs)} regions, up to "
                                  f"{ctx.engine.concurrency} at once", current=self.applied,
                                  total=len(self.expected)))
            self.regions.submit(self.sink, jobs)
        self._finish_ready()

    def pump(self, block: bool = False) -> None:
        """Emit the engine's events and apply the outcomes that came back; with `block`, wait for at least one
        item (the baton given up meanwhile). Without, let an earlier document that waits for the baton run first."""
        baton = self.regions.baton
        if block:
            if baton is None:
                item = self._get()
            else:
                with baton.given_up(self.rank):
                    item = self._get()
            self._take(item)
        elif baton is not None:
            with baton.given_up(self.rank):
                pass
        while True:
            try:
                item = self.sink.back.get_nowait()
            except queue.Empty:
                return
            self._take(item)

    def _get(self):
        while True:
            try:
                return self.sink.back.get(timeout=0.2)
            except queue.Empty:
                self.regions.check()

    def _take(self, item) -> None:
        if not isinstance(item, Outcome):
            self.ctx.emit(item)
            return
        self.received += 1
        self.done[self.position[id(item.job)]] = item
        while self.applied in self.done and not self.ctx.cancel.cancelled:
            self._apply(self.done.pop(self.applied))

    def _apply(self, outcome: Outcome) -> None:
        region = outcome.job.region
        self.applied += 1
        if not outcome.dispatched:
            return
        apply_outcome(self.ctx, outcome)
        self.ctx.emit(PhaseChanged("decoding", detail=f"page {region.page + 1}", current=self.applied,
                                   total=len(self.expected)))
        if not outcome.cancelled:
            self.left[region.page] -= 1
            self._finish_ready()

    def _finish_ready(self) -> None:
        for i in self.pages:  # in page order: a page is finished once it and every earlier page are complete
            if i in self.finished:
                continue
            if self.left[i]:
                return
            self.book.finish(self.book.output.page(i), self.started[i])
            self.finished.add(i)

    def wait_below(self, limit: int) -> None:
        while self.outstanding >= limit:
            self.pump(block=True)

    def finish(self) -> None:
        """Wait for every region handed in and apply them; on Cancel, apply those that came back (the cut ones say
        so) and raise Cancelled."""
        try:
            while self.outstanding:
                self.pump(block=True)
        finally:
            stats = self.book.output.stats
            before = stats.get("engine_stats") or {}
            stats["engine_stats"] = {"max_in_flight": max(self.sink.max_in_flight, int(before.get("max_in_flight") or 0)),
                                     "servers": self.ctx.engine.server_stats()}
            if self.regions.baton is not None:  # in a batch: requests in flight beside another document's
                stats["engine_stats"]["shared_in_flight"] = self.sink.shared_in_flight
        if self.ctx.cancel.cancelled:
            for k in sorted(self.done):
                self._apply(self.done.pop(k))
            raise Cancelled()


@contextmanager
def reader(ctx: ReadContext, pages: Pages, seat: Seat | None) -> Iterator[DocumentReader]:
    """A document's reader: on its batch's shared queue when it has a seat, else on a queue of its own."""
    if seat is not None:
        doc = DocumentReader(ctx, pages, seat.shared.queue(ctx.engine), seat.rank)
        try:
            yield doc
        finally:
            doc.sink.abandoned = True  # an error ended it early: its queued regions give way to the next document
        return
    from app.core.base.aio import background_loop

    with background_loop() as loop:
        own = RegionQueue(ctx.engine).open(loop)
        try:
            yield DocumentReader(ctx, pages, own)
        finally:
            own.close()


def read_pages(ctx: ReadContext, pages: Pages, indices: Sequence[int], seat: Seat | None = None,
               layout=None) -> None:
    """Lay out pages `indices` and read them: each page's regions are queued as soon as it is laid out, and the
    next page is laid out while they are read (the layout waits only while enough of the document's regions wait to
    keep every lane busy twice over), so a long document shows text and a batch's checkpoint gains pages long
    before its last page is laid out; Cancel loses at most the regions in flight. In a batch (`seat`), the next
    document may start once this one's last regions are handed in (on the same engine and `layout`)."""
    with reader(ctx, pages, seat) as doc:
        try:
            for n, i in enumerate(indices):
                ctx.cancel.check()
                doc.pump()
                doc.wait_below(2 * ctx.engine.concurrency)
                ctx.cancel.check()
                pages.output.pages.append(pages.lay_out(i, current=n + 1, total=len(indices)))
                doc.add_page(i)
        except Cancelled:
            pass  # finish() applies what came back and raises Cancelled
        if seat is not None and not ctx.cancel.cancelled:
            seat.handed_in(ctx.engine, layout)
        doc.finish()


def decode_concurrently(ctx: ReadContext, pages: Pages, indices: Sequence[int], keep: Sequence[str] | set[str] = (),
                        seat: Seat | None = None) -> None:
    """Read the regions of laid-out pages `indices` with the engine's concurrency; each page is finished
    (`pages.finish`) once all its regions are applied, in page order."""
    with reader(ctx, pages, seat) as doc:
        try:
            for i in sorted(indices):
                doc.add_page(i, keep)
        except Cancelled:
            pass
        doc.finish()


def apply_outcome(ctx: ReadContext, outcome: Outcome) -> None:
    """Record one read on its region (the text, its stats and flags) and say what went wrong, if anything."""
    region = outcome.job.region
    if outcome.cancelled:
        record_result(region, region.text, {}, cancelled=True, engine=ctx.engine_name)
        return
    if outcome.error is not None:  # the engine raised: it did not finish the region
        record_failure(ctx, region, outcome.error)
        return
    result = outcome.result
    record_result(region, result.text, result.stats, cancelled=result.cancelled, engine=ctx.engine_name,
                  logprobs=result.logprobs)
