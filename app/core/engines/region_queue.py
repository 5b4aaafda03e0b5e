"""The region queue: the regions of one document, or of every document of a `convert` over several inputs, read through one engine of
servers with its `concurrency` requests in flight, earliest (document, page, reading order) first.

A document's thread lays out its pages and hands each page's regions to the queue as soon as that page is laid out
(app.core.pipeline.page_reader.read_pages); it does not wait for them before it lays out the next page, only when enough of its regions wait
to keep every lane busy twice over. The requests run on a loop of their own (app.core.base.aio: the app's host loop, or
a thread's loop for `convert`); what they send back — the engine's events and each region's outcome — comes back to
the document's own thread, which emits the events, applies the outcomes in priority order and finishes each page
once it and every earlier page are complete. So the document, its output and its events stay with their owner.

Over several inputs (`convert DIR` with a remote engine: app.commands.convert_inputs.Overlap) one queue serves every document, and
the next document is opened and laid out while the previous one's last regions are in flight: its regions queue
behind them, so the servers are not left idle between documents. PyMuPDF and the layout model are not
thread-safe, hence the Baton: one document's pipeline code runs at a time, a document gives the baton up only while
it waits on the queue, and the earliest document waiting takes it next.

What must never live here: HTTP (the engine modules), documents and the pipeline, Qt.
"""
from __future__ import annotations

import asyncio
import heapq
import itertools
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from app.core.engines.scheduler import CANCEL_POLL_S, Job, Outcome


