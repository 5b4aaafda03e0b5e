"""`convert --jobs N`: the inputs — and the pages of a long input — read by N worker processes side by
side (app.commands.convert_worker; spawned, each with its own engine, layout and onnxruntime sessions, and
cores // N threads per kernel), written by this process exactly as `convert` writes them in process.

- **Units.** An input of several pages is cut into runs of at most PAGES_PER_UNIT consecutive pages (fewer
  when the input is short, so that every worker gets some); a whole-document engine, or an input that cannot
  be opened here (the worker says why), is one unit. Units go out in input order to whichever worker is free.
- **The same output.** Every page a worker finishes comes back here as the page it read; when all of an
  input's units have ended, its pages in order make the document, whose stats, Markdown, JSON and other files
  come from the same functions as in process (`final_stats`, `Pipeline.write`): the files are the same, byte
  for byte, but for the timings they record. Inputs are written, and their lines printed, in input order.
- **Bounded memory.** No unit of an input more than WINDOW × N inputs past the first one not yet written is
  sent out, so finished pages waiting for an earlier input to end cannot pile up.
- **Nothing lost.** Each finished page goes into the input's checkpoint as it arrives
  (app.commands.convert_inputs, `--resume`). Ctrl+C stops every worker between two regions (a shared cancel
  event), keeps the pages that still come back, and leaves the output sets already written as they are; the
  run ends with 130.

What must never live here: reading pages (the worker's), argument parsing (convert), the writer itself.
"""
from __future__ import annotations

import dataclasses
import pickle
import queue
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.commands.convert_worker import Unit, UnitEnd, serve
from app.commands.exit_codes import (
    EXIT_ENGINE, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_WARNINGS,
)

PAGES_PER_UNIT = 4  # a unit's pages at most: a long input shared out evenly, few messages per page
WINDOW = 2  # inputs per worker that may be read ahead of the first one not yet written
POLL_S = 0.2
DRAIN_S = 30.0  # after Ctrl+C: how long the workers' last pages are waited for


@dataclass
class _Input:
    """One input's state in the parent."""

    item: Any  # app.commands.convert_inputs.Input
    checkpoint: Any
    restored: dict = field(default_factory=dict)  # index → PageOutput from an earlier run's checkpoint
    pages: dict = field(default_factory=dict)  # index → PageOutput read now
    units_left: int = 0
    end: UnitEnd = field(default_factory=UnitEnd)  # the first unit's names and DPI; the first error
    warnings: list[str] = field(default_factory=list)
    failed_pages: set = field(default_factory=set)
    refusal: str = ""  # the output folder cannot take the input's files
    skipped: bool = False  # a checkpoint says it was converted
    started: float = 0.0
    cancelled: bool = False

    def take(self, page, engine: str, layout: str, input_dpi: float) -> None:
        self.pages[page.index] = page
        if any("error" in r.flags for r in page.regions):
            self.failed_pages.add(page.index)  # a resumed run reads it again
        else:
            self.checkpoint.page_finished(page, engine, layout, input_dpi)

    def ended(self, end: UnitEnd) -> None:
        self.units_left -= 1
        self.warnings += end.warnings
        self.cancelled = self.cancelled or end.cancelled
        if end.error and not self.end.error:
            self.end.error, self.end.kind = end.error, end.kind
        if not self.end.engine and end.engine:
            self.end.engine, self.end.layout, self.end.input_dpi = end.engine, end.layout, end.input_dpi
        if end.engine_stats:
            self.end.engine_stats = end.engine_stats


