"""The acceptance-rounds view (GravityOCR self-speculative decoding, DESIGN §3): `RoundsView` composes the round
strip (app.gui.views.round_strip), the history, the tinted text and the statistics (app.gui.views.round_panels),
with the region chooser and the follow-live switch.

Everything reads `RoundsModel` (app.gui.views.models); nothing here decodes or keeps its own copy of the run.
"""
from __future__ import annotations


from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.gui.views.models import RegionRounds, RoundRecord, RoundsModel, engine_hint
from app.gui.views.round_panels import RoundHistory, StatsPanel, TintedText
from app.gui.views.round_strip import RoundStrip

__all__ = ["EMPTY_HINT", "RoundHistory", "RoundStrip", "RoundsView", "StatsPanel", "TintedText"]

EMPTY_HINT = (
    "No draft/verify rounds yet.\nThe self-speculative engines (GravityOCR, the built-in model) show each round "
    "here as it happens;\nopen a trace file to replay a recorded run."
)


class RoundsView(QWidget):
    """The rounds tab: region chooser, strip, history, tinted text and statistics, all from one RoundsModel."""

    round_selected = Signal(str, int, int)  # region id, char start, char end

    def __init__(self, model: RoundsModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.shown_region: str | None = None
        self.selected: int | None = None
        self._synced_version = -1
        self.region_box = QComboBox()
        self.region_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.region_box.setToolTip("Region whose rounds are shown")
        self.follow_box = QCheckBox("Follow live")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Show the newest round of the region being decoded")
        self.hint = QLabel(EMPTY_HINT)
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.strip = RoundStrip()
        self.history = RoundHistory()
        self.text = TintedText()
        self.stats = StatsPanel()

        top = QHBoxLayout()
        top.addWidget(QLabel("Region"))
        top.addWidget(self.region_box)
        top.addStretch(1)
        top.addWidget(self.follow_box)
        body = QSplitter(Qt.Orientation.Horizontal)  # side by side: the dock is usually wide and short
        body.addWidget(self.history)
        body.addWidget(self.text)
        body.addWidget(self.stats)
        body.setStretchFactor(1, 1)
        body.setSizes([220, 560, 400])
        body.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.hint)
        lay.addWidget(self.strip)
        lay.addWidget(body, 1)

        self.region_box.activated.connect(self._region_chosen)
        self.follow_box.toggled.connect(self._follow_toggled)
        self.history.round_clicked.connect(self.select_round)
        self.text.round_clicked.connect(self.select_round)
        self._set_empty(True)

    # state ------------------------------------------------------------------------------------------------------
    @property
    def following(self) -> bool:
        return self.follow_box.isChecked()

    def region(self) -> RegionRounds | None:
        return self.model.regions.get(self.shown_region) if self.shown_region else None

    def _set_empty(self, empty: bool) -> None:
        if empty:
            text = engine_hint(self.model.engine, "rounds") or EMPTY_HINT
            if self.hint.text() != text:
                self.hint.setText(text)
        self.hint.setVisible(empty)
        self.strip.setVisible(not empty)

    def reset(self) -> None:
        self.shown_region = None
        self.selected = None
        self._synced_version = -1
        self.region_box.clear()
        self.strip.show_round(None)
        self.history.select(None)
        self.history.sync(None, follow=True)
        self.text.clear_text()
        self.stats.sync(None, None)
        self._set_empty(True)

    def on_round(self, rec: RoundRecord) -> None:
        """A new round arrived (called at feed time, before the frame flush)."""
        if self.following and (self.shown_region in (None, rec.region_id)):
            self.shown_region = rec.region_id
            self.selected = None
            self.strip.offer_round(rec)

    def refresh(self) -> None:
        """Bring the widgets up to the model (once per frame at most)."""
        if self._synced_version == self.model.version:
            return
        self._synced_version = self.model.version
        if self.following and self.model.current and self.model.current != self.shown_region:
            self.shown_region = self.model.current
            self.selected = None
            reg = self.region()
            self.strip.show_round(reg.rounds[-1] if reg and reg.rounds else None, animate=False)
        ids = [rid for rid, reg in self.model.regions.items() if reg.rounds]
        if [self.region_box.itemData(i) for i in range(self.region_box.count())] != ids:
            self.region_box.blockSignals(True)
            self.region_box.clear()
            for rid in ids:
                self.region_box.addItem(rid, rid)
            self.region_box.blockSignals(False)
        if self.shown_region is not None:
            i = self.region_box.findData(self.shown_region)
            if i >= 0 and i != self.region_box.currentIndex():
                self.region_box.setCurrentIndex(i)
        reg = self.region()
        self._set_empty(reg is None or not reg.rounds)
        self.history.sync(reg, follow=self.following)
        self.text.sync(reg)
        self.stats.sync(reg, self.model.baseline_tps)

    def show_region(self, region_id: str) -> None:
        """Show one region's rounds; a region other than the one being decoded stops following the live run."""
        if region_id != self.model.current and self.following:
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)
            self.follow_box.blockSignals(False)
        self.shown_region = region_id
        self.selected = None
        self.history.select(None)
        self._synced_version = -1
        self.refresh()
        reg = self.region()
        self.strip.show_round(reg.rounds[-1] if reg and reg.rounds else None, animate=False)

    def select_round(self, index: int) -> None:
        """Select round `index` of the shown region: strip, history row, text span; emits round_selected."""
        reg = self.region()
        if reg is None or not (0 <= index < len(reg.rounds)):
            return
        self.refresh()
        rec = reg.rounds[index]
        self.selected = index
        if index < len(reg.rounds) - 1 and self.following:
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)  # looking at the past: stop jumping to new rounds
            self.follow_box.blockSignals(False)
        self.strip.show_round(rec)
        self.history.select(index)
        self.text.sync(reg)
        self.text.highlight(rec.start, rec.end)
        self.round_selected.emit(rec.region_id, rec.start, rec.end)

    def _region_chosen(self, i: int) -> None:
        rid = self.region_box.itemData(i)
        if rid and rid != self.shown_region:
            self.show_region(rid)

    def _follow_toggled(self, on: bool) -> None:
        if on:
            self.selected = None
            self.history.select(None)
            self.text.setExtraSelections([])
            if self.model.current:
                self.show_region(self.model.current)

    def tick(self) -> bool:
        return self.strip.tick()
