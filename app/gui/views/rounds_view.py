"""The acceptance-rounds view (GravityOCR self-speculative decoding: docs/architecture.md, The self-speculative round):
`RoundsView` composes the round strip (app.gui.views.round_strip), the history, the tinted text and the statistics
(app.gui.views.round_panels), with the region chooser and the follow-live switch.

Everything reads `RoundsModel` (app.gui.views.rounds_state); nothing here decodes or keeps its own copy of the run.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QWidget

from app.gui.views.live_text import TintedText
from app.gui.views.round_panels import RoundHistory, StatsPanel
from app.gui.views.round_strip import RoundStrip
from app.gui.views.rounds_state import RegionRounds, RoundRecord, RoundsModel
from app.gui.views.view_frame import ViewFrame

__all__ = ["EMPTY_HINT", "RoundHistory", "RoundStrip", "RoundsView", "StatsPanel", "TintedText"]

EMPTY_HINT = (
    "No draft/verify rounds yet.\nThe self-speculative engines (GravityOCR, the built-in model) show each round "
    "here as it happens;\nopen a trace file to replay a recorded run."
)


class RoundsView(ViewFrame):
    """The rounds tab: region chooser, strip, history, tinted text and statistics, all from one RoundsModel."""

    round_selected = Signal(str, int, int)  # region id, char start, char end

    def __init__(self, model: RoundsModel, parent: QWidget | None = None) -> None:
        follow, strip, history, text, stats = QCheckBox("Follow live"), RoundStrip(), RoundHistory(), TintedText(), \
            StatsPanel()
        super().__init__(chooser_title="Region", chooser_tip="Region whose rounds are shown", empty_hint=EMPTY_HINT,
                         shows="rounds", headline=strip, panels=[history, text, stats], sizes=[200, 430, 560],
                         stretch=1, extra=follow, parent=parent)
        self.follow_box, self.strip, self.history, self.text, self.stats = follow, strip, history, text, stats
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Show the newest round of the region being decoded")
        self.model = model
        self.shown_region: str | None = None
        self.selected: int | None = None
        self._synced_version = -1
        self.region_box = self.chooser
        self.chooser.activated.connect(self._region_chosen)
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
        self.set_empty(empty, self.model.engine)
        if empty and self.model.server.regions:  # a remote run: what its servers said about their drafting
            self.hint.setText(self.model.server.text())

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
        self.set_choices([rid for rid, reg in self.model.regions.items() if reg.rounds], self.shown_region)
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
