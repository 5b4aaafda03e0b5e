"""Reading a document's pages through the region queue (app.core.engines.region_queue): each page's regions are
queued as soon as the page is laid out, the outcomes are applied to the document in reading order, and each page is
finished once it and every earlier page are complete.

What must never live here: HTTP (the engine modules), Qt, the lifecycle events (app.core.pipeline.run).
"""
from __future__ import annotations

import queue
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from app.core.cancel import Cancelled
from app.core.engines.region_queue import RegionQueue, Sink
from app.core.engines.scheduler import Job, Outcome
from app.core.events import ErrorRaised, PhaseChanged, RegionFinished
from app.core.regions import record_result


class DocumentReader:
    """One document's regions on a queue: pages handed in as they are laid out, outcomes applied in order."""

    def __init__(self, pipe, regions: RegionQueue, rank: int = 0) -> None:
        self.pipe, self.regions, self.rank = pipe, regions, rank
        self.sink = Sink(rank, pipe.cancel)
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
        pipe = self.pipe
        jobs = []
        for r in pipe.regions_to_read(pipe.output.page(index), keep):
            pipe.cancel.check()
            jobs.append(Job((self.rank, index, r.order), r, pipe.document.crop(r.page, r.box_pt, pipe.ocr_dpi(r.page))))
        self.pages.append(index)
        self.left[index] = len(jobs)
        self.started[index] = time.perf_counter()
        for job in jobs:
            self.position[id(job)] = len(self.expected)
            self.expected.append(job)
        if jobs:
            pipe.emit(PhaseChanged("decoding", detail=f"page {index + 1}: {len(jobs)} regions, up to "
                                   f"{pipe.engine.concurrency} at once", current=self.applied,
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
            self.pipe.emit(item)
            return
        self.received += 1
        self.done[self.position[id(item.job)]] = item
        while self.applied in self.done and not self.pipe.cancel.cancelled:
            self._apply(self.done.pop(self.applied))

    def _apply(self, outcome: Outcome) -> None:
        region = outcome.job.region
        self.applied += 1
        if not outcome.dispatched:
            return
        apply_outcome(self.pipe, outcome)
        self.pipe.emit(PhaseChanged("decoding", detail=f"page {region.page + 1}", current=self.applied,
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
            self.pipe.finish_page(self.pipe.output.page(i), self.started[i])
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
            stats = self.pipe.output.stats
            before = stats.get("engine_stats") or {}
            stats["engine_stats"] = {"max_in_flight": max(self.sink.max_in_flight, int(before.get("max_in_flight") or 0)),
                                     "servers": self.pipe.engine.server_stats()}
            if self.regions.baton is not None:  # in a batch: requests in flight beside another document's
                stats["engine_stats"]["shared_in_flight"] = self.sink.shared_in_flight
        if self.pipe.cancel.cancelled:
            for k in sorted(self.done):
                self._apply(self.done.pop(k))
            raise Cancelled()


@contextmanager
def reader(pipe) -> Iterator[DocumentReader]:
    """The pipeline's reader: on its batch's shared queue when it has a seat, else on a queue of its own."""
    seat = getattr(pipe, "region_queue", None)
    if seat is not None:
        shared, rank = seat
        doc = DocumentReader(pipe, shared.queue(pipe.engine), rank)
        try:
            yield doc
        finally:
            doc.sink.abandoned = True  # an error ended it early: its queued regions give way to the next document
        return
    from app.core.aio import background_loop

    with background_loop() as loop:
        own = RegionQueue(pipe.engine).open(loop)
        try:
            yield DocumentReader(pipe, own)
        finally:
            own.close()


def read_pages(pipe, indices: Sequence[int]) -> None:
    """Lay out pages `indices` of a Pipeline and read them: each page's regions are queued as soon as it is laid
    out, and the next page is laid out while they are read (the layout waits only while enough of the document's
    regions wait to keep every lane busy twice over), so a long document shows text and a batch's checkpoint gains
    pages long before its last page is laid out; Cancel loses at most the regions in flight."""
    with reader(pipe) as doc:
        try:
            for n, i in enumerate(indices):
                pipe.cancel.check()
                doc.pump()
                doc.wait_below(2 * pipe.engine.concurrency)
                pipe.cancel.check()
                pipe.output.pages.append(pipe.layout_page(i, current=n + 1, total=len(indices)))
                doc.add_page(i)
        except Cancelled:
            pass  # finish() applies what came back and raises Cancelled
        seat = getattr(pipe, "region_queue", None)
        if seat is not None and seat[0].on_tail is not None and not pipe.cancel.cancelled:
            seat[0].on_tail(seat[1], pipe)
        doc.finish()


def decode_concurrently(pipe, pages: Sequence[int], keep: Sequence[str] | set[str] = ()) -> None:
    """Read the regions of laid-out pages `pages` of a Pipeline with its engine's concurrency; each page is finished
    (`pipe.finish_page`) once all its regions are applied, in page order."""
    with reader(pipe) as doc:
        try:
            for i in sorted(pages):
                doc.add_page(i, keep)
        except Cancelled:
            pass
        doc.finish()


def apply_outcome(pipe, outcome: Outcome) -> None:
    """Record one read on its region (the text, its stats and flags) and say what went wrong, if anything."""
    region, engine = outcome.job.region, pipe.engine_name
    name = pipe.document.name if pipe.document is not None else ""
    if outcome.cancelled:
        record_result(region, region.text, {}, cancelled=True, engine=engine)
        return
    if outcome.error is not None:
        exc = outcome.error
        reason = f"{type(exc).__name__}: {exc}"
        pipe.emit(ErrorRaised(f"{name}: region {region.id} could not be read ({reason})", where="decoding",
                              region_id=region.id, fatal=False))
        stats: dict[str, Any] = {"error": str(exc)}
        record_result(region, "", stats, cancelled=False, engine=engine)
        pipe.emit(RegionFinished(region.id, "", stats))  # the engine raised: it did not finish the region
        return
    result = outcome.result
    record_result(region, result.text, result.stats, cancelled=result.cancelled, engine=engine,
                  logprobs=result.logprobs)
