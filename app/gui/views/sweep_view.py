"""The block-size sweep in the window: pick a decoded region (or a whole page) of the run shown, run it again at
B ∈ {4, 8, 16, 32, 64} and autoregressively (app.core.engines.block_sweep), and see TPF, forwards and decoder time
against B, whether every B wrote AR's tokens (a B that changed a token is shown as a decoder bug, in red) and the
fastest B per region kind, which "Use B=…" makes the engine option (Preferences → Decoding → block size).

The sweep decodes on its own worker thread with its own engine (opened once, kept for the next sweep), the run's
local self-speculative engine or the built-in one; the window's run lane is not used, so sweep while no run is
going. What must never live here: the sweep's arithmetic (core), painting charts (report_charts.py).
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.base.cancel import CancelToken
from app.core.engines.block_sweep import AR, BLOCK_SIZES, SweepResult
from app.core.record.acceptance import AcceptanceReport
from app.core.record.events import Event, LayoutDone
from app.gui.views.report_charts import LineChart

SELFSPEC_ENGINES = {"builtin": "builtin", "builtin-ar": "builtin", "gravity": "gravity", "gravity-ar": "gravity"}


class SweepWorker(QObject):
    progressed = Signal(int, int)  # done, total
    finished = Signal(object)  # SweepResult
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.engines: dict[str, object] = {}
        self.cancel = CancelToken()
        self.thread: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self, engine_name: str, document: str, regions: list[dict], dpi: float, region_ids: list[str],
              blocks: Sequence[int], reps: int = 1) -> None:
        self.cancel = CancelToken()
        self.thread = threading.Thread(target=self._run, name="block-sweep", daemon=True,
                                       args=(engine_name, document, regions, region_ids, tuple(blocks), reps))
        self.thread.start()

    def _run(self, engine_name, document, regions, region_ids, blocks, reps) -> None:
        try:
            from app.core.document import open_document
            from app.core.engines import open_engine
            from app.core.engines.block_sweep import items_from_layout, sweep

            engine = self.engines.get(engine_name)
            if engine is None:
                engine = self.engines[engine_name] = open_engine(engine_name, device="cpu")
            items = items_from_layout(open_document(document), regions, engine.input_dpi, region_ids)
            if not items:
                raise ValueError("no decodable region chosen")
            result = sweep(engine, items, blocks, reps=reps, cancel=self.cancel,
                           on_point=lambda _p, done, total: self.progressed.emit(done, total))
            self.finished.emit(result)
        except Exception as exc:  # noqa: BLE001 - a person reads it in the pane
            self.failed.emit(f"{type(exc).__name__}: {exc}")


class SweepView(QWidget):
    block_size_chosen = Signal(int)

    def __init__(self, recording: Callable[[], Sequence[Event]], set_block_size: Callable[[int], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweep_view")
        self.recording = recording
        self.set_block_size = set_block_size
        self.report = AcceptanceReport()
        self.result: SweepResult | None = None
        self.worker = SweepWorker()
        self.worker.progressed.connect(lambda d, t: self.status.setText(f"sweeping… {d}/{t} decodes"))
        self.worker.finished.connect(self.show_result)
        self.worker.failed.connect(lambda msg: self._done(f"sweep failed: {msg}"))
        self.target = QComboBox()
        self.target.setObjectName("sweep_target")
        self.run_button = QPushButton(f"Sweep B ∈ {{{', '.join(map(str, BLOCK_SIZES))}}}")
        self.run_button.setObjectName("run_sweep")
        self.run_button.clicked.connect(self.start)
        self.use_button = QPushButton("Use B=…")
        self.use_button.setObjectName("use_block_size")
        self.use_button.setEnabled(False)
        self.use_button.clicked.connect(self._use)
        self.status = QLabel("Block-size sweep: decode regions again at each B, against AR.")
        self.status.setWordWrap(True)
        self.verdict = QLabel()
        self.verdict.setObjectName("sweep_verdict")
        self.verdict.setWordWrap(True)
        self.chart = LineChart()
        row = QHBoxLayout()
        row.addWidget(QLabel("Sweep:"))
        row.addWidget(self.target, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.use_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 6, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.chart)
        lay.addWidget(self.verdict)

    def set_report(self, report: AcceptanceReport) -> None:
        """The run's decoded regions (and its pages) become the choices."""
        self.report = report
        keep = self.target.currentData()
        self.target.clear()
        for page in sorted({r.page for r in report.regions}):
            self.target.addItem(f"whole page {page + 1}", [r.region_id for r in report.regions if r.page == page])
        for r in report.regions:
            self.target.addItem(f"{r.region_id} ({r.kind}, TPF {r.tpf:.2f})", [r.region_id])
        if keep is not None:
            i = self.target.findData(keep)
            self.target.setCurrentIndex(max(0, i))
        self.run_button.setEnabled(bool(report.regions) and not self.worker.busy)

    def start(self, region_ids: list[str] | None = None, blocks: Sequence[int] = BLOCK_SIZES, reps: int = 1) -> None:
        ids = list(region_ids or self.target.currentData() or [])
        regions, dpi = [], 0.0
        for ev in self.recording():
            if isinstance(ev, LayoutDone):
                regions += ev.regions
                dpi = dpi or ev.dpi
        engine = SELFSPEC_ENGINES.get(self.report.engine, "builtin")
        if not ids or not self.report.document or not Path(self.report.document).is_file():
            self._done("the sweep needs the run's document on this machine and a decoded region")
            return
        self.run_button.setEnabled(False)
        self.use_button.setEnabled(False)
        self.status.setText(f"sweeping {len(ids)} region(s) on {engine} (CPU)…")
        self.worker.start(engine, self.report.document, regions, dpi, ids, blocks, reps)

    def _done(self, message: str) -> None:
        self.status.setText(message)
        self.run_button.setEnabled(bool(self.report.regions))

    def show_result(self, result: SweepResult) -> None:
        self.result = result
        rows = [s for s in result.summary() if s.block_size != AR]
        ar = next((s for s in result.summary() if s.block_size == AR), None)
        self.chart.set_series([s.block_size for s in rows], [
            ("TPF", [s.tpf for s in rows]), ("forwards", [float(s.forwards) for s in rows]),
            ("decoder ms", [s.decoder_ms or s.ms for s in rows])])
        best, per_kind = result.best(), result.best_by_kind()
        kinds = ", ".join(f"{k}: B={b}" for k, b in per_kind.items())
        ar_note = f"; AR {ar.decoder_ms or ar.ms:.0f} ms, {ar.forwards} forwards" if ar else ""
        self._done(f"fastest B={best} ({kinds}){ar_note}")
        bad = result.mismatches()
        if bad:
            where = ", ".join(f"{p.region_id} at B={p.block_size} (token {p.first_difference})" for p in bad)
            self.verdict.setStyleSheet("QLabel { color: white; background: #c62828; padding: 4px; }")
            self.verdict.setText(f"BUG: self-speculative decoding changed the output: {where}. It must equal AR.")
        else:
            self.verdict.setStyleSheet("QLabel { color: #2e7d32; }")
            self.verdict.setText(f"Every B wrote exactly AR's tokens ({len(result.points)} decodes checked).")
        self.use_button.setText(f"Use B={best}")
        self.use_button.setEnabled(bool(best))

    def _use(self) -> None:
        if self.result is not None and self.result.best():
            self.set_block_size(self.result.best())
            self.block_size_chosen.emit(self.result.best())
            self.status.setText(self.status.text() + f" — block size {self.result.best()} set for the next runs")
