"""Unlimited-OCR on servers: the remote engine's whole-page profile (`--remote-profile unlimited`).

Every page is one request — the page image and `document parsing.`, text first, as baidu/Unlimited-OCR's infer.py
asks — sent through the region queue (app.core.engines.region_queue) with the engine's concurrency, earliest page
first; pages are rendered only as requests free up. Each answer streams `<|det|>label [x1, y1, x2, y2]<|/det|>text`
blocks with boxes normalised to 0..999; they are parsed as they arrive with the local engine's parser
(app.core.engines.unlimited_output: IncrementalParser, to_regions) into regions with boxes, labels and tasks, and
handed over page by page through `on_blocks` as they complete (a block is complete once the next one begins, or
the answer ends), exactly as the local Unlimited engine does; app.core.pipeline.document_engine turns them into
the document's regions. So the engine is a document engine (kind "document") under this profile.

Honest results: a page cut at its token budget keeps its blocks, and its last one is flagged "truncated" (never
done); a page whose request failed (after the engine's retries) says why in a warning, and the block its answer
was cut in is flagged "error"; a cancelled run keeps the blocks read so far (the cut one flagged "cancelled"). The per-page request streams carry the ids `doc-p<N>`.

What must never live here: HTTP (app.core.engines.remote), Qt, the pipeline's own regions and events.
"""
from __future__ import annotations

import queue
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from app.core.record import events as ev
from app.core.engines.base import BlocksCallback, DocumentResult, Emit
from app.core.base.cancel import CancelToken
from app.core.engines.unlimited_output import IncrementalParser, to_regions

STREAM_ID = "doc-p{}"  # the request stream of document page N (1-based), as the window's events carry it


class PageAnswer:
    """One page's streamed answer and what was handed over from it so far."""

    def __init__(self, position: int, number: int, size: tuple[int, int], dpi: float) -> None:
        self.position, self.number, self.size, self.dpi = position, number, size, dpi
        self.raw = ""
        self.parser = IncrementalParser(1)
        self.sent: tuple[str, ...] = ()  # nothing handed over until a block completes
        self.finished: set[str] = set()
        self.regions: list = []
        self.outcome = None


class PageReader:
    """Parses the answers of a document's pages as they stream and hands their blocks over."""

    def __init__(self, engine, emit: Emit, on_blocks: BlocksCallback, keep_headers: bool = False) -> None:
        self.engine, self.emit, self.on_blocks, self.keep_headers = engine, emit, on_blocks, keep_headers
        self.pages: dict[str, PageAnswer] = {}

    def take(self, item) -> bool:
        """One item from the queue (an event or a page's outcome); True for an outcome."""
        from app.core.engines.scheduler import Outcome

        if isinstance(item, Outcome):
            page = self.pages[item.job.region.id]
            page.outcome = item
            self.update(page, final=True)
            return True
        page = self.pages.get(getattr(item, "region_id", ""))
        if page is not None and isinstance(item, ev.RegionStarted):  # a retry starts the answer over
            page.raw = ""
        elif page is not None and isinstance(item, ev.TokensCommitted):
            page.raw += item.text
            self.update(page, final=False)
        self.emit(item)
        return False

    def update(self, page: PageAnswer, *, final: bool) -> None:
        """Parse the page's answer so far; hand over its complete blocks when they changed, and say which finished."""
        outcome = page.outcome
        cut = bool(final and outcome is not None and outcome.result is not None
                   and outcome.result.stats.get("truncated"))
        cancelled = bool(final and outcome is not None and (outcome.cancelled or (
            outcome.result is not None and outcome.result.cancelled)))
        failed = bool(final and outcome is not None and outcome.error is not None)
        regions = to_regions(page.parser.parse(page.raw), [page.size], dpis=[page.dpi], source=self.engine.name,
                             keep_headers=self.keep_headers, page_numbers=[page.number])
        complete = regions if final else regions[:-1]
        if complete and (cut or cancelled or failed):  # the last block stopped mid-way: its text is incomplete
            last = complete[-1]
            flag = "error" if failed else "truncated" if cut else "cancelled"
            complete[-1] = replace(last, flags=[*last.flags, flag])
        key = tuple(f"{r.id}:{r.label}:{r.box}:{r.flags}" for r in complete)
        if key != page.sent:
            page.sent = key
            self.on_blocks(page.position, [replace(r, page=page.number) for r in complete])
        for r in complete:
            if r.id not in page.finished:
                page.finished.add(r.id)
                self.emit(ev.RegionFinished(region_id=r.id, text=r.text, cancelled="cancelled" in r.flags))
        if final:
            page.regions = [replace(r, page=page.position) for r in complete]


