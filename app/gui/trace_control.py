"""Trace replay in the window: a trace file's events go through the window's one entry point (`handle_event`),
paced by the decoding views' playback bar, exactly like a live run. (Recording a live run is the run controller's:
app.core.review.runs.) A paused replay shows no progress (nothing is running); showing another document pauses
it. It is given what it works on (`TraceHost`), never the window."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pragma: no cover
    from app.core.review.runs import RunController
    from app.core.review.session import Session
    from app.gui.progress_panel import ProgressPanel
    from app.gui.review_pane import ReviewPane
    from app.gui.settings import Settings
    from app.gui.views import DecodingViews


@dataclass(frozen=True)
class TraceHost:
    """The parts a replay drives, and what the window does for it."""

    session: Session
    runs: RunController
    views: DecodingViews  # the playback bar (views.player) paces the events
    progress: ProgressPanel
    review: ReviewPane
    settings: Settings
    handle_event: Callable[[object], None]  # the window's one entry point for events
    cancel_run: Callable[..., None]  # cancel_run(discard=True): a live run stops before a replay starts
    show_document: Callable[[int], None]
    refresh_documents: Callable[[], None]
    show_regions: Callable[[], None]
    status: Callable[[str, int], None]


class TraceControl:
    def __init__(self, host: TraceHost) -> None:
        self.host = host
        host.views.player.state_changed.connect(self._player_state)

    def _player_state(self, state: str) -> None:
        h = self.host
        if not h.runs.replaying:
            return
        ended = h.runs.work is not None and bool(h.runs.work.run.outcome)  # the replayed run has ended already
        if state == "playing" and not ended:
            h.progress.start(cancellable=False, title="Replaying…")
        elif state != "playing":
            h.progress.stop()

    def document_shown(self, work) -> None:
        """The window shows `work`: a replay of another document pauses (its progress would mislead)."""
        h = self.host
        if h.runs.replaying and work is not h.runs.work:
            h.views.player.pause()
            h.progress.stop()

    @property
    def path(self) -> Path | None:
        """The trace last replayed or recorded."""
        return self.host.runs.trace_path

    def open(self, path: str | Path) -> int:
        from app.core.record.trace import load_trace

        h = self.host
        trace = load_trace(path)
        h.cancel_run(discard=True)
        h.runs.begin_replay(Path(path))
        h.views.load_trace(trace.events, trace.times, sink=h.handle_event, reset_sink=self._reset)
        h.status(f"Replaying {Path(path).name} ({len(trace)} events)", 5000)
        return len(trace)

    def adopt_document(self, event) -> None:
        """A replayed run names its document: show it (adding it when new), even if the file is not here."""
        h = self.host
        if h.session.document is None or h.session.document.path != event.path:
            work = h.session.add_document(event.path)
            h.runs.adopt(work)  # before it is shown: showing the replay's own document does not pause it
            h.refresh_documents()
            h.show_document(h.session.documents.index(work))
        work = h.session.document
        h.runs.adopt(work)
        if not work.page_sizes and not Path(event.path).is_file():
            work.page_count = event.page_count

    def _reset(self) -> None:
        """Scrubbing back: the replayed document starts again from its first event."""
        h = self.host
        work = h.runs.work
        if work is not None:
            work.blocks.clear()
            h.review.show_document()
            h.show_regions()

    def set_recording(self, on: bool) -> None:
        self.host.settings.set("record_traces", bool(on))
