"""The main window: documents and thumbnails on the left, the page in the middle, the Markdown editor and its
preview on the right, the decoding views docked below. It composes small widgets and wires them; it does not
render, decode, parse or write files itself.

Every event, from the live worker or from a replayed trace, enters through `handle_event(event)`: it is applied to
the session (plain data) at once and the widgets are brought up to date on the next frame (at most ~30 a second),
so a burst of tokens never floods the GUI thread.

What must never live here: torch/transformers imports (the window appears before any model is needed), decoding
code, file formats.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QMainWindow

from app.core.record import events as ev
from app.core.document import DOCUMENT_SUFFIXES
from app.core.review.document import DocumentWork
from app.core.review.runs import RunController
from app.core.review.session import Session
from app.gui.actions import enable_actions, fill_recent_menu
from app.gui.autosave import Autosave
from app.gui.journal import Journal
from app.gui.prompts import Prompter
from app.gui.render_service import PageRenderer
from app.gui.settings import Settings
from app.gui.window_ui import restore_geometry, save_geometry, setup_ui
from app.gui.worker import DecodeClient

FRAME_MS = 33


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None, prompter: Prompter | None = None) -> None:
        super().__init__()
        self.setWindowTitle("Scriptorium")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self.settings = settings or Settings()
        from PySide6.QtWidgets import QApplication

        from app.gui.theme import apply_settings_theme

        apply_settings_theme(QApplication.instance(), self.settings)  # once per app: `replay` and tests look the same
        self.prompter = prompter or Prompter(self)
        self.session = Session()
        self.journal = Journal()
        self.renderer = PageRenderer(self)
        self.decoder = DecodeClient(self)
        self.runs = RunController(self.session, self.decoder)  # run state, queue, traces: Qt-free
        self.follow_live = True
        self._dirty_blocks: set[str] = set()
        self._dirty_layout = self._dirty_live = False
        self._window_span: tuple[str, int, int] | None = None  # the last R-SWA window shown in the editor
        self.events_handled = 0
        self.autosave = Autosave(lambda: self.settings.get("autosave_seconds"), lambda: self.save_journal(wait=False),
                                 self)
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

    # --- documents ------------------------------------------------------------------------------------------------

    @property
    def work(self) -> DocumentWork | None:
        return self.session.document

    def open_files(self, paths: list[str], run: bool | None = None) -> list[str]:
        """Open PDFs/images (others are reported, not opened); the first new one becomes current. With `run` (or
        the auto_run setting) they are read one after another."""
        opened, refused = [], []
        for p in paths:
            path = str(Path(p).expanduser().resolve())
            if Path(path).suffix.lower() not in DOCUMENT_SUFFIXES or not Path(path).is_file():
                refused.append(Path(p).name)
                continue
            self.session.add_document(path)
            self.settings.add_recent(path)
            opened.append(path)
        if refused:
            self.banner.show_message("Not opened (not a PDF or image, or missing): " + ", ".join(refused))
        if not opened:
            return []
        self.refresh_documents()
        self.show_document(self.index_of(opened[0]))
        if run if run is not None else self.settings.get("auto_run"):
            self.runs.enqueue(opened)
            self.run_presenter.next_in_queue()
        self.autosave.touch()
        return opened

    def index_of(self, path: str) -> int:
        return next(i for i, d in enumerate(self.session.documents) if d.path == path)

    def refresh_documents(self, current: int | None = None) -> None:
        names = [(d.name, d.path) for d in self.session.documents]
        self.documents.set_documents(names, self.session.current if current is None else current)
        for row, work in enumerate(self.session.documents):  # the list is rebuilt: put each one's status back
            self.documents.set_status(row, "reading…" if work is self.runs.work else work.summary())

    def show_document(self, index: int) -> None:
        if not 0 <= index < len(self.session.documents):
            return
        self.session.current = index
        work = self.work
        self.refresh_documents(index)
        self.setWindowTitle(f"{work.name} — Scriptorium")
        self.traces.document_shown(work)
        self.middle.setCurrentIndex(1)
        self.page_view.clear()
        self.review.show_document()
        if work.page_sizes:
            self.thumbnails.set_pages(work.page_sizes)
            self.show_page(min(work.current_page, len(work.page_sizes) - 1))
        else:
            self.thumbnails.clear()
        if Path(work.path).is_file():
            self.renderer.request_info(work.path)
        self.update_actions()

    def close_document(self, index: int) -> None:
        if not 0 <= index < len(self.session.documents):
            return
        work = self.session.documents[index]
        if self.runs.work is work:
            self.progress.cancelling()
        self.runs.forget(work)  # its run stops; its picture crops go (now, or once the run has stopped)
        self.renderer.forget(work.path)
        self.session.remove_document(index)
        self.refresh_documents()
        if self.session.documents:
            self.show_document(max(0, self.session.current))
        else:
            self.page_view.clear()
            self.thumbnails.clear()
            self.review.show_document()
            self.middle.setCurrentIndex(0)
            self.setWindowTitle("Scriptorium")
        self.autosave.touch()
        self.update_actions()

    def close_current_document(self) -> None:
        self.close_document(self.session.current)

    def _info_ready(self, path: str, count: int, sizes: list) -> None:
        work = next((d for d in self.session.documents if d.path == path), None)
        if work is None:
            return
        sizes = [tuple(s) for s in sizes]
        changed = sizes != work.page_sizes
        work.page_count, work.page_sizes = count, sizes
        if work is self.work and (changed or self.page_view.page < 0):
            self.thumbnails.set_pages(work.page_sizes)
            self.show_page(min(work.current_page, count - 1))
        self.update_actions()

    def _render_failed(self, path: str, message: str, needs_password: bool) -> None:
        """An encrypted PDF asks for its password, and again after a wrong one (until the person cancels)."""
        if needs_password and any(d.path == path for d in self.session.documents):
            tried = self.runs.passwords.pop(path, None)
            again = "That password did not open it. " if tried is not None else ""
            password = self.prompter.password("Encrypted PDF", f"{Path(path).name} is encrypted. {again}Password:")
            if password and password != tried:
                self.runs.passwords[path] = password
                self.renderer.set_password(path, password)
                self.renderer.request_info(path)
                return
        work = next((d for d in self.session.documents if d.path == path), None)
        if work is not None:  # the list says it too, not "0 blocks"
            work.open_failed(message)
            self.refresh_documents()
        self.banner.show_message(message)

    # --- pages ------------------------------------------------------------------------------------------------------

    def show_page(self, page: int) -> None:
        work = self.work
        if work is None or not work.page_sizes or not 0 <= page < len(work.page_sizes):
            return
        work.current_page = page
        self.page_view.show_page(page, work.page_sizes[page], len(work.page_sizes))
        self.show_regions()
        self.thumbnails.set_current_page(page)

    def _page_chosen(self, page: int) -> None:
        """The person chose a page (a run's outcome in the status bar is not overwritten by pages it shows)."""
        self.follow_live = False
        self.show_page(page)
        if self.work is not None and self.page_view.page == page:
            self.statusBar().showMessage(f"Page {page + 1} of {len(self.work.page_sizes)}", 2000)

    def show_regions(self) -> None:
        work = self.work
        if work is None:
            return
        blocks = work.layout_blocks(self.page_view.page)
        selected = self.page_view.selected_id
        self.page_view.set_regions([b.region for b in blocks])
        for b in blocks:
            self.page_view.set_region_state(b.id, edited=b.edited, status=b.status, reviewed=b.reviewed,
                                            live=b.id == self.session.live_region)
        if selected:
            self.page_view.select_region(selected, center=False)

    def _render_wanted(self, page: int, dpi: float) -> None:
        if self.work is not None and Path(self.work.path).is_file():
            self.renderer.request(self.work.path, page, dpi, "page")

    def _thumbnail_wanted(self, page: int, dpi: float) -> None:
        if self.work is not None and Path(self.work.path).is_file():
            self.renderer.request(self.work.path, page, dpi, "thumbnail")

    def _page_ready(self, path: str, page: int, dpi: float, image: QImage, purpose: str) -> None:
        if self.work is None or path != self.work.path:
            return
        if purpose == "thumbnail":
            self.thumbnails.set_thumbnail(page, image)
        else:
            self.page_view.set_page_image(page, dpi, image)

    def next_page(self) -> None:
        self._page_chosen(self.page_view.page + 1)

    def previous_page(self) -> None:
        self._page_chosen(self.page_view.page - 1)

    # --- review: both directions use the block id ------------------------------------------------------------------

    def reveal(self, region_id: str, *, leave_live: bool = False):
        """Show the page of `region_id`'s block and select the region there; the block, or None when there is none.
        `leave_live`: a person went there (editor, find, keys), so the page stops following the live decode."""
        block = self.session.find_block(region_id)
        if block is None:
            return None
        if block.region.page != self.page_view.page:
            if leave_live:
                self.follow_live = False
            self.show_page(block.region.page)
        self.page_view.select_region(region_id)
        return block

    def select_region(self, region_id: str) -> None:
        """A region was clicked (or chosen elsewhere): select it on the page and put the editor on its block."""
        if self.reveal(region_id) is not None:
            self.review.select_block(region_id, focus=False)  # the keys stay on the page (J/K, R, Enter…)

    def _editor_block(self, region_id: str) -> None:
        if not region_id:
            self.page_view.select_region("")
            return
        self.reveal(region_id, leave_live=True)

    def show_text_span(self, region_id: str, start: int, end: int) -> None:
        """The decoding views chose a round or a window: light up its region and its characters."""
        if self.reveal(region_id) is not None:
            self.review.highlight_span(region_id, start, end)

    def show_window_span(self, region_id: str, start: int, end: int) -> None:
        """The R-SWA window moved: `region_id` names a generation (e.g. "doc", the whole document) and the span is
        in its raw output, tags included. Highlight the text of the block(s) inside the window; kept and redone
        when blocks arrive, so the highlight follows the layout as it grows."""
        block = self.session.find_block(region_id)
        if block is not None and not block.provisional:  # a region engine's own window
            self.show_text_span(region_id, start, end)
            return
        self._window_span = (region_id, start, end)
        streams = getattr(getattr(self.views, "window_model", None), "streams", {})
        raw = streams[region_id].text if region_id in streams else None
        self.review.highlight_spans(self.session.window_spans(region_id, start, end, raw))

    def _block_edited(self, region_id: str) -> None:
        block = self.session.find_block(region_id)
        if block is not None:
            self.page_view.set_region_state(region_id, edited=block.edited)
        self.autosave.touch()

    # --- runs (their state lives in the Qt-free RunController; RunPresenter shows them) --------------------------------

    def run_document(self, pages: list[int] | None = None, work: DocumentWork | None = None,
                     region_ids: list[str] | None = None) -> int:
        """Read a document (default: the current one), some of its pages or regions (default: the pages chosen to
        read, app.gui.page_range). Returns the run id."""
        work = work or self.work
        if pages is None and region_ids is None and work is not None:
            pages = work.pages_to_read()
        return self.run_presenter.start(work, pages, region_ids)

    def rerun_page(self) -> int:
        """Read the shown page again. Edited blocks keep their edits unless the person agrees to replace them."""
        if self.work is None or self.page_view.page < 0:
            return 0
        return self.run_document([self.page_view.page])

    def rerun_region(self, region_id: str) -> int:
        block = self.session.find_block(region_id)
        return self.run_document([block.region.page], region_ids=[region_id]) if block is not None else 0

    def cancel_run(self, discard: bool = False) -> None:
        self.run_presenter.cancel(discard)

    def _run_started(self, run_id: int) -> None:
        self.follow_live = True
        self.update_actions()

    def _run_ended(self, ended) -> None:
        """Shown by the presenter; here: the person's edits the run read differently, and the journal."""
        if self.review.resolve_conflicts(ended.conflicts, self.prompter):
            self.show_regions()
        self.update_actions()
        self.redraw()
        self.save_journal(wait=False)  # never an fsync stall on the GUI thread

    def _live_events(self, events: list) -> None:
        list(map(self.handle_event, events))

    # --- the one entry point for events -------------------------------------------------------------------------------

    def handle_event(self, event: ev.Event) -> None:
        """Apply one event (live or replayed) to the session, the progress display and the decoding views; the
        widgets catch up on the next frame."""
        self.events_handled += 1
        if self.runs.needs_document(event):
            self.traces.adopt_document(event)
        work, change = self.runs.apply(event)
        self.progress.feed(event)
        self.views.feed(event)
        replaying = self.runs.replaying
        if isinstance(event, ev.RunStarted):
            self._window_span = None
            self.review.highlight_spans([])
            device = event.device or self.decoder.device
            self.run_label.setText(" · ".join(x for x in (event.engine, device, "replay" if replaying else "") if x))
            if replaying:
                self.progress.start(cancellable=False, title="Replaying…")
        if isinstance(event, ev.ErrorRaised):
            if event.fatal:
                self.run_presenter.show_error(event)
            else:
                self.statusBar().showMessage(event.message, 8000)
        if change.run_state and replaying and not isinstance(event, ev.RunStarted):
            self.progress.stop()
        if change and work is self.work:
            self._dirty_blocks |= change.blocks
            self._dirty_layout |= bool(change.layout_pages)
            self._dirty_live |= change.live_region is not None
            if not self._frame.isActive():
                self._frame.start()
        if change:
            self.autosave.touch()

    def redraw(self) -> None:
        """Bring the widgets up to the session (called by the frame timer; tests may call it directly)."""
        self._frame.stop()
        work = self.work
        blocks, self._dirty_blocks = self._dirty_blocks, set()
        layout, self._dirty_layout = self._dirty_layout, False
        live, self._dirty_live = self._dirty_live, False
        if work is None:
            return
        if layout and not work.page_sizes and not Path(work.path).is_file():
            work.page_sizes = work.guess_page_sizes()  # a replay of a document not on this machine
            self.thumbnails.set_pages(work.page_sizes)
            self.show_page(0)
        if layout:
            self.show_regions()
        if live:
            self._follow_live_region()
        for rid in blocks:
            block = work.blocks.get(rid)
            if block is not None:
                self.page_view.set_region_state(rid, status=block.status, edited=block.edited)
        self.review.refresh_blocks(blocks)
        live_id = self.session.live_region or ""
        following = bool(live_id) and self.follow_live and self.views.rounds_view.following
        # the streaming block stays in view in the editor and the preview, unless the person looks elsewhere
        self.review.preview.follow_id = live_id if following and not self.editor.hasFocus() else ""
        if following and live_id in blocks:
            self.editor.reveal_block(live_id)
        if self._window_span is not None and (blocks or layout):  # blocks arrived or moved: redo the highlight
            self.show_window_span(*self._window_span)

    def _follow_live_region(self) -> None:
        rid = self.session.live_region or ""
        block = self.session.find_block(rid) if rid else None
        if block is not None and self.follow_live and block.region.page != self.page_view.page:
            self.show_page(block.region.page)
        self.page_view.set_live_region(rid)

    def open_trace(self, path: str | Path) -> int:
        """Replay a trace file through `handle_event`, exactly like a live run. Returns the number of events."""
        return self.traces.open(path)

    # --- journal and export ------------------------------------------------------------------------------------------

    def save_journal(self, wait: bool = True) -> Path:
        self.autosave.stop()
        self.editor.flush_edits()
        return self.journal.save(self.session.to_dict(), wait=wait)

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

    # --- small plumbing -----------------------------------------------------------------------------------------------

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
            QTimer.singleShot(0, lambda: self.resizeDocks([self.views_dock], [max(300, self.height() * 2 // 5)],
                                                          Qt.Orientation.Vertical))

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.open_files(paths)
            event.acceptProposedAction()

    def closeEvent(self, event) -> None:  # noqa: N802
        save_geometry(self)
        self.decoder.shutdown()
        self.renderer.wait(2000)
        self.exporter.finish()
        self.editor.flush_edits()
        self.journal.mark_clean(self.session.to_dict())
        super().closeEvent(event)
