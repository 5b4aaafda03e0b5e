"""The run controller: the one owner of run state in the window, with no Qt. It turns "read this document / page /
region" into a request for the worker lane, keeps the queue of documents dropped together, knows which document
the events in flight belong to (or that a trace is being replayed), collects the conflicts a run raised, records
traces, and sums up how a run ended for the document list and the status bar.

The window wires widgets to it; the lane is anything with `submit(request) -> run id`, `cancel(discard)`,
`running` and a `recorder` slot (app.gui.worker.DecodeClient).

What must never live here: Qt, widgets, decoding.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Protocol

from app.core.record import events as ev
from app.core.pipeline.options import PipelineOptions
from app.core.pipeline.pictures import pictures_dir, prune_pictures
from app.core.document.regions import DECODED_TASKS
from app.core.review.document import DocumentWork
from app.core.review.page_turns import page_turns
from app.core.review.region_edits import fixed_layouts
from app.core.review.runner import RunRequest
from app.core.review.session import Change, Session

RUN_END = (ev.RunFinished, ev.RunCancelled)


class Lane(Protocol):
    running: bool
    recorder: Callable[[ev.Event], None] | None

    def submit(self, request: RunRequest) -> int: ...

    def cancel(self, discard: bool = False) -> None: ...


class RunRefused(Exception):
    """A run that would undo the person's work and is not started; its message says why, for the banner."""


def layout_refusal(work: DocumentWork, options: PipelineOptions, pages: list[int] | None) -> str:
    """Why `options`' engine cannot read `pages` of `work` ("" when it can): a whole-document engine (Unlimited-OCR,
    or a server under the Unlimited profile) reads pages, not regions, so on a page a person laid out it would put
    its own regions in place of theirs. The kind is the one the engine will have with these options (its spec's
    `kind_for`), not a name's."""
    from app.core.engines import ENGINES, resolve_engine_name

    laid_out = fixed_layouts(work, pages)
    spec = ENGINES.get(resolve_engine_name(options.engine, options.model_path)) if laid_out else None
    if spec is None or spec.kind_for(options.engine_options) != "document":
        return ""
    listed = ", ".join(str(i + 1) for i in laid_out)
    region_engines = ", ".join(dict.fromkeys(s.short_title for s in ENGINES.values() if s.kind == "region"))
    return (f"{spec.short_title} reads whole pages with these settings and cannot read the regions you laid out on "
            f"page {listed}, so nothing was read: your regions are kept as they are. To read them, choose a region "
            f"engine ({region_engines}).")


@dataclass
class RunEnded:
    """How a run ended, for the window to show."""

    work: DocumentWork | None  # None: the document was closed meanwhile
    status: str  # the document list's text: "15 blocks", "cancelled (3 of 15 re-read)", "failed: …"
    message: str  # the status bar's
    failed: bool
    conflicts: list[str] = field(default_factory=list)  # edited blocks whose OCR changed under the edit
    trace: Path | None = None  # where the run was recorded, when it was


