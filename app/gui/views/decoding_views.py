"""`DecodingViews`: the rounds view, the R-SWA window view, the A/B diff and the playback bar in one widget the main
window docks.

Feeding: `feed(event)` takes any app.core.record.events event (unknown ones are ignored), updates the two models at
once (cheap bookkeeping) and marks the views dirty; a frame timer (≤ 60 Hz) brings the widgets up to date and
paints. So a worker streaming 10,000 tokens, or a replay re-feeding them in one go, never paints more than 60
frames a second and never creates a widget per token.

Recording: every event fed live is kept in memory (with its arrival time) so the playback bar can scrub the run
afterwards, and `save_recording(path)` writes it as a trace file. A replay (`load_trace`) drives the same `feed`,
so a live run and a replayed trace end in the same state.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QFrame, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from app.core.record.events import Event, PrefixLaid, RunStarted, WindowStepped
from app.core.record.trace import write_trace
from app.gui.views.ab_view import ABView
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
    round_selected = Signal(str, int, int)  # region id, char start, char end (of the round's text in the region)
    window_span_changed = Signal(str, int, int)  # region id, char span of the text inside the R-SWA window

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rounds_model = RoundsModel()
        self.window_model = WindowModel()
        self.rounds_view = RoundsView(self.rounds_model)
        self.window_view = WindowView(self.window_model)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.rounds_view, "Acceptance rounds")
        self.tabs.addTab(self.window_view, "R-SWA window")
        self.ab_view = ABView()  # two decodes of the same regions side by side
        self.ab_view.current_events = lambda: self.recording
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

        self.recording: list[Event] = []
        self.recording_times: list[float] = []
        self._t0: float | None = None
        self._following_live = True  # live events are applied as they come (False while scrubbing a live run)
        self._from_player = False
        self._seeking = False
        self._external_sink: Callable[[Event], None] | None = None
        self._external_reset: Callable[[], None] | None = None
        self._auto_kind: str | None = None
        self._dirty = False
        self._bar_dirty = False
        self._last_span: tuple[str, int, int] | None = None
        self.frames = 0  # frames rendered (tests and the benchmark read it)

        self._frame_timer = QTimer(self)
        self._frame_timer.setInterval(FRAME_MS)
        self._frame_timer.timeout.connect(self._on_frame)
        self.rounds_view.round_selected.connect(self.round_selected)
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

    # feeding ----------------------------------------------------------------------------------------------------
    def feed(self, event: Event) -> None:
        """Take one event (live or replayed); ignores events these views do not show."""
        if not isinstance(event, Event):
            return
        if not self._from_player:  # a live event: keep it for scrubbing / saving
            if isinstance(event, RunStarted):  # a live run takes over from whatever was shown or replayed
                if self.recording:
                    self.player.pause()
                    self._reset_state()
                    self._new_recording()
                self._following_live = True
            now = time.perf_counter()
            if self._t0 is None:
                self._t0 = now
            self.recording.append(event)
            self.recording_times.append(round(now - self._t0, 6))
            self._bar_dirty = True  # the playback bar catches up once a frame, not once an event
            if not self._following_live:
                self._mark_dirty()
                return
            self.player.position = len(self.recording)
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
        span = (s.region_id, a, b)
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

    def _new_recording(self) -> None:
        self.recording = []
        self.recording_times = []
        self._t0 = None
        self._attach_player_to_recording()

    def reset(self) -> None:
        """Forget the run: views, models and the in-memory recording (a new document or run begins)."""
        if self._seeking or self._from_player:  # the main window resetting itself during a scrub
            self._reset_state()
            return
        self.player.pause()
        self._reset_state()
        self._following_live = True
        self._new_recording()

    # playback ---------------------------------------------------------------------------------------------------
    def _attach_player_to_recording(self) -> None:
        self._external_sink = None
        self._external_reset = None
        self.player.load(self.recording, self.recording_times, sink=self._player_sink, reset_sink=self._player_reset, position=len(self.recording))

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
        self.player.pause()
        self._reset_state()
        self.recording = list(events)
        self.recording_times = list(times) if times is not None else [0.0] * len(self.recording)
        self._t0 = None
        self._following_live = False
        self.player.load(self.recording, self.recording_times, sink=self._player_sink, reset_sink=self._player_reset, position=0)
        self._external_sink = sink
        self._external_reset = reset_sink
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
