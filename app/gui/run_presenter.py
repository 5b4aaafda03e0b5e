"""What the window shows of runs: it asks the run controller (app.core.review.runs, which owns the run state, the
queue and the traces) to start or stop a run, and shows what follows: progress, the document list's status
("reading…", "15 blocks", "cancelled (3 of 15 re-read)", "failed: …"), the banner and status bar. The window hears
`started` and `ended` and does its own part (following the live decode, the conflicts with the person's edits,
saving the journal).

It is given what it shows (`RunView`), never the window. What must never live here: run state (the
controller's), decoding, file formats.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal

from app.core.engines import fallback_engine
from app.core.review.document import DocumentWork
from app.core.review.runs import RunController, RunEnded, RunRefused

if TYPE_CHECKING:  # pragma: no cover
    from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

    from app.gui.banner import Banner
    from app.gui.engine_bar import EngineBar
    from app.gui.progress_panel import ProgressPanel
    from app.gui.settings import Settings
    from app.gui.side_panel import DocumentList
    from app.gui.worker import DecodeClient


@dataclass(frozen=True)
class RunView:
    """The widgets runs are shown on, and the three things of the window a run needs to ask."""

    banner: Banner
    progress: ProgressPanel
    documents: DocumentList
    run_label: QLabel
    status_bar: QStatusBar
    engine_bar: EngineBar
    settings: Settings
    flush_edits: Callable[[], None]  # the editor's pending typing goes into the session before a run reads it
    row_of: Callable[[str], int]  # the document list's row of a document path
    current: Callable[[], DocumentWork | None]  # the document on screen
    dialog_parent: QWidget


class RunPresenter(QObject):
    started = Signal(int)  # a run began (its id)
    ended = Signal(object)  # a run ended and was shown (its RunEnded)

    def __init__(self, runs: RunController, decoder: DecodeClient, view: RunView,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runs, self.decoder, self.view = runs, decoder, view
        self.last_error = None  # the run's fatal ErrorRaised, for the banner's actions at its end
        self.told_auto_classic = False
        decoder.events.connect(self._live_events)
        decoder.run_finished.connect(self.finished)

    def _live_events(self, events: list) -> None:
        """"Automatic" that settles for classic OCR says so (once), with a way to point it at model weights."""
        from app.core.record.events import RunStarted

        v = self.view
        for event in events:
            if isinstance(event, RunStarted) and event.engine == fallback_engine().name \
                    and v.engine_bar.engine_name == "auto" \
                    and not self.told_auto_classic:
                self.told_auto_classic = True
                v.banner.show_message(f"Automatic is using {fallback_engine().title}: no GravityOCR or built-in "
                                      "model weights were found. `python -m app models` says where they are looked for.",
                                      actions=[("Choose folder…", self.choose_model_folder)])

    def show_error(self, event) -> None:
        """A fatal error: the banner says it, with what the person can do about it."""
        self.last_error = event
        self.view.banner.show_message(event.message, actions=self.error_actions(event))

    def error_actions(self, event) -> list:
        """An engine that cannot load (missing weights): choose its folder, or read with classic OCR now."""
        if event is None or event.where != "loading_model":
            return []
        return [("Choose folder…", self.choose_model_folder), (f"Use {fallback_engine().name}", self.use_classic)]

    def choose_model_folder(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        v = self.view
        folder = QFileDialog.getExistingDirectory(v.dialog_parent, "Model folder", v.settings.get("model_path"))
        if folder:
            v.engine_bar.set_model_path(folder)
            v.banner.hide()
            self.start(v.current())

    def use_classic(self) -> None:
        v = self.view
        v.engine_bar.set_engine(fallback_engine().name)
        v.banner.hide()
        self.start(v.current())

    def start(self, work: DocumentWork | None, pages: list[int] | None = None,
              region_ids: list[str] | None = None) -> int:
        """Read `work` (or some of its pages or regions) with the engine bar's choice; returns the run id (0:
        nothing to read)."""
        v = self.view
        if work is None:
            return 0
        v.flush_edits()
        record_to = None
        if v.settings.get("record_traces"):
            from app.core.base.paths import user_data_dir

            record_to = user_data_dir() / "traces"
        options = v.engine_bar.pipeline_options()
        try:
            if region_ids:
                run_id = self.runs.rerun_region(work, region_ids[0], options)
            else:
                run_id = self.runs.start(work, options, pages, record_to=record_to)
        except RunRefused as refused:  # the person's layout is kept: said, with a way on
            v.banner.show_message(str(refused), actions=[(f"Use {fallback_engine().name}", self.use_classic)])
            return 0
        if run_id:
            self.last_error = None
            v.banner.hide()
            v.status_bar.clearMessage()  # no "Ready" beside the phase: the progress panel says what happens now
            v.progress.start()
            v.documents.set_status(v.row_of(work.path), "reading…")
            self.started.emit(run_id)
        return run_id

    def cancel(self, discard: bool = False) -> None:
        if self.runs.cancel(discard):
            self.view.progress.cancelling()

    def next_in_queue(self) -> None:
        work = self.runs.next_document()
        if work is not None:
            self.start(work)

    def finished(self, run_id: int, error: str) -> None:
        """The worker says the run ended (after its last event)."""
        v = self.view
        v.progress.stop()
        ended: RunEnded = self.runs.finished(error)
        engine = v.run_label.text().split(" · ")[0]
        if engine and self.decoder.device:
            v.run_label.setText(f"{engine} · {self.decoder.device}")
        if ended.work is not None:
            v.documents.set_status(v.row_of(ended.work.path), ended.status)
        if ended.failed:
            v.banner.show_message(ended.message, actions=self.error_actions(self.last_error))
        if ended.message:
            v.status_bar.showMessage(ended.message, 8000)
        if ended.trace is not None:
            v.status_bar.showMessage(f"Trace written to {ended.trace}", 8000)
        self.ended.emit(ended)
        self.next_in_queue()
