"""The window's widgets and where they sit (Qt Designer's `setupUi` pattern, in code): documents and
thumbnails on the left, the page in the middle, the block bar, Markdown editor and preview on the right, the
decoding views docked below, the actions, toolbar and status bar; and the window geometry kept in the
settings.

What must never live here: behaviour (the window's methods), state of a run (app.core.review).
"""
from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.actions import build_actions
from app.gui.banner import Banner, empty_hint
from app.gui.engine_bar import EngineBar
from app.gui.page_view import PageView
from app.gui.progress_panel import ProgressPanel
from app.gui.review_pane import ReviewPane
from app.gui.side_panel import DocumentList, ThumbnailStrip, make_side_panel
from app.gui.trace_control import TraceControl, TraceHost
from app.gui.window_dialogs import WindowDialogs


def setup_ui(window) -> None:
    """Create the window's parts as its attributes (documents, thumbnails, page_view, review, editor, banner,
    engine_bar, actions, progress, run_label, views, views_dock, traces, dialogs), and the helpers that work
    on them (flow, find_bar, run_presenter, …), each given the parts it needs."""
    window.documents = DocumentList()
    window.thumbnails = ThumbnailStrip()
    window.page_view = PageView()
    window.page_view.set_show_order(window.settings.get("show_order"))
    window.review = ReviewPane(window.session)
    window.review.preview.setVisible(window.settings.get("show_preview"))
    window.editor = window.review.editor
    window.middle = QStackedWidget()
    window.middle.addWidget(empty_hint())
    window.middle.addWidget(window.page_view)
    window.splitter = QSplitter(Qt.Orientation.Horizontal)
    side = make_side_panel(window.documents, window.thumbnails)
    window.splitter.addWidget(side)
    from app.gui.page_range import install_page_range

    window.page_range = install_page_range(window, side)
    window.splitter.addWidget(window.middle)
    window.splitter.addWidget(window.review)
    window.splitter.setSizes([190, 620, 630])
    window.splitter.setStretchFactor(1, 1)
    window.splitter.setStretchFactor(2, 1)
    window.banner = Banner()
    central = QWidget()
    layout = QVBoxLayout(central)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addWidget(window.banner)
    layout.addWidget(window.splitter, 1)
    window.setCentralWidget(central)
    window.engine_bar = EngineBar(window.settings)
    status = window.statusBar().showMessage
    window.progress = ProgressPanel()
    from app.gui.views import DecodingViews

    window.views = DecodingViews()
    window.traces = TraceControl(TraceHost(
        session=window.session, runs=window.runs, views=window.views, progress=window.progress,
        review=window.review, settings=window.settings, handle_event=window.handle_event,
        cancel_run=window.cancel_run,
        show_document=window.show_document, refresh_documents=window.refresh_documents,
        show_regions=window.show_regions, status=status))
    window.dialogs = WindowDialogs(window, window.settings, window.banner, current=lambda: window.work,
                                   open_files=window.open_files, open_trace=window.open_trace,
                                   export=window.export_current, device=lambda: window.decoder.device,
                                   prompter=window.prompter)
    from app.gui.session_file import SessionFiles

    window.sessions = SessionFiles(window)  # File → Save session / Open session (app.gui.session_file)
    from app.gui.review_flow import ReviewFlow, ReviewHost, scope_review_keys

    from app.gui.find_bar import FindBar

    window.flow = ReviewFlow(ReviewHost(
        session=window.session, page_view=window.page_view, review=window.review, documents=window.documents,
        runs=window.runs, reveal=window.reveal, show_regions=window.show_regions,
        select_region=window.select_region, rerun_region=window.rerun_region, touch=window.autosave.touch,
        status=status), window)
    window.find_bar = FindBar(window.editor, window.page_view, window.reveal, window)
    window.review.layout().insertWidget(1, window.find_bar)  # between the block bar and the editor
    from app.gui.order_mode import OrderMode, scope_order_keys

    window.order = OrderMode(window)
    from app.gui.page_turns import PageTurns

    window.turns = PageTurns(window)
    from app.gui.table_editor import TableEditing

    window.tables = TableEditing(window)
    window.actions = build_actions(window, window.engine_bar)
    scope_review_keys(window.actions, window.page_view, window.flow)
    window.flow.drawing_changed.connect(window.actions.draw_region.setChecked)
    from app.gui.export import Exporter, ExportView

    window.exporter = Exporter(ExportView(  # exports written off the GUI thread
        current=lambda: window.work, flush_edits=window.editor.flush_edits, passwords=window.runs.passwords,
        status_bar=window.statusBar(), banner=window.banner, settings=window.settings,
        export_action=window.actions.export, update_actions=window.update_actions), window)
    scope_order_keys(window.actions, window.page_view)
    window.actions.toggle_preview.setChecked(window.settings.get("show_preview"))
    window.actions.record.setChecked(window.settings.get("record_traces"))
    window.run_label = QLabel()
    window.run_label.setObjectName("phase")
    window.statusBar().addWidget(window.progress)  # the phase at the left, where the eye reads the status bar
    window.statusBar().messageChanged.connect(lambda text: _beside_phase(window, text))
    window.statusBar().addPermanentWidget(window.run_label)
    from app.gui.run_presenter import RunPresenter, RunView

    window.run_presenter = RunPresenter(window.runs, window.decoder, RunView(
        banner=window.banner, progress=window.progress, documents=window.documents,
        run_label=window.run_label, status_bar=window.statusBar(), engine_bar=window.engine_bar,
        settings=window.settings,
        flush_edits=window.editor.flush_edits, row_of=window.index_of, current=lambda: window.work,
        dialog_parent=window), window)
    window.views.round_selected.connect(window.show_text_span)
    # the regions kept for playback per document (a setting): what bounds the views' memory on long documents
    window.views.playback_regions = window.settings.get("playback_regions")
    window.settings.changed.connect(lambda key, value: setattr(window.views, "playback_regions", int(value))
                                    if key == "playback_regions" else None)
    window.views.window_span_changed.connect(window.show_window_span)
    window.views_dock = QDockWidget("Decoding", window)
    window.views_dock.setObjectName("decoding_dock")
    window.views_dock.setWidget(window.views)  # the views scroll inside when the dock is short
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, window.views_dock)
    window.actions.menus["&View"].addAction(window.views_dock.toggleViewAction())
    from app.gui.document_queue_view import install_document_queue_view

    window.document_queue = install_document_queue_view(window, window.runs, window.actions.menus["&View"])
    window.queue_dock = window.document_queue.dock
    from app.gui.views.decoding_report import install_decoding_report

    window.decoding_report, window.acceptance_map = install_decoding_report(  # #37: the decoding lab
        window.views, window.page_view, window.settings, window.actions.menus["&View"])
    from app.gui.dock_policy import DecodingDockPolicy

    window.dock_policy = DecodingDockPolicy(window.views_dock, window.actions.toolbar, window.decoder, window)
    window.statusBar().showMessage("Ready")


def _beside_phase(window, text: str) -> None:
    """While a run is on, a status message goes beside the phase instead of hiding it for seconds."""
    if text and window.progress.active:
        window.progress.show_note(text)
        window.statusBar().clearMessage()


def restore_geometry(window) -> bool:
    """Size, docks and panes as the person left them; False when nothing was saved (first start)."""
    geometry, state = window.settings.get("window_geometry"), window.settings.get("window_state")
    if geometry:
        window.restoreGeometry(QByteArray.fromBase64(geometry.encode("ascii")))
    if state:
        window_state, _, panes = state.partition(";")
        window.restoreState(QByteArray.fromBase64(window_state.encode("ascii")))
        window.splitter.restoreState(QByteArray.fromBase64(panes.encode("ascii")))
    return bool(state)


def save_geometry(window) -> None:
    b64 = lambda data: bytes(data.toBase64()).decode("ascii")  # noqa: E731
    window.settings.set("window_geometry", b64(window.saveGeometry()))
    window.settings.set("window_state", f"{b64(window.saveState())};{b64(window.splitter.saveState())}")
