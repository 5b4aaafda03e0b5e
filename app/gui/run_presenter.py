"""What the window shows of runs: it asks the run controller (app.core.review.runs, which owns the run state, the
queue and the traces) to start or stop a run, and shows what follows: progress, the document list's status
("reading…", "15 blocks", "cancelled (3 of 15 re-read)", "failed: …"), the banner and status bar, and the
conflicts with the person's edits once the run has ended.

What must never live here: run state (the controller's), decoding, file formats.
"""
from __future__ import annotations

from app.core.review.document import DocumentWork


class RunPresenter:
    def __init__(self, window) -> None:
        self.window = window

    def start(self, work: DocumentWork | None, pages: list[int] | None = None,
              region_ids: list[str] | None = None) -> int:
        """Read `work` (or some of its pages or regions) with the engine bar's choice; returns the run id (0:
        nothing to read)."""
        w = self.window
        if work is None:
            return 0
        w.editor.flush_edits()
        record_to = None
        if w.settings.get("record_traces"):
            from app.core.paths import user_data_dir

            record_to = user_data_dir() / "traces"
        options = w.engine_bar.pipeline_options()
        if region_ids:
            run_id = w.runs.rerun_region(work, region_ids[0], options)
        else:
            run_id = w.runs.start(work, options, pages, record_to=record_to)
        if run_id:
            w.follow_live = True
            w.banner.hide()
            w.progress.start()
            w.documents.set_status(w.index_of(work.path), "reading…")
            w.update_actions()
        return run_id

    def cancel(self, discard: bool = False) -> None:
        if self.window.runs.cancel(discard):
            self.window.progress.cancelling()

    def next_in_queue(self) -> None:
        work = self.window.runs.next_document()
        if work is not None:
            self.start(work)

    def finished(self, run_id: int, error: str) -> None:
        """The worker says the run ended (after its last event)."""
        w = self.window
        w.progress.stop()
        ended = w.runs.finished(error)
        engine = w.run_label.text().split(" · ")[0]
        if engine and w.decoder.device:
            w.run_label.setText(f"{engine} · {w.decoder.device}")
        if ended.work is not None:
            w.documents.set_status(w.index_of(ended.work.path), ended.status)
        if ended.failed:
            w.banner.show_message(ended.message)
        if ended.message:
            w.statusBar().showMessage(ended.message, 8000)
        if ended.trace is not None:
            w.statusBar().showMessage(f"Trace written to {ended.trace}", 8000)
        if w.review.resolve_conflicts(ended.conflicts, w.prompter):
            w.show_regions()
        w.update_actions()
        w.redraw()
        w.save_journal(wait=False)  # never an fsync stall on the GUI thread
        self.next_in_queue()
