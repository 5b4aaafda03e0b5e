"""Traces in the window: replaying a trace file through the window's one entry point (`handle_event`), and
recording every live run to a file when the person asked for it (the worker tees its events into a TraceWriter,
so the recorded timings are the decoder's, not the GUI's)."""
from __future__ import annotations

import time
from pathlib import Path


class TraceControl:
    def __init__(self, window) -> None:
        self.window = window
        self.path: Path | None = None

    def open(self, path: str | Path) -> int:
        from app.core.trace import load_trace

        w = self.window
        trace = load_trace(path)
        w.cancel_run(discard=True)
        w._replaying = True
        w._run_work = None
        self.path = Path(path)
        if hasattr(w.views, "load_trace"):
            w.views.load_trace(trace.events, trace.times, sink=w.handle_event, reset_sink=self._reset)
        else:  # the decoding views are not part of this build: apply the run at once
            for event in trace.events:
                w.handle_event(event)
        w.statusBar().showMessage(f"Replaying {Path(path).name} ({len(trace)} events)", 5000)
        return len(trace)

    def adopt_document(self, event) -> None:
        """A replayed run names its document: show it (adding it when new), even if the file is not here."""
        w = self.window
        if w.work is None or w.work.path != event.path:
            work = w.session.add_document(event.path)
            w._refresh_documents()
            w.show_document(w._index_of(work.path))
        w._run_work = w.work
        if not w.work.page_sizes and not Path(event.path).is_file():
            w.work.page_count = event.page_count

    def _reset(self) -> None:
        """Scrubbing back: the replayed document starts again from its first event."""
        w = self.window
        work = w._run_work
        if work is not None:
            work.blocks.clear()
            w.review.show_document()
            w._show_regions()

    def set_recording(self, on: bool) -> None:
        self.window.settings.set("record_traces", bool(on))

    def start_recording(self, work) -> None:
        w = self.window
        if not w.settings.get("record_traces"):
            return
        from app.core.paths import user_data_dir
        from app.core.trace import TraceWriter

        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.path = user_data_dir() / "traces" / f"{Path(work.path).stem}-{stamp}.jsonl"
        w.decoder.recorder = TraceWriter(self.path, meta={"document": work.path})

    def stop_recording(self) -> None:
        w = self.window
        recorder, w.decoder.recorder = w.decoder.recorder, None
        if recorder is not None:
            recorder.close()
            w.statusBar().showMessage(f"Trace written to {self.path}", 8000)
