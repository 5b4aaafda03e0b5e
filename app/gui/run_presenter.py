"""What the window shows of runs: it asks the run controller (app.core.review.runs, which owns the run state, the
queue and the traces) to start or stop a run, and shows what follows: progress, the document list's status
("reading…", "15 blocks", "cancelled (3 of 15 re-read)", "failed: …"), the banner and status bar, and the
conflicts with the person's edits once the run has ended.

What must never live here: run state (the controller's), decoding, file formats.
"""
from __future__ import annotations

from app.core.engines import fallback_engine
from app.core.review.document import DocumentWork
from app.core.review.runs import RunRefused


class RunPresenter:
    def __init__(self, window) -> None:
        self.window = window
        self.last_error = None  # the run's fatal ErrorRaised, for the banner's actions at its end
        self.told_auto_classic = False
        window.decoder.events.connect(self._live_events)

    def _live_events(self, events: list) -> None:
        """"Automatic" that settles for classic OCR says so (once), with a way to point it at model weights."""
        from app.core.events import RunStarted

        w = self.window
        for event in events:
            if isinstance(event, RunStarted) and event.engine == fallback_engine().name \
                    and w.engine_bar.engine_name == "auto" \
                    and not self.told_auto_classic:
                self.told_auto_classic = True
                w.banner.show_message(f"Automatic is using {fallback_engine().title}: no GravityOCR or built-in "
                                      "model weights were found. `python -m app models` says where they are looked for.",
                                      actions=[("Choose folder…", self.choose_model_folder)])

    def show_error(self, event) -> None:
        """A fatal error: the banner says it, with what the person can do about it."""
        self.last_error = event
        self.window.banner.show_message(event.message, actions=self.error_actions(event))

    def error_actions(self, event) -> list:
        """An engine that cannot load (missing weights): choose its folder, or read with classic OCR now."""
        if event is None or event.where != "loading_model":
            return []
        return [("Choose folder…", self.choose_model_folder), (f"Use {fallback_engine().name}", self.use_classic)]

    def choose_model_folder(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        w = self.window
        folder = QFileDialog.getExistingDirectory(w, "Model folder", w.settings.get("model_path"))
        if folder:
            w.engine_bar.set_model_path(folder)
            w.banner.hide()
            self.start(w.work)

    def use_classic(self) -> None:
        w = self.window
        w.engine_bar.set_engine(fallback_engine().name)
        w.banner.hide()
        self.start(w.work)

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
        try:
            if region_ids:
                run_id = w.runs.rerun_region(work, region_ids[0], options)
            else:
                run_id = w.runs.start(work, options, pages, record_to=record_to)
        except RunRefused as refused:  # the person's layout is kept: said, with a way on
            w.banner.show_message(str(refused), actions=[(f"Use {fallback_engine().name}", self.use_classic)])
            return 0
        if run_id:
            w.follow_live = True
            self.last_error = None
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
            w.banner.show_message(ended.message, actions=self.error_actions(self.last_error))
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