def decode_document(engine, pages: Sequence[Any], *, emit: Emit, cancel: CancelToken, on_blocks: BlocksCallback,
                    keep_headers: bool = False) -> DocumentResult:
    """Read `pages` (PIL images; the pipeline's lazy sequence carries their document indices and DPI), one request
    per page; returns their regions in page order (`page` indexes `pages`), the answers and the run's stats."""
    from app.core.base.aio import background_loop
    from app.core.engines.region_queue import RegionQueue, Sink
    from app.core.engines.scheduler import Job
    from app.core.document.regions import Region

    t0 = time.perf_counter()
    indices = getattr(pages, "indices", None)
    numbers = [int(i) for i in indices] if indices is not None else list(range(len(pages)))
    reader = PageReader(engine, emit, on_blocks, keep_headers)
    sink = Sink(0, cancel)
    sent = got = 0

    def wait_one() -> None:
        nonlocal got
        while True:
            try:
                item = sink.back.get(timeout=0.2)
            except queue.Empty:
                regions_queue.check()
                continue
            got += reader.take(item)
            return

    emit(ev.PhaseChanged("decoding", detail=f"{len(pages)} pages, up to {engine.concurrency} at once", current=0,
                         total=len(pages)))
    with background_loop() as loop:
        regions_queue = RegionQueue(engine).open(loop)
        try:
            for position in range(len(pages)):
                if cancel.cancelled:
                    break
                while sent - got >= 2 * engine.concurrency:
                    wait_one()
                image = pages[position]  # rendered only now
                dpi = float(getattr(pages, "dpi", 0) or engine.input_dpi)
                stream = STREAM_ID.format(numbers[position] + 1)
                reader.pages[stream] = PageAnswer(position, numbers[position], (image.width, image.height), dpi)
                region = Region(stream, numbers[position], (0.0, 0.0, float(image.width), float(image.height)),
                                "page", "text", 0)
                regions_queue.submit(sink, [Job((0, position, 0), region, image)])
                sent += 1
            while got < sent:
                wait_one()
        finally:
            regions_queue.close()
    answers = sorted(reader.pages.values(), key=lambda p: p.position)
    failed = [p for p in answers if p.outcome is not None and p.outcome.error is not None]
    for p in failed:
        emit(ev.ErrorRaised(f"page {p.number + 1} could not be read on the server ({type(p.outcome.error).__name__}: "
                            f"{p.outcome.error})", where=engine.name, region_id=STREAM_ID.format(p.number + 1),
                            fatal=False))
    results = [p.outcome.result for p in answers if p.outcome is not None and p.outcome.result is not None]
    tokens = sum(int(r.stats.get("tokens") or 0) for r in results)
    seconds = time.perf_counter() - t0
    stats = {"pages": len(pages), "requests": len(answers), "failed_pages": len(failed),
             "truncated_pages": sum(bool(r.stats.get("truncated")) for r in results), "output_tokens": tokens,
             "tokens_per_s": round(tokens / seconds, 2) if tokens and seconds > 0 else 0.0, "run_s": round(seconds, 3),
             "max_in_flight": regions_queue.max_in_flight, "servers": engine.server_stats()}
    return DocumentResult(regions=[r for p in answers for r in p.regions], raw_text="\n".join(p.raw for p in answers),
                          stats=stats, cancelled=cancel.cancelled)
