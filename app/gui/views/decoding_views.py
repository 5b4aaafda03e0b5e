"""`DecodingViews`: the rounds view, the R-SWA window view, the A/B diff and the playback bar in one widget the main
window docks.

Documents: a region is known by (document, region id) here, as everywhere: region ids repeat across documents. The
views keep each document's latest run apart (app.gui.views.decode_store: bounded to the last few documents read)
and show the one the window shows (`show_document`); live events go to the document of the run that sent them
(its RunStarted names it), shown or not. The signals name the document with the region.

Feeding: `feed(event)` takes any app.core.record.events event (unknown ones are ignored), updates that document's
two models at once (cheap bookkeeping) and marks the views dirty; a frame timer (≤ 60 Hz) brings the widgets up to
date and paints. So a worker streaming 10,000 tokens, or a replay re-feeding them in one go, never paints more than
60 frames a second and never creates a widget per token.

Recording: every event fed live is kept in memory (with its arrival time), per document, so the playback bar can
scrub the run afterwards, and `save_recording(path)` writes the shown one as a trace file. A replay (`load_trace`)
drives the same `feed`, so a live run and a replayed trace end in the same state.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from app.core.record.events import (Event, PrefixLaid, RegionStarted, RunCancelled, RunFinished, RunStarted,
                                    WindowStepped)
from app.core.record.line_readings import document_span
from app.core.record.trace import write_trace
from app.gui.views.ab_view import ABView
from app.gui.views.decode_store import (PLAYBACK_REGIONS, DecodeStore, DocumentDecode, document_key,
                                        trace_document)
from app.gui.views.playback import PlaybackBar, TracePlayer
from app.gui.views.rounds_state import RoundRecord, RoundsModel
from app.gui.views.rounds_view import RoundsView
from app.gui.views.window_state import WindowModel
from app.gui.views.window_view import WindowView

FRAME_MS = 16  # ≤ 60 frames a second
# keys while the decoding views have focus (the About box lists them too)
PLAYBACK_KEYS = {"Space": ("toggle", "Play / pause the replay"), "Right": ("step", "Step one event"),
                 "Home": ("start", "Back to the start of the replay"), "End": ("end", "Jump to the end")}


class DecodingViews(QWidget):
    round_selected = Signal(str, str, int, int)  # document, region id, char start, char end (of the round's text)
    window_span_changed = Signal(str, str, int, int)  # document, region id, char span inside the R-SWA window

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = DecodeStore()
        self.shown: DocumentDecode = self.store.open("")  # the document the views show
        self.live: DocumentDecode | None = None  # the document live events go to (its run's RunStarted)
        self._pinned = False  # the window said which document it shows (alone, the views show the run fed)
        self.playback_regions = PLAYBACK_REGIONS  # regions of a document whose rounds are kept (the window's setting)
        self.rounds_view = RoundsView(self.shown.rounds)
        self.window_view = WindowView(self.shown.window)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.rounds_view, "Acceptance rounds")
        self.tabs.addTab(self.window_view, "R-SWA window")
        self.ab_view = ABView()  # two decodes of the same regions side by side
        self.ab_view.current_events = lambda: self.recording
        self.ab_view.current_document = lambda: self.shown.path
        ab_scroller = QScrollArea()  # its own scrolling: the tabs ask for no more height than the rounds view
        ab_scroller.setWidgetResizable(True)
        ab_scroller.setFrameShape(QFrame.Shape.NoFrame)
        ab_scroller.setWidget(self.ab_view)
        self.tabs.addTab(ab_scroller, "A/B diff")
        self.player = TracePlayer(self)
        self.playback_bar = PlaybackBar(self.player)
        # the views keep the height they need to paint; a dock shorter than that scrolls them (the playback bar
        # stays in sight), so the whole widget asks for little height
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.scroller.setWidget(self.tabs)
        self.scroller.setMinimumHeight(60)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.scroller, 1)
        lay.addWidget(self.playback_bar)

        self._following_live = True  # live events are applied as they come (False while scrubbing a live run)
        self._from_player = False
        self._seeking = False
        self._external_sink: Callable[[Event], None] | None = None
        self._external_reset: Callable[[], None] | None = None
        self._auto_kind: str | None = None
        self._dirty = False
        self._bar_dirty = False
        self._last_span: tuple[str, str, int, int] | None = None
        self.frames = 0  # frames rendered (tests and the benchmark read it)

        self._frame_timer = QTimer(self)
        self._frame_timer.setInterval(FRAME_MS)
        self._frame_timer.timeout.connect(self._on_frame)
        self.rounds_view.round_selected.connect(self._round_chosen)
        self.rounds_view.round_selected.connect(self._wake)  # the strip animates the selected round: keep ticking
        self.tabs.currentChanged.connect(lambda _i: self._mark_dirty())
        self.player.state_changed.connect(self._player_state)
        self.player.speed_changed.connect(self._player_speed)
        self.playback_bar.save_requested.connect(self.save_recording)
        self._attach_player_to_recording()
        self.player.set_speed(1.0)  # a replay plays at the recorded pace unless the person picks another
        # keys while the views have focus: Space play/pause, → step, Home start, End jump to the end
        slots = {"toggle": self.player.toggle, "step": self.player.step, "start": lambda: self.player.seek(0),
                 "end": self.player.play_all}
        for key, (what, _title) in PLAYBACK_KEYS.items():
            slot = slots[what]
            sc = QShortcut(QKeySequence(key), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(slot)

    # documents --------------------------------------------------------------------------------------------------
    @property
    def rounds_model(self) -> RoundsModel:
        return self.shown.rounds

    @property
    def window_model(self) -> WindowModel:
        return self.shown.window

    @property
    def recording(self) -> list[Event]:
        """The shown document's recorded events (its live run, or the trace loaded)."""
        return self.shown.events

    @property
    def recording_times(self) -> list[float]:
        return self.shown.times

    @property
    def document(self) -> str:
        """The document shown ("" before any)."""
        return self.shown.path

    def show_document(self, path: str) -> None:
        """The window shows `path`: the views show that document's latest run (empty when it has none)."""
        self._pinned = True
        if document_key(path) == self.shown.key and self.shown.path:
            return
        dropped = document_key(path) in self.store.dropped
        doc = self.store.get(path) or self.store.open(path, pinned=(self.shown, self.live))
        if not doc.path:
            doc.path = path
        self._leave()
        self._enter(doc, dropped=dropped)

    def forget_document(self, path: str) -> None:
        """The document was closed: its run goes from the views."""
        doc = self.store.forget(path)
        if doc is None:
            return
        if doc is self.live:
            self.live = None
        if doc is self.shown:
            self.player.pause()
            self._enter(self.store.open(""))

    def _leave(self) -> None:
        """Remember where the shown document stood (playback position, region) before another is shown."""
        old = self.shown
        self.player.pause()
        old.position = self.player.position
        old.following_live = self._following_live
        old.shown_region = self.rounds_view.shown_region
        if old is self.live and not old.ended and not old.following_live and old.sink is None:
            old.catch_up()  # scrubbed back in a run still going, then left: its models take what is recorded

    def _enter(self, doc: DocumentDecode, *, dropped: bool = False) -> None:
        self.shown = doc
        self.rounds_view.set_model(doc.rounds, region=doc.shown_region)
        self.window_view.set_model(doc.window)
        note = (f"The rounds of {doc.name} were not kept: the dock keeps the latest run of the last "
                f"{self.store.keep} documents read. File → Open trace replays a recorded run." if dropped else "")
        self.rounds_view.set_document(doc.name, doc.path, note)
        self.window_view.set_document(doc.name, doc.path, note)
        self.window_view.set_engine(doc.rounds.engine)
        self._following_live = doc.following_live
        self._auto_kind = None
        self._last_span = None
        self.player.load(doc.events, doc.times, sink=self._player_sink, reset_sink=self._player_reset,
                         position=doc.position)
        self._external_sink, self._external_reset = doc.sink, doc.reset_sink
        self._bar_dirty = True
        self._mark_dirty()
        if self.tabs.currentWidget() in (self.rounds_view, self.window_view):  # the tab this document fills
            if any(reg.rounds for reg in doc.rounds.regions.values()):
                self._auto_tab("rounds")
            elif doc.window.streams:
                self._auto_tab("window")

    def document_span(self, region_id: str, start: int, end: int) -> tuple[int, int]:
        """A span of the shown document's region in the decoder's output (a round's characters) as a span of the
        text the region got (app.core.record.line_readings): the same where the decoder's line was kept, the whole
        line where the document got another reading."""
        reg = self.shown.rounds.regions.get(region_id)
        return document_span(reg.readings, start, end) if reg is not None and reg.readings else (start, end)

    def _trimmed(self, doc: DocumentDecode) -> None:
        """Older regions of `doc` left the recording (memory bound): the shown views and the bar follow."""
        if doc is self.shown:
            self.player.position = len(doc.events)
            self.rounds_view.invalidate()
            self.window_view.invalidate()
            self._bar_dirty = True

    def _round_chosen(self, region_id: str, start: int, end: int) -> None:
        self.round_selected.emit(self.shown.path, region_id, start, end)

    def _live_run(self, path: str) -> DocumentDecode:
        """A live run of `path` began: its document's last run is replaced by this one."""
        doc = self.store.open(path, pinned=(self.shown, self.live))
        if not doc.path:
            doc.path = path
        if doc is not self.shown and not self._pinned:  # the views alone show the run they are fed
            self._leave()
            self._enter(doc)
        if doc.has_content() or doc.sink is not None:
            if doc is self.shown:
                self.player.pause()
                self._reset_state()
            doc.clear()
            if doc is self.shown:
                self._attach_player_to_recording()
        self._following_live = True if doc is self.shown else self._following_live
        self.live = doc
        return doc

    # feeding ----------------------------------------------------------------------------------------------------
    def feed(self, event: Event) -> None:
        """Take one event (live or replayed); ignores events these views do not show."""
        if not isinstance(event, Event):
            return
        if self._from_player:  # a replay through the window: the shown document's events, applied
            self._apply(event)
            return
        doc = self._live_run(event.document) if isinstance(event, RunStarted) else (self.live or self.shown)
        now = time.perf_counter()  # a live event: keep it for scrubbing / saving
        if doc.t0 is None:
            doc.t0 = now
        doc.record(event, round(now - doc.t0, 6))
        doc.ended = isinstance(event, (RunFinished, RunCancelled)) or doc.ended
        if isinstance(event, RegionStarted) and doc.following_live and doc.trim(self.playback_regions):
            self._trimmed(doc)
        if doc is not self.shown:  # a document not shown: its models only (shown when the person selects it)
            doc.rounds.feed(event)
            doc.window.feed(event)
            doc.position = len(doc.events)
            return
        self._bar_dirty = True  # the playback bar catches up once a frame, not once an event
        if not self._following_live:
            self._mark_dirty()
            return
        self.player.position = len(doc.events)
        self._apply(event)

    def _apply(self, event: Event) -> None:
        if isinstance(event, RunStarted) and (self.rounds_model.regions or self.window_model.streams):
            self._reset_state()
        rec = self.rounds_model.feed(event)
        self.window_view.set_engine(self.rounds_model.engine)
        if isinstance(rec, RoundRecord):
            self.rounds_view.on_round(rec)
            self._auto_tab("rounds")
        if self.window_model.feed(event) and isinstance(event, (PrefixLaid, WindowStepped)):
            self._auto_tab("window")
        self._mark_dirty()

    def _auto_tab(self, kind: str) -> None:
        """Show the view that the arriving events are about (only when the kind changes: never fight the user)."""
        if kind != self._auto_kind:
            self._auto_kind = kind
            self.tabs.setCurrentWidget(self.rounds_view if kind == "rounds" else self.window_view)

    def _wake(self, *_args) -> None:
        """Run the frame timer without new state (an animation started outside a feed: a selected round)."""
        if not self._frame_timer.isActive():
            self._frame_timer.start()

    def _mark_dirty(self) -> None:
        self._dirty = True
        if not self._frame_timer.isActive():
            self._frame_timer.start()

    # frames -----------------------------------------------------------------------------------------------------
    def _on_frame(self) -> None:
        animating = self.render_frame()
        if not self._dirty and not animating:
            self._frame_timer.stop()

    def render_frame(self, *, paint_now: bool = False) -> bool:
        """Bring the shown view up to its model and schedule (or, for the benchmark, do) the paint.
        Returns whether an animation is still running."""
        current = self.tabs.currentWidget()
        if self._dirty or paint_now:
            self._dirty = False
            if current is self.rounds_view:
                self.rounds_view.refresh()
            else:
                self.window_view.refresh()
            self._emit_window_span()
            if self._bar_dirty:
                self._bar_dirty = False
                self.player.position_changed.emit(self.player.position, self.player.total())
            self.frames += 1
        animating = self.rounds_view.tick() if current is self.rounds_view else False
        if paint_now:
            current.repaint()
        return animating

    def _emit_window_span(self) -> None:
        if not self.window_model.streams:
            return
        s = self.window_model.streams.get(self.window_model.current or "")
        if s is None or not s.output_len:
            return
        a, b = s.window_chars()
        span = (self.shown.path, s.region_id, a, b)
        if span != self._last_span:
            self._last_span = span
            self.window_span_changed.emit(*span)

    def flush(self) -> None:
        """Apply everything fed so far to the widgets now (tests; normally the frame timer does this)."""
        self._dirty = True
        self.rounds_view.invalidate()
        self.window_view.invalidate()
        self.rounds_view.refresh()
        self.window_view.refresh()
        self._dirty = False
        self._emit_window_span()

    # reset ------------------------------------------------------------------------------------------------------
    def _reset_state(self) -> None:
        self.rounds_model.reset()
        self.window_model.reset()
        self.rounds_view.reset()
        self.window_view.reset()
        self._auto_kind = None
        self._last_span = None
        self._mark_dirty()

    def reset(self) -> None:
        """Forget every run: views, models and the in-memory recordings (the shown document stays shown)."""
        if self._seeking or self._from_player:  # the main window resetting itself during a scrub
            self._reset_state()
            return
        self.player.pause()
        path = self.shown.path
        self.store.clear()
        self.live = None
        self._enter(self.store.open(path))
        self._reset_state()
        self._following_live = True

    # playback ---------------------------------------------------------------------------------------------------
    def _attach_player_to_recording(self) -> None:
        doc = self.shown
        self._external_sink = doc.sink
        self._external_reset = doc.reset_sink
        self.player.load(doc.events, doc.times, sink=self._player_sink, reset_sink=self._player_reset,
                         position=len(doc.events))

    def _player_sink(self, event: Event) -> None:
        self._from_player = True
        try:
            (self._external_sink or self._apply)(event)
        finally:
            self._from_player = False

    def _player_reset(self) -> None:
        self._seeking = True
        self._following_live = False
        try:
            self._reset_state()
            if self._external_reset is not None:
                self._external_reset()
        finally:
            self._seeking = False

    def _player_state(self, state: str) -> None:
        if state == "playing":
            self._following_live = False
        elif state == "finished":
            self._following_live = True  # caught up with the recording: live events apply again
        self._mark_dirty()

    def _player_speed(self, factor: float) -> None:
        # the strip's animation (~0.35 s) already outlasts a GPU round (~20-50 ms); slowed playback stretches
        # it gently so that at ×20 most rounds get their full sweep
        self.rounds_view.set_slow(max(1.0, factor / 4.0))

    def load_trace(
        self,
        events: Sequence[Event],
        times: Sequence[float] | None = None,
        *,
        sink: Callable[[Event], None] | None = None,
        reset_sink: Callable[[], None] | None = None,
        play: bool = True,
        speed: float | None = None,
    ) -> TracePlayer:
        """Replay a recorded run. `sink` (e.g. the main window's handle_event, which forwards to `feed`) receives
        every event; without one the events go to these views only. `reset_sink` is called before a scrub
        rebuilds the state from the first event."""
        self._leave()
        doc = self.store.open(trace_document(events), pinned=(self.shown, self.live))
        if doc is self.live:
            self.live = None  # a replay takes over from the live run of the same document
        doc.clear()
        doc.events = list(events)
        doc.times = list(times) if times is not None else [0.0] * len(doc.events)
        doc.following_live = False
        doc.sink, doc.reset_sink = sink, reset_sink
        self._enter(doc)
        self._reset_state()
        if speed is not None:
            self.player.set_speed(speed)
        if play:
            self.player.play()
        return self.player

    def save_recording(self, path: str | Path) -> Path:
        """Write the run shown (live recording or loaded trace) as a trace file."""
        return write_trace(path, self.recording, self.recording_times)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.player.pause()
        self._frame_timer.stop()
        super().closeEvent(event)
