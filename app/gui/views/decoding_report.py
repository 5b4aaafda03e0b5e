"""The "Decoding report" pane (a tab of the Decoding dock): for the run shown (live or a replayed trace) the document
strip, each region's TPF, and where drafts fail — acceptance by region kind, by token class and by position in the
block — as small charts, with an export of the same report `python -m app report` writes (HTML, PNG, JSON); below,
the block-size sweep (app.gui.views.sweep_view). The figures come from the recorded events alone
(app.core.record.acceptance), refreshed while the pane is shown.

What must never live here: computing the figures (core), decoding (the sweep's worker does it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.record.acceptance import AcceptanceReport, analyse
from app.core.record.events import Event
from app.gui.views.report_charts import BarChart, PageStrip
from app.gui.views.sweep_view import SweepView


class DecodingReportView(QWidget):
    exported = Signal(str)  # the folder the report was written to

    def __init__(self, recording: Callable[[], Sequence[Event]], set_block_size: Callable[[int], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("decoding_report")
        self.recording = recording
        self.report = AcceptanceReport()
        self._seen = -1
        self.summary = QLabel("No decoded region yet: run a document or replay a trace.")
        self.summary.setWordWrap(True)
        self.strip = PageStrip()
        self.by_kind = BarChart("Draft acceptance by region kind", with_tpf=True)
        self.by_class = BarChart("… by token class")
        self.by_position = BarChart("… by position in the block")
        self.rejected = QLabel()
        self.rejected.setWordWrap(True)
        self.export_button = QPushButton("Export report…")
        self.export_button.setObjectName("export_report")
        self.export_button.clicked.connect(self._export_clicked)
        self.sweep = SweepView(recording, set_block_size)
        head = QHBoxLayout()
        head.addWidget(self.summary, 1)
        head.addWidget(self.export_button)
        charts = QHBoxLayout()
        left = QVBoxLayout()
        left.addWidget(self.by_kind)
        left.addWidget(self.by_class)
        left.addStretch(1)
        charts.addLayout(left, 1)
        right = QVBoxLayout()
        right.addWidget(self.by_position)
        right.addStretch(1)
        charts.addLayout(right, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(head)
        lay.addWidget(self.strip)
        lay.addLayout(charts)
        lay.addWidget(self.rejected)
        lay.addWidget(self.sweep)
        self._timer = QTimer(self, interval=500)  # a live run's regions finish one by one
        self._timer.timeout.connect(self.refresh)
        self._timer.start()

    def refresh(self, force: bool = False) -> None:
        events = self.recording()
        if not force and (len(events) == self._seen or not self.isVisible()):
            return
        self._seen = len(events)
        self.show_report(analyse(events))

    def show_report(self, report: AcceptanceReport) -> None:
        self.report = report
        if report.regions:
            tokens, forwards = sum(r.tokens for r in report.regions), sum(r.forwards for r in report.regions)
            self.summary.setText(f"{Path(report.document).name or 'run'} · {report.engine} · B={report.block_size} · "
                                 f"{len(report.regions)} decoded regions · TPF {tokens / max(1, forwards):.2f}")
        else:
            self.summary.setText("No decoded region yet: run a document or replay a trace.")
        self.strip.set_pages([(p, report.page_tpf(p)) for p in sorted(report.pages)], report.block_size)
        self.by_kind.set_rows(report.by_kind)
        self.by_class.set_rows(report.by_class)
        self.by_position.set_rows(report.by_position)
        rejected = ", ".join(f"{t!r}×{n}" for t, n in report.rejected_texts.items())
        self.rejected.setText(f"Most often rejected drafts: {rejected}" if rejected else "")
        self.sweep.set_report(report)
        self.export_button.setEnabled(bool(report.regions))

    def export_to(self, folder: str | Path) -> list[Path]:
        """The same files as `python -m app report TRACE --out FOLDER`."""
        from app.core.record.acceptance_html import write_report

        written = write_report(self.report, Path(folder))
        self.exported.emit(str(folder))
        return written

    def _export_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export the decoding report to")
        if folder:
            self.export_to(folder)


def install_decoding_report(views, page_view, settings, view_menu):
    """The report pane as a tab of the Decoding views and the acceptance map over the page view, its toggle in the
    View menu; "Use B=…" sets the `block_size` option. Returns (report pane, acceptance map)."""
    from app.gui.views.acceptance_map import AcceptanceMap

    pane = DecodingReportView(lambda: views.recording, lambda b: settings.set("block_size", int(b)))
    from PySide6.QtWidgets import QFrame, QScrollArea

    scroll = QScrollArea()  # its charts' height must not squeeze the dock's other tabs at 1280x800
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(pane)
    views.tabs.addTab(scroll, "Decoding report")
    pane.tab = scroll  # what the tab bar shows: the pane in its scroll area
    views.tabs.currentChanged.connect(lambda _i: pane.refresh(force=True) if pane.isVisible() else None)
    amap = AcceptanceMap(page_view)
    view_menu.addAction(amap.action)
    return pane, amap
