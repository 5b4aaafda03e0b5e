"""The acceptance-rounds view (GravityOCR self-speculative decoding: docs/architecture.md, The self-speculative round):
`RoundsView` composes the round strip (app.gui.views.round_strip), the history, the tinted text, and beside them
the statistics (app.gui.views.round_panels), the reject inspector and the closest calls
(app.gui.views.inspector_view; docs/decoding-debugger.md), with the region chooser, the follow-live switch and the
tint switch (by round or by the verifier's probability).

Everything reads `RoundsModel` (app.gui.views.rounds_state); nothing here decodes or keeps its own copy of the run.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QHBoxLayout, QLabel, QStackedWidget, QToolButton,
                               QVBoxLayout, QWidget)

from app.gui.views.inspector_view import ClosestCalls, InspectorBars
from app.gui.views.live_text import TintedText
from app.gui.views.reading_text import caption
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
        # the right-hand panel: statistics, the reject inspector or the closest calls (switched in the top row, so
        # the view needs no more height than before)
        self.inspector, self.calls, self.side = InspectorBars(), ClosestCalls(), QStackedWidget()
        self.tint_box = QCheckBox("Tint by probability")
        self.tint_box.setToolTip("Tint each character by the verifier's probability of the token that wrote it "
                                 "(red: unsure) instead of by the round that confirmed it")
        self.text_caption = QLabel("Text")  # whose text the panel shows: the decoder's, or the document's
        self.text_caption.setObjectName("text_caption")
        self.text_caption.setWordWrap(True)
        text_panel = QWidget()
        column = QVBoxLayout(text_panel)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addWidget(self.text_caption)
        column.addWidget(text, 1)
        switches = QWidget()
        row = QHBoxLayout(switches)
        row.setContentsMargins(0, 0, 0, 0)
        self.side_buttons = QButtonGroup(switches)
        for i, (panel, title, tip) in enumerate((
                (stats, "Statistics", "TPF, acceptance by position, draft vs verify time"),
                (self.inspector, "Inspector", "Why a draft was rejected: click a cell of the round"),
                (self.calls, "Closest calls", "The region's rejections, smallest margin first"))):
            self.side.addWidget(panel)
            button = QToolButton(text=title, checkable=True, toolTip=tip, autoRaise=True)
            self.side_buttons.addButton(button, i)
            row.addWidget(button)
        self.side_buttons.button(0).setChecked(True)
        self.side_buttons.idClicked.connect(self.side.setCurrentIndex)
        self.side.currentChanged.connect(lambda i: self.side_buttons.button(i).setChecked(True))
        row.addSpacing(12)
        row.addWidget(self.tint_box)
        row.addWidget(follow)
        super().__init__(chooser_title="Region", chooser_tip="Region whose rounds are shown", empty_hint=EMPTY_HINT,
                         shows="rounds", headline=strip, panels=[history, text_panel, self.side], sizes=[200, 430, 560],
                         stretch=1, extra=switches, parent=parent)
        self.follow_box, self.strip, self.history, self.text, self.stats = follow, strip, history, text, stats
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Show the newest round of the region being decoded")
        self.tint_box.toggled.connect(self.text.set_by_probability)
        self.strip.slot_clicked.connect(self.inspect_slot)
        self.calls.call_chosen.connect(self.inspect)
        self.side.currentChanged.connect(lambda _i: self.calls.sync(self.region()) if self._calls_shown() else None)
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

    def invalidate(self) -> None:
        """The next `refresh` brings every widget up to the model, changed or not."""
        self._synced_version = -1

    def set_slow(self, factor: float) -> None:
        """Stretch the round strip's animation (slowed playback)."""
        self.strip.slow = factor

    def _calls_shown(self) -> bool:
        return self.side.currentWidget() is self.calls

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
        self.text_caption.setText(caption(None, False))
        self.stats.sync(None, None)
        self.inspector.clear()
        self.calls.sync(None)
        self._set_empty(True)

    def set_model(self, model: RoundsModel, *, region: str | None = None) -> None:
        """Show another document's rounds (`region`: the one the person was looking at there)."""
        self.model = model
        self.reset()
        if region not in model.regions:  # nothing looked at there yet: the region decoded last
            region = model.current
        if region is not None and region in model.regions:
            self.shown_region = region
            reg = self.region()
            self.strip.show_round(reg.rounds[-1] if reg and reg.rounds else None, animate=False)

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
        self.text_caption.setText(caption(reg, self.text.document_mode))
        self.stats.sync(reg, self.model.baseline_tps)
        if self._calls_shown():  # sorting every rejection: only while the list is on screen
            self.calls.sync(reg)

    def show_region(self, region_id: str) -> None:
        """Show one region's rounds; a region other than the one being decoded stops following the live run."""
        if region_id != self.model.current and self.following:
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)
            self.follow_box.blockSignals(False)
        self.shown_region = region_id
        self.selected = None
        self.history.select(None)
        self.inspector.clear()
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

    def inspect_slot(self, position: int) -> None:
        """Open slot `position` of the round in the strip in the inspector (a click on its cell)."""
        rec, reg = self.strip.record, self.region()
        if rec is None or reg is None or rec.region_id != reg.region_id:
            return
        self.inspect(rec.index, position)

    def inspect(self, index: int, position: int) -> None:
        """Select round `index` of the shown region and open its slot `position` in the inspector."""
        reg = self.region()
        if reg is None or not (0 <= index < len(reg.rounds)):
            return
        if self.following:  # inspecting the past: stop jumping to new rounds
            self.follow_box.blockSignals(True)
            self.follow_box.setChecked(False)
            self.follow_box.blockSignals(False)
        if self.selected != index:
            self.select_round(index)
        self.strip.show_round(reg.rounds[index], animate=False)
        self.inspector.show_slot(reg, reg.rounds[index], position)
        self.side.setCurrentWidget(self.inspector)

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