class RunController:
    def __init__(self, session: Session, lane: Lane) -> None:
        self.session = session
        self.lane = lane
        self.queue: list[str] = []  # documents waiting to be read (several dropped at once)
        self.work: DocumentWork | None = None  # the document the events in flight belong to
        self.replaying = False
        self.conflicts: list[str] = []
        self.passwords: dict[str, str] = {}  # path → the password that opened it, for the worker
        self.stale_pictures: set[Path] = set()  # picture folders of documents closed while their run was stopping
        self.trace_path: Path | None = None

    # --- starting and stopping ---------------------------------------------------------------------------------

    def start(self, work: DocumentWork, options: PipelineOptions, pages: list[int] | None = None,
              region_ids: list[str] | None = None, *, record_to: Path | None = None) -> int:
        """Read `work` (or some of its laid-out pages or regions) on the lane; returns the run id. With
        `record_to` (a folder), the run's events are also written there as a trace. Raises RunRefused (nothing
        started, nothing changed) when the engine would replace regions a person laid out (`layout_refusal`)."""
        refusal = layout_refusal(work, options, pages)
        if refusal:
            raise RunRefused(refusal)
        self.replaying = False
        self.session.plan_run(work, pages, region_ids)
        options = replace(options, password=self.passwords.get(work.path), picture_dir=str(pictures_dir(work.path)))
        self.work = work
        self.conflicts = []
        if record_to is not None:
            self._record(work, record_to)
        layouts = fixed_layouts(work, pages)
        return self.lane.submit(RunRequest(work.path, options, pages, region_ids, layouts=layouts,
                                           turns=page_turns(work, layouts)))

    def rerun_region(self, work: DocumentWork, region_id: str, options: PipelineOptions) -> int:
        """Read one region again (its page's layout is kept); 0 when it is not one an engine reads."""
        block = work.blocks.get(region_id)
        if block is None or block.region.task not in DECODED_TASKS:
            return 0
        return self.start(work, options, [block.region.page], [region_id])

    def cancel(self, discard: bool = False) -> bool:
        """Stop the run after the current forward pass; what was finished stays. `discard` also drops the events
        still in flight (the document was closed, or a replay takes over). Returns whether a run was stopped."""
        if not self.lane.running:
            return False
        self.lane.cancel(discard=discard)
        self.queue.clear()
        return True

    def enqueue(self, paths: list[str]) -> None:
        self.queue.extend(p for p in paths if p not in self.queue)

    def next_document(self) -> DocumentWork | None:
        """The next queued document still open, when the lane is free."""
        while self.queue and not self.lane.running:
            path = self.queue.pop(0)
            work = next((d for d in self.session.documents if d.path == path), None)
            if work is not None:
                return work
        return None

    def forget(self, work: DocumentWork) -> None:
        """`work` is being closed: its run stops (events dropped) and its picture crops go, now or once the run has
        stopped (the worker may still write one). Its password is forgotten: reopening it asks again."""
        self.passwords.pop(work.path, None)
        if self.work is work:
            self.cancel(discard=True)
            self.work = None
            self.stale_pictures.add(pictures_dir(work.path))
        else:
            shutil.rmtree(pictures_dir(work.path), ignore_errors=True)

    def begin_replay(self, trace_path: Path) -> None:
        self.cancel(discard=True)
        self.replaying = True
        self.work = None
        self.trace_path = trace_path

    # --- events --------------------------------------------------------------------------------------------------

    def needs_document(self, event: ev.Event) -> bool:
        """A replayed run names its document: the window shows it (adding it when new) before applying."""
        return isinstance(event, ev.DocumentOpened) and (self.replaying or self.work is None)

    def adopt(self, work: DocumentWork) -> None:
        self.work = work

    def apply(self, event: ev.Event) -> tuple[DocumentWork | None, Change]:
        """Apply one event to the document it belongs to; returns that document and what changed."""
        work = self.work or self.session.document
        change = self.session.apply(event, work)
        self.conflicts.extend(c for c in change.conflicts if c not in self.conflicts)
        if isinstance(event, RUN_END) and not self.replaying and work is not None:
            prune_pictures(work.path, [b.region for b in work.blocks.values()])  # regions a re-run no longer has
        return work, change

    def finished(self, error: str = "") -> RunEnded:
        """The lane says the run ended (`error`: it crashed). Sums it up and clears the run state."""
        trace = self._stop_recording()
        work = self.work if any(d is self.work for d in self.session.documents) else None
        if work is not None and error and work.run.outcome != "failed":
            work.run.outcome, work.run.reason = "failed", error
        failed = work is not None and work.run.outcome == "failed"
        status = work.summary() or "0 blocks" if work is not None else ""
        if failed:
            message = f"The run failed: {work.run.reason}"
        elif work is not None and work.run.outcome == "cancelled":
            message = f"Cancelled: {status.removeprefix('cancelled ').strip('()')}."
        else:
            message = f"Done: {status}." if work is not None else ""
        ended = RunEnded(work, status, message, failed, list(self.conflicts), trace)
        self.conflicts = []
        self.work = None
        if self.stale_pictures:  # crops of documents closed while this run was stopping (unless opened again since)
            open_now = {pictures_dir(d.path) for d in self.session.documents}
            for folder in self.stale_pictures - open_now:
                shutil.rmtree(folder, ignore_errors=True)
            self.stale_pictures = set()
        return ended

    # --- traces ----------------------------------------------------------------------------------------------------

    def _record(self, work: DocumentWork, folder: Path) -> None:
        from app.core.record.trace import TraceWriter

        # Named to the second, and never over an earlier trace: two runs started within one second (a quick
        # run, then "read again") wrote the second run's events over the first's.
        stem = f"{Path(work.path).stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        path, n = folder / f"{stem}.jsonl", 1
        while path.exists():
            n += 1
            path = folder / f"{stem}-{n}.jsonl"
        self.trace_path = path
        self.lane.recorder = TraceWriter(self.trace_path, meta={"document": work.path})

    def _stop_recording(self) -> Path | None:
        recorder: Any = self.lane.recorder
        self.lane.recorder = None
        if recorder is None:
            return None
        recorder.close()
        return self.trace_path
