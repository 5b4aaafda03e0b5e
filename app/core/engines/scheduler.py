"""The region scheduler: which region is read next, how many at once, and when a result lands in the document.

Regions are read concurrently up to the engine's declared `concurrency` (a local model: 1, in the one lane; an
engine of servers: N requests in flight), earliest first: the priority is (document, page, reading order), so the
first pages finish first. Results are applied in that order too (a fast late region waits for the slow early one
before it is recorded), while the engine's events flow at once, each carrying its region id, so a view can follow
one region while others run. Cancel stops dispatch and cancels the requests in flight (the engine drops the
connection, which aborts the request on the server). A region whose read fails (the engine has already retried
what is worth retrying) is flagged `error` with the reason, and the rest go on; a region cut at its token budget is
flagged `truncated` (the engine reports it as a warning), never done.

RegionScheduler reads a fixed set of jobs (benches, tests); a document's pages, and the documents of a `convert` over several inputs, go through
the region queue (app.core.engines.region_queue; a document's pages through app.core.pipeline.page_reader), which
hands pages in as they are laid out and keeps the servers busy across pages and documents. The pipeline applies each
outcome to its document (app.core.pipeline.page_reader.apply_outcome). The asyncio side runs where app.core.base.aio says
(the app's event loop, else `asyncio.run`); the caller's thread renders the crops before dispatch, so the document
stays with its owner.

What must never live here: HTTP or model code (the engine modules), documents and the pipeline, Qt.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.engines.base import Emit, RegionResult
from app.core.base.cancel import CancelToken, Cancelled
from app.core.document.regions import Region

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

CANCEL_POLL_S = 0.05


@dataclass(order=True)
class Job:
    priority: tuple[int, int, int]  # (document, page, reading order)
    region: Region = field(compare=False)
    image: Image.Image = field(compare=False, repr=False)


@dataclass
class Outcome:
    job: Job
    result: RegionResult | None = None
    error: BaseException | None = None
    cancelled: bool = False
    dispatched: bool = True  # False: dropped from a queue on Cancel before it was sent (nothing to apply)


class RegionScheduler:
    """Reads jobs through an engine with `decode_region_async`, up to `engine.concurrency` at once."""

    def __init__(self, engine, emit: Emit, cancel: CancelToken) -> None:
        self.engine = engine
        self.emit = emit
        self.cancel = cancel
        self.in_flight = self.max_in_flight = 0

    async def run(self, jobs: Sequence[Job], apply: Callable[[Outcome], None]) -> None:
        """Read every job; `apply(outcome)` is called once per job in priority order (on cancel: for the jobs that
        finished, then Cancelled is raised)."""
        order = sorted(jobs)
        pending = list(reversed(order))  # pop() takes the earliest
        done: dict[int, Outcome] = {}
        index = {id(job): k for k, job in enumerate(order)}
        applied = [0]

        def flush() -> None:
            while applied[0] in done:
                apply(done.pop(applied[0]))
                applied[0] += 1

        async def lane() -> None:
            while pending and not self.cancel.cancelled:
                job = pending.pop()
                outcome = Outcome(job)
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    outcome.result = await self.engine.decode_region_async(
                        job.image, job.region.task, region_id=job.region.id, page=job.region.page, emit=self.emit,
                        cancel=self.cancel)
                except asyncio.CancelledError:
                    outcome.cancelled = True
                    done[index[id(job)]] = outcome
                    raise
                except Exception as exc:  # noqa: BLE001 - one failing region must not end the document
                    outcome.error = exc
                finally:
                    self.in_flight -= 1
                done[index[id(job)]] = outcome
                flush()

        async with self.engine.session():
            lanes = [asyncio.ensure_future(lane()) for _ in range(max(1, min(self.engine.concurrency, len(order))))]
            watcher = asyncio.ensure_future(self._watch(lanes))
            try:
                ended = await asyncio.gather(*lanes, return_exceptions=True)
            finally:
                watcher.cancel()
        for what in ended:  # a lane ends by a bug only (a region's failure is its outcome): never swallow it
            if isinstance(what, Exception):
                raise what
        if self.cancel.cancelled:
            for k in sorted(done):  # what finished before Cancel stays (and the cut ones say so)
                apply(done.pop(k))
            raise Cancelled()
        flush()

    async def _watch(self, lanes: list[asyncio.Future]) -> None:
        while not self.cancel.cancelled:
            await asyncio.sleep(CANCEL_POLL_S)
        for lane in lanes:
            lane.cancel()