class Baton:
    """One document's pipeline code at a time; the earliest (lowest rank) document waiting for it gets it next."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holder: int | None = None
        self._waiting: list[int] = []

    def acquire(self, rank: int) -> None:
        with self._cond:
            self._waiting.append(rank)
            while self._holder is not None or min(self._waiting) != rank:
                self._cond.wait()
            self._waiting.remove(rank)
            self._holder = rank

    def release(self) -> None:
        with self._cond:
            self._holder = None
            self._cond.notify_all()

    @contextmanager
    def given_up(self, rank: int) -> Iterator[None]:
        """Let the other documents run for the block (a wait on the servers, or for an earlier document)."""
        self.release()
        try:
            yield
        finally:
            self.acquire(rank)


class Sink:
    """One document's side of a queue: what comes back for it (events and outcomes), read by its own thread."""

    def __init__(self, rank: int, cancel) -> None:
        self.rank = rank
        self.cancel = cancel
        self.abandoned = False  # the document stopped on an error: its queued regions are dropped
        self.back: queue.SimpleQueue = queue.SimpleQueue()
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests in flight (every document's) while this one's were
        self.shared_in_flight = 0  # the same, while another document's requests were in flight too
        self.tasks: set[asyncio.Task] = set()
        self.stopped: set[asyncio.Task] = set()

    @property
    def dead(self) -> bool:
        return self.abandoned or self.cancel.cancelled


class RegionQueue:
    """Jobs of any number of documents (sinks), up to `engine.concurrency` in flight, earliest priority first."""

    def __init__(self, engine, baton: Baton | None = None) -> None:
        self.engine = engine
        self.baton = baton
        self.in_flight = self.max_in_flight = 0
        self._heap: list[tuple[tuple, int, Sink, Job]] = []
        self._seq = itertools.count()
        self._sinks: list[Sink] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._served = None
        self._wake: asyncio.Event | None = None
        self._closing = False

    # --- any thread ------------------------------------------------------------------------------------------
    def open(self, loop: asyncio.AbstractEventLoop) -> RegionQueue:
        """Start serving on `loop` (running on another thread); raises what opening the engine's session raised."""
        from app.core.base.aio import LoopGone

        ready = threading.Event()
        self._loop = loop
        self._served = asyncio.run_coroutine_threadsafe(self._serve(ready), loop)
        while not ready.wait(0.05):
            if self._served.done():
                self._served.result()
            if not loop.is_running():
                raise LoopGone("the event loop stopped before the region queue opened")
        return self

    def submit(self, sink: Sink, jobs: Sequence[Job]) -> None:
        self._call(self._push, sink, list(jobs))

    def alive(self) -> bool:
        return self._served is not None and not self._served.done() and self._loop.is_running()

    def check(self) -> None:
        """Raise why the queue stopped serving (a bug, or the loop gone) instead of waiting for ever."""
        from app.core.base.aio import LoopGone

        if self._served is not None and self._served.done():
            self._served.result()
            raise LoopGone("the region queue stopped while regions were waiting")
        if self._loop is not None and not self._loop.is_running():
            raise LoopGone("the event loop stopped while requests were in flight")

    def close(self) -> None:
        """Drop what waits, cancel what runs, and wait until the engine's session is closed."""
        from app.core.base.aio import LoopGone, wait_future

        if self._served is None:
            return
        self._call(self._shut)
        try:
            wait_future(self._served, self._loop)
        except (LoopGone, asyncio.CancelledError):
            pass
        self._served = None

    def _call(self, fn, *args) -> None:
        try:
            self._loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed (the app is quitting): nothing more will be read
            pass

    # --- the loop's thread -----------------------------------------------------------------------------------
    def _push(self, sink: Sink, jobs: list[Job]) -> None:
        if sink not in self._sinks:
            self._sinks.append(sink)
        for job in jobs:
            heapq.heappush(self._heap, (job.priority, next(self._seq), sink, job))
        self._wake.set()

    def _shut(self) -> None:
        self._closing = True
        self._wake.set()

    async def _serve(self, ready: threading.Event) -> None:
        self._wake = asyncio.Event()
        async with self.engine.session():
            ready.set()
            while True:
                self._poll()
                if self._closing and not self.in_flight:
                    return
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), CANCEL_POLL_S)
                except TimeoutError:
                    pass

    def _poll(self) -> None:
        """Drop and cancel the regions of documents that stopped; dispatch the earliest waiting jobs."""
        if any(s.dead for s in self._sinks) or self._closing:
            keep = []
            for entry in self._heap:
                sink, job = entry[2], entry[3]
                if sink.dead or self._closing:
                    sink.back.put(Outcome(job, cancelled=True, dispatched=False))
                else:
                    keep.append(entry)
            if len(keep) != len(self._heap):
                heapq.heapify(keep)
                self._heap = keep
            for sink in self._sinks:
                if sink.dead or self._closing:
                    for task in sink.tasks - sink.stopped:
                        task.cancel()
                        sink.stopped.add(task)
        while self._heap and self.in_flight < self.engine.concurrency:
            _, _, sink, job = heapq.heappop(self._heap)
            self._start(sink, job)

    def _start(self, sink: Sink, job: Job) -> None:
        self.in_flight += 1
        sink.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        busy = [s for s in self._sinks if s.in_flight]
        for s in busy:
            s.max_in_flight = max(s.max_in_flight, self.in_flight)
            if len(busy) > 1:
                s.shared_in_flight = max(s.shared_in_flight, self.in_flight)
        task = asyncio.ensure_future(self._read(sink, job))
        sink.tasks.add(task)
        task.add_done_callback(lambda t: (sink.tasks.discard(t), sink.stopped.discard(t)))

    async def _read(self, sink: Sink, job: Job) -> None:
        outcome = Outcome(job)
        try:
            outcome.result = await self.engine.decode_region_async(
                job.image, job.region.task, region_id=job.region.id, page=job.region.page, emit=sink.back.put,
                cancel=sink.cancel)
        except asyncio.CancelledError:  # the document was cancelled: the engine dropped the request
            outcome.cancelled = True
        except Exception as exc:  # noqa: BLE001 - one failing region must not end the document
            outcome.error = exc
        finally:
            self.in_flight -= 1
            sink.in_flight -= 1
            sink.back.put(outcome)
            self._wake.set()


@dataclass(frozen=True)
class Seat:
    """A document's place in the region queue of a run over several inputs: the queue, and its rank there (earlier
    ranks' regions go first)."""

    shared: SharedRegions
    rank: int

    def handed_in(self, engine, layout) -> None:
        """The document has handed in its last regions: the run may start the next one."""
        if self.shared.on_tail is not None:
            self.shared.on_tail(self.rank, engine, layout)


class SharedRegions:
    """The queue the documents of a run over several inputs share, opened on the loop at the first document's engine.
    A `Seat(shared, rank)` given to a Pipeline seats it there; `on_tail(rank, engine, layout)` is called once a
    document has handed in its last regions (the run starts the next document there, on the same engine and
    layout)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.baton = Baton()
        self.on_tail: Callable[[int, Any, Any], None] | None = None
        self._queue: RegionQueue | None = None
        self._lock = threading.Lock()

    def queue(self, engine) -> RegionQueue:
        with self._lock:
            if self._queue is None:
                self._queue = RegionQueue(engine, self.baton).open(self.loop)
            elif self._queue.engine is not engine:
                raise RuntimeError("the documents of one run share one engine")
            return self._queue

    def close(self) -> None:
        if self._queue is not None:
            self._queue.close()
