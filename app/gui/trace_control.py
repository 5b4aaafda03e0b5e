"""Trace replay in the window: a trace file's events go through the window's one entry point (`handle_event`),
paced by the decoding views' playback bar, exactly like a live run. (Recording a live run is the run controller's:
app.core.review.runs.) A paused replay shows no progress (nothing is running); showing another document pauses
it."""
from __future__ import annotations

from pathlib import Path


class TraceControl:
    def __init__(self, window) -> None:
        self.window = window
        self._wired = False

    def _wire(self) -> None:
        if not self._wired:  # the views and the list exist once the window is built
            self._wired = True
            self.window.views.player.state_changed.connect(self._player_state)

    def _player_state(self, state: str) -> None:
        w = self.window
        if not w.runs.replaying:
            return
        ended = w.runs.work is not None and bool(w.runs.work.run.outcome)  # the replayed run has ended already
        if state == "playing" and not ended:
            w.progress.start(cancellable=False, title="Replaying…")
        elif state != "playing":
            w.progress.stop()

    def document_shown(self, work) -> None:
        """The window shows `work`: a replay of another document pauses (its progress would mislead)."""
        w = self.window
        if w.runs.replaying and work is not w.runs.work:
            w.views.player.pause()
            w.progress.stop()

    @property
    def path(self) -> Path | None:
        """The trace last replayed or recorded."""
        return self.window.runs.trace_path

    def open(self, path: str | Path) -> int:
        from app.core.trace import load_trace

        w = self.window
        trace = load_trace(path)
        self._wire()
        w.cancel_run(discard=True)
        w.runs.begin_replay(Path(path))
        w.views.load_trace(trace.events, trace.times, sink=w.handle_event, reset_sink=self._reset)
        w.statusBar().showMessage(f"Replaying {Path(path).name} ({len(trace)} events)", 5000)
        return len(trace)

    def adopt_document(self, event) -> None:
        """A replayed run names its document: show it (adding it when new), even if the file is not here."""
        w = self.window
        if w.work is None or w.work.path != event.path:
            work = w.session.add_document(event.path)
            w.runs.adopt(work)  # before it is shown: showing the replay's own document does not pause it
            w.refresh_documents()
            w.show_document(w.session.documents.index(work))
        w.runs.adopt(w.work)
        if not w.work.page_sizes and not Path(event.path).is_file():
            w.work.page_count = event.page_count

    def _reset(self) -> None:
        """Scrubbing back: the replayed document starts again from its first event."""
        w = self.window
        work = w.runs.work
        if work is not None:
            work.blocks.clear()
            w.review.show_document()
            w.show_regions()

    def set_recording(self, on: bool) -> None:
        self.window.settings.set("record_traces", bool(on))
