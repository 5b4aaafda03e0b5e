"""The main window: documents and thumbnails on the left, the page in the middle, the Markdown editor and its
preview on the right, the decoding views docked below. It composes small widgets and wires them; it does not
render, decode, parse or write files itself. Its jobs live in mixins by job: documents
(app.gui.window_documents), pages (app.gui.window_pages), page <-> text linking (app.gui.window_linking), runs
and the event pump (app.gui.window_runs); what stays here is composing, wiring, the journal and the window's
own Qt events.

Every event, from the live worker or from a replayed trace, enters through `handle_event(event)`: it is
applied to the session (plain data) at once and the widgets are brought up to date on the next frame (at most
~30 a second), so a burst of tokens never floods the GUI thread.

What must never live here: torch/transformers imports (the window appears before any model is needed),
decoding code, file formats."""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMainWindow

from app.core.document import DOCUMENT_SUFFIXES  # noqa: F401  (the window opens what core opens: test_house)
from app.core.review.runs import RunController
from app.core.review.session import Session
from app.gui.actions import enable_actions, fill_recent_menu
from app.gui.autosave import Autosave
from app.gui.journal import Journal
from app.gui.prompts import Prompter
from app.gui.render_service import PageRenderer
from app.gui.settings import Settings
from app.gui.window_documents import WindowDocuments
from app.gui.window_linking import WindowLinking
from app.gui.window_pages import WindowPages
from app.gui.window_runs import WindowRuns
from app.gui.window_ui import restore_geometry, save_geometry, setup_ui
from app.gui.worker import DecodeClient

FRAME_MS = 33


class MainWindow(WindowDocuments, WindowPages, WindowLinking, WindowRuns, QMainWindow):
    def __init__(self, settings: Settings | None = None, prompter: Prompter | None = None) -> None:
        super().__init__()
        self.setWindowTitle("Scriptorium")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self.settings = settings or Settings()
        from PySide6.QtWidgets import QApplication

        from app.gui.theme import apply_settings_theme

        # once per app: `replay` and tests look the same
        apply_settings_theme(QApplication.instance(), self.settings)
        self.prompter = prompter or Prompter(self)
        self.session = Session()
        self.journal = Journal()
        self.renderer = PageRenderer(self)
        self.decoder = DecodeClient(self)
        self.runs = RunController(self.session, self.decoder)  # run state, queue, traces: Qt-free
        self.follow_live = True
        self._dirty_blocks: set[str] = set()
        self._dirty_layout = self._dirty_live = False
        # the last R-SWA window shown (document, …)
        self._window_span: tuple[str, str, int, int] | None = None
        self.events_handled = 0
        self._snapshot_seconds = 0.0  # what building the last journal snapshot cost the GUI thread
        self.autosave = Autosave(lambda: self.settings.get("autosave_seconds"),
                                 lambda: self.save_journal(wait=False), self,
                                 cost=lambda: self._snapshot_seconds + self.journal.write_seconds)
        setup_ui(self)  # the widgets, and the helpers given the parts they need (run_presenter, flow, …)
        self._frame = QTimer(self, singleShot=True, interval=FRAME_MS)  # widgets catch up once per frame
        self._frame.timeout.connect(self.redraw)
        self._connect()
        fill_recent_menu(self.actions.recent_menu, self.settings.get("recent_files"), self.open_files)
        self._docks_sized = restore_geometry(self)
        self.update_actions()

    def _connect(self) -> None:
        self.decoder.events.connect(self._live_events)
        self.run_presenter.started.connect(self._run_started)
        self.run_presenter.ended.connect(self._run_ended)
        self.renderer.info_ready.connect(self._info_ready)
        self.renderer.page_ready.connect(self._page_ready)
        self.renderer.failed.connect(self._render_failed)
        self.documents.document_selected.connect(self.show_document)
        self.documents.close_requested.connect(self.close_document)
        self.thumbnails.page_selected.connect(self._page_chosen)
        self.thumbnails.thumbnail_requested.connect(self._thumbnail_wanted)
        self.page_view.page_requested.connect(self._page_chosen)
        self.page_view.render_requested.connect(self._render_wanted)
        self.page_view.region_clicked.connect(self.select_region)
        self.page_view.rerun_region_requested.connect(self.rerun_region)
        self.page_view.region_hovered.connect(self.editor.set_hovered_block)
        self.review.block_selected.connect(self._editor_block)
        self.review.block_edited.connect(self._block_edited)
        self.progress.cancel_requested.connect(self.cancel_run)
        self.settings.changed.connect(self._setting_changed)
        from PySide6.QtWidgets import QApplication

        QApplication.instance().aboutToQuit.connect(self.decoder.shutdown)

    # --- journal and export ---------------------------------------------------------------------------------

    def save_journal(self, wait: bool = True) -> Path:
        self.autosave.stop()
        self.editor.flush_edits()
        started = time.perf_counter()
        state = self.session.to_dict()
        self._snapshot_seconds = time.perf_counter() - started
        return self.journal.save(state, wait=wait)

    def offer_restore(self) -> bool:
        """After a crash or kill: offer the work the journal kept (app.gui.journal_restore)."""
        from app.gui.journal_restore import offer_restore

        return offer_restore(self.journal, self.settings, self.banner, self.prompter, self.restore_state)

    def restore_state(self, state: dict) -> None:
        self.session.load_dict(state)
        self.refresh_documents()
        if self.session.documents:
            self.show_document(self.session.current)
        self.statusBar().showMessage("Restored the work from the journal.", 5000)

    def export_current(self, target: str | Path, wait: bool = True) -> list[Path]:
        """Export the current document, written off the GUI thread (app.gui.export.Exporter)."""
        return self.exporter.export(target, wait)

    def set_preview_visible(self, on: bool) -> None:
        self.review.preview.setVisible(on)
        self.settings.set("show_preview", bool(on))

    # --- small plumbing -------------------------------------------------------------------------------------

    def _setting_changed(self, key: str, value) -> None:
        if key == "show_order":
            self.page_view.set_show_order(bool(value))
        elif key == "theme":
            from PySide6.QtWidgets import QApplication

            follower = getattr(QApplication.instance(), "theme_follower", None)
            if follower is not None:
                follower.set_mode(value)
        elif key == "recent_files":
            fill_recent_menu(self.actions.recent_menu, self.settings.get("recent_files"), self.open_files)

    def update_actions(self) -> None:
        enable_actions(self.actions, has_doc=self.work is not None, exporting=self.exporter.running,
                       running=self.decoder.running and not self.runs.replaying)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._docks_sized:
            self._docks_sized = True
            from app.gui.dock_policy import size_decoding_dock

            # `self` as the timer's context: a window deleted before the next turn of the loop is not sized
            QTimer.singleShot(0, self, lambda: size_decoding_dock(self, self.views_dock, self.views.scroller))

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.open_files(paths)
            event.acceptProposedAction()

    def closeEvent(self, event) -> None:  # noqa: N802
        """Every thread the window started has ended when this returns (the decoding lane, the page
        renderer, an export, the journal's saves): deleting the window later frees nothing a thread uses."""
        save_geometry(self)
        self.autosave.stop()
        self._frame.stop()
        self.decoder.shutdown()
        self.renderer.close()
        self.exporter.finish()
        self.editor.flush_edits()
        self.journal.mark_clean(self.session.to_dict())
        self.journal.close()
        super().closeEvent(event)