def convert_in_workers(args, options, engine_name: str, items: list, out_dir: Path, progress,
                       results: list) -> tuple[list[int | None], bool]:
    """Convert `items` with `args.jobs` workers; returns the exit code per input (None: not started) and
    whether Ctrl+C ended the run. Prints each input's line (or why it failed) in input order."""
    refusal = _refusal(args, options)
    if refusal:
        print(f"scriptorium convert: error: {refusal}", file=sys.stderr)
        return [EXIT_USAGE] + [None] * (len(items) - 1), False
    from app.commands.interrupts import Interrupts
    from app.core.base.cancel import CancelToken
    from app.core.base.threads import machine_cores

    states = [_prepare(item, out_dir, options, args.resume) for item in items]
    whole = _whole_documents(engine_name, options)
    units = [u for rank, st in enumerate(states) for u in _units(rank, st, options, args.jobs, whole)]
    jobs = max(1, min(args.jobs, len(units)))
    run = _Run(states, units, out_dir, options, progress, results, jobs)
    Interrupts.cancel, Interrupts.overlap = CancelToken(), True  # Ctrl+C: a KeyboardInterrupt here
    pool = None
    try:
        pool = _Pool(jobs, max(1, machine_cores() // jobs), options, args.verbose) if units else None
        run.loop(pool)
        return run.codes, False
    except KeyboardInterrupt:
        if pool is not None:
            run.drain(pool)
        run.interrupted()
        return run.codes, True
    finally:
        Interrupts.overlap = False
        if pool is not None:
            pool.close(run)


def _refusal(args, options) -> str:
    if args.trace:
        return "--trace records one run's events in order: use it with --jobs 1"
    if options.engine_options.get("servers"):
        return ("--jobs is for engines that read on this machine; a remote engine's --concurrency keeps its "
                "servers busy")
    return ""


def _whole_documents(engine_name: str, options) -> bool:
    """Does the engine read whole documents (its inputs are not cut into runs of pages)?"""
    from app.core.engines import ENGINES

    spec = ENGINES.get(engine_name)
    return spec is not None and spec.kind_for(options.engine_options) == "document"


def _prepare(item, out_dir: Path, options, resume: bool) -> _Input:
    """An input's checkpoint (restored with --resume) and whether its output folder can take its files."""
    from app.commands.convert_inputs import Checkpoint, checkpoint_settings
    from app.core.pipeline.output import check_output

    checkpoint = Checkpoint(out_dir, item, checkpoint_settings(options))
    why = checkpoint.load() if resume and item.path.is_file() else "no --resume"
    st = _Input(item, checkpoint)
    if resume and not why and checkpoint.done:
        st.skipped = True
        return st
    st.restored = dict(checkpoint.pages) if not why else {}
    checkpoint.pages, checkpoint.done = dict(st.restored), False
    try:
        check_output(out_dir / item.rel.parent, item.rel.name, options.formats)
    except OSError as exc:
        st.refusal = str(exc)
    return st


def _units(rank: int, st: _Input, options, jobs: int, whole: bool) -> list[Unit]:
    """The input's units: runs of its pages still to read (see the module); one unit when it is read whole."""
    from app.core.document import DocumentError, open_document
    from app.core.pipeline.options import parse_pages

    if st.skipped or st.refusal:
        return []
    path = st.item.path
    if whole and not st.restored:
        st.units_left = 1
        return [Unit(rank * 100000, rank, path, None)]
    try:
        doc = open_document(path, options.password)
        try:
            wanted = [i for i in parse_pages(options.pages, doc.page_count) if i not in st.restored]
        finally:
            doc.close()
    except (DocumentError, OSError, ValueError):
        st.units_left = 1  # the worker's run says what is wrong, as convert in process does
        return [Unit(rank * 100000, rank, path, None)]
    size = max(1, len(wanted) if whole else min(PAGES_PER_UNIT, -(-len(wanted) // jobs)))
    runs = [tuple(wanted[k:k + size]) for k in range(0, len(wanted), size)]
    st.units_left = len(runs)
    return [Unit(rank * 100000 + k, rank, path, pages) for k, pages in enumerate(runs)]


class _Pool:
    """The worker processes, their inboxes, the shared result queue and cancel event."""

    def __init__(self, jobs: int, threads: int, options, verbose: bool) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no model, lock or thread inherited
        self.cancel = ctx.Event()
        self.results = ctx.Queue()
        self.inboxes = [ctx.Queue() for _ in range(jobs)]
        self.procs = [ctx.Process(target=serve, name=f"convert-job-{w + 1}", daemon=True, args=(
            w, self.inboxes[w], self.results, self.cancel, threads, options, verbose)) for w in range(jobs)]
        for p in self.procs:
            p.start()

    def get(self, timeout: float):
        return self.results.get(timeout=timeout)

    def close(self, run: "_Run") -> None:
        """Tell every worker to leave, let them close their engines, end the ones that do not."""
        for inbox in self.inboxes:
            inbox.put(None)
        deadline = time.monotonic() + 10.0
        while any(p.is_alive() for p in self.procs) and time.monotonic() < deadline:
            try:  # a worker leaves only once what it sent is read
                run.handle(*self.get(0.1))
            except queue.Empty:
                pass
            except KeyboardInterrupt:
                break
        for p in self.procs:
            if p.is_alive():
                p.terminate()
            p.join(1.0)


class _Run:
    """The parent's loop: units out to free workers, pages and ends back, inputs written in order."""

    def __init__(self, states: list[_Input], units: list[Unit], out_dir: Path, options, progress, results,
                 jobs: int) -> None:
        self.states, self.pending = states, deque(units)
        self.by_id = {u.id: u for u in units}
        self.out_dir, self.options, self.progress, self.results = out_dir, options, progress, results
        self.jobs = jobs
        self.codes: list[int | None] = [None] * len(states)
        self.written = 0  # inputs written (or failed, or skipped), in order
        self.holding: dict[int, Unit] = {}  # worker → the unit it reads
        self.idle: deque[int] = deque(range(jobs))
        self.gone: set[int] = set()
        self.stop = False  # an input failed the way every later one would: nothing more is sent out

    def loop(self, pool: _Pool | None) -> None:
        while True:
            self._send(pool)
            self._write_ready()
            if self.written == len(self.states) or (self.stop and not self.holding) or pool is None:
                return
            try:
                self.handle(*pool.get(POLL_S))
            except queue.Empty:
                self._check_workers(pool)

    def _send(self, pool: _Pool | None) -> None:
        while pool is not None and self.idle and self.pending and not self.stop:
            unit = self.pending[0]
            if unit.rank >= self.written + WINDOW * self.jobs:
                return
            self.pending.popleft()
            st = self.states[unit.rank]
            if st.end.error:  # the input failed already: its other pages are not read
                st.units_left -= 1
                continue
            worker = self.idle.popleft()
            self.holding[worker] = unit
            pool.inboxes[worker].put(unit)
            if not st.started:
                st.started = time.perf_counter()
                self.progress.start_document(unit.path.name, len(st.restored))

    def handle(self, kind: str, key: int, payload) -> None:
        if kind == "page":
            self.states[self.by_id[key].rank].take(*pickle.loads(payload))
            self.progress.skip_pages(1)
        elif kind == "end":
            worker = next((w for w, u in self.holding.items() if u.id == key), None)
            if worker is not None:
                del self.holding[worker]
                self.idle.append(worker)
            self.states[self.by_id[key].rank].ended(payload)
        elif kind == "gone":
            self.gone.add(key)
            if key in self.idle:
                self.idle.remove(key)

    def _check_workers(self, pool: _Pool) -> None:
        """A worker that died (killed, out of memory) fails the input it was reading; with none left, every
        unit still waiting fails."""
        for w, proc in enumerate(pool.procs):
            if proc.exitcode is None or w in self.gone:
                continue
            self.gone.add(w)
            if w in self.idle:
                self.idle.remove(w)
            unit = self.holding.pop(w, None)
            if unit is not None:
                why = f"{unit.path.name}: a worker process ended unexpectedly (exit code {proc.exitcode})"
                self.states[unit.rank].ended(UnitEnd(error=why, kind="internal"))
        if len(self.gone) == len(pool.procs):
            while self.pending:
                unit = self.pending.popleft()
                self.states[unit.rank].ended(UnitEnd(error=f"{unit.path.name}: no worker process left",
                                                     kind="internal"))

    def _write_ready(self) -> None:
        while self.written < len(self.states) and self.states[self.written].units_left <= 0:
            k = self.written
            self.codes[k] = self._finish(self.states[k], self.results[k])
            self.written += 1
            if self.codes[k] in (EXIT_USAGE, EXIT_INTERRUPTED, EXIT_ENGINE):
                self.stop = True  # the next input would fail the same way

    def _finish(self, st: _Input, result) -> int:
        name = st.item.path.name
        if st.skipped:
            self.progress.start_document(name, len(st.checkpoint.pages))
            print(f"{name}: already converted (checkpoint), skipped")
            result.outcome = "skipped"
            return EXIT_OK
        if st.refusal:
            print(f"error: {st.refusal}", file=sys.stderr)
            print(f"{name}: failed (output)")
            return EXIT_INPUT
        if st.cancelled:
            result.outcome = "interrupted"
            print(f"{name}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if st.end.error:
            return _failed(name, st.end.error, st.end.kind)
        return self._write(st, result)

    def _write(self, st: _Input, result) -> int:
        """The input's pages as one document, written by the one writer (app.core.pipeline.output)."""
        from app.commands.convert_inputs import report_converted
        from app.core.pipeline import Pipeline, PipelineError
        from app.core.pipeline.output import DocumentOutput
        from app.core.pipeline.run_outcome import final_stats
        from app.core.record.events import ErrorRaised

        options = self.options
        dpi = st.end.input_dpi or st.checkpoint.input_dpi  # the checkpoint's: every page was restored
        if not options.ocr_dpi and dpi:  # picture crops at the DPI the engine read them at
            options = dataclasses.replace(options, ocr_dpi=dpi)
        warnings: list[str] = []
        pipe = Pipeline(options, emit=lambda e: warnings.append(e.message)
                        if isinstance(e, ErrorRaised) and not e.fatal else None)
        item = st.item
        try:
            doc = pipe.open(item.path)
            out = pipe.output = DocumentOutput(str(item.path), st.end.engine or st.checkpoint.engine,
                                               st.end.layout or st.checkpoint.layout, doc.page_count,
                                               warnings=list(doc.warnings))
            out.pages = sorted([*st.pages.values(), *st.restored.values()], key=lambda pg: pg.index)
            if st.end.engine_stats:
                out.stats["engine_stats"] = st.end.engine_stats
            seconds = time.perf_counter() - (st.started or time.perf_counter())
            out.stats = final_stats(out, seconds)
            files = pipe.write(self.out_dir / item.rel.parent, item.rel.name)
            st.checkpoint.done = not st.failed_pages  # with failed regions --resume reads those pages again
            st.checkpoint.save()
        except PipelineError as exc:
            return _failed(item.path.name, str(exc), exc.kind)
        finally:
            pipe.close()
        report_converted(item.path, out, files, [*warnings, *st.warnings], result, len(st.restored), seconds)
        return EXIT_WARNINGS if warnings or st.warnings else EXIT_OK

    def drain(self, pool: _Pool) -> None:
        """Ctrl+C: every worker stops its page; the pages that still come back go into their checkpoints."""
        pool.cancel.set()
        deadline = time.monotonic() + DRAIN_S
        try:
            while self.holding and time.monotonic() < deadline:
                try:
                    self.handle(*pool.get(POLL_S))
                except queue.Empty:
                    self._check_workers(pool)
        except KeyboardInterrupt:  # a second Ctrl+C: leave now
            pass

    def interrupted(self) -> None:
        """The inputs started and not written end as interrupted."""
        for k in range(self.written, len(self.states)):
            st = self.states[k]
            if st.started:
                self.codes[k] = EXIT_INTERRUPTED
                self.results[k].outcome = "interrupted"
                print(f"{st.item.path.name}: interrupted", file=sys.stderr)


def _failed(name: str, message: str, kind: str) -> int:
    if kind == "internal":
        print(f"error: {message} (set SCRIPTORIUM_DEBUG=1 for the traceback, and please report it)",
              file=sys.stderr)
        print(f"{name}: failed (internal error)")
        return EXIT_INPUT
    print(f"error: {message}", file=sys.stderr)
    print(f"{name}: failed ({kind})")
    return EXIT_ENGINE if kind in ("engine", "layout") else EXIT_INPUT
