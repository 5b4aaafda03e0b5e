"""Playing a recorded run back: `TracePlayer` (the clock) and `PlaybackBar` (its controls).

The player owns no view state. It hands events, in order, to a sink (the main window's `handle_event`, or the
decoding views' own `feed`) and, to go backwards, asks a reset callable to clear everything and then re-feeds
from the first event as fast as it can (views defer their drawing to the next frame, so re-feeding 10,000 events
costs only the models' bookkeeping).

Speeds: "fast" (as fast as the GUI thread digests them, in slices of a few milliseconds so the window stays
responsive), ×1 (the recorded timings), ×2 … ×20 slower. Gaps of more than a second in the recording are
shortened to one second (nobody wants to watch a model load).
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QSlider,
    QStyle,
    QToolButton,
    QWidget,
)

from app.core.record.events import Event, RoundVerified, TokensCommitted, WindowStepped

STEP_TYPES = (RoundVerified, WindowStepped, TokensCommitted)
SPEEDS: list[tuple[str, float]] = [("fast", 0.0), ("live ×1", 1.0), ("×2 slower", 2.0), ("×5 slower", 5.0), ("×10 slower", 10.0), ("×20 slower", 20.0)]
MAX_GAP_S = 1.0
MIN_STEP_S = 0.012  # a slowed step lasts at least this × the factor, so untimed traces still animate
SLICE_S = 0.008  # fast mode hands over events for this long per timer tick


class TracePlayer(QObject):
    """Plays `events` into `sink`. Index semantics: `position` events have been played (0 … len)."""

    position_changed = Signal(int, int)  # played, total
    state_changed = Signal(str)  # playing | paused | finished | empty
    speed_changed = Signal(float)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.events: Sequence[Event] = []
        self.times: Sequence[float] = []
        self.sink: Callable[[Event], None] = lambda _e: None
        self.reset_sink: Callable[[], None] = lambda: None
        self.position = 0
        self.speed = 0.0  # 0 = fast; otherwise the slow-down factor over the recorded timings
        self.playing = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        self._next_due = 0.0  # wall clock at which event `position` is due (slowed modes)

    # loading ----------------------------------------------------------------------------------------------------
    def load(
        self,
        events: Sequence[Event],
        times: Sequence[float] | None = None,
        *,
        sink: Callable[[Event], None] | None = None,
        reset_sink: Callable[[], None] | None = None,
        position: int = 0,
    ) -> None:
        """Take a run to play. `events`/`times` may be lists that keep growing (a live recording)."""
        self.pause()
        self.events = events
        self.times = times if times is not None else []
        if sink is not None:
            self.sink = sink
        if reset_sink is not None:
            self.reset_sink = reset_sink
        self.position = max(0, min(position, len(events)))
        self._emit_position()
        self.state_changed.emit("paused" if events else "empty")

    def total(self) -> int:
        return len(self.events)

    def _time(self, i: int) -> float:
        return self.times[i] if i < len(self.times) else (self.times[-1] if self.times else 0.0)

    # controls ---------------------------------------------------------------------------------------------------
    def set_speed(self, factor: float) -> None:
        self.speed = max(0.0, float(factor))
        self._rebase()
        self.speed_changed.emit(self.speed)

    def play(self) -> None:
        if self.position >= self.total():
            if not self.total():
                return
            self.seek(0)
        self.playing = True
        self._rebase()
        self.state_changed.emit("playing")
        self._timer.start(0)

    def pause(self) -> None:
        was = self.playing
        self.playing = False
        self._timer.stop()
        if was:
            self.state_changed.emit("paused")

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def step(self) -> int:
        """Play up to and including the next round/step event; returns how many events were played."""
        self.pause()
        n = 0
        while self.position < self.total():
            ev = self.events[self.position]
            self._play_one()
            n += 1
            if isinstance(ev, STEP_TYPES):
                break
        self._emit_position()
        return n

    def seek(self, index: int) -> None:
        """Jump to `index` played events: forwards by playing the gap, backwards by rebuilding from the start."""
        index = max(0, min(int(index), self.total()))
        if index < self.position:
            self.reset_sink()
            self.position = 0
        while self.position < index:
            self._play_one()
        self._rebase()
        self._emit_position()
        if self.position >= self.total() and not self.playing:
            self.state_changed.emit("finished")

    def play_all(self) -> None:
        """Play everything left now (tests, 'jump to end')."""
        self.seek(self.total())

    # clock ------------------------------------------------------------------------------------------------------
    def _play_one(self) -> None:
        ev = self.events[self.position]
        self.position += 1
        self.sink(ev)

    def _rebase(self) -> None:
        self._next_due = time.perf_counter()

    def _gap(self, i: int) -> float:
        """Seconds to wait before event i at ×1: the recorded gap, dead time shortened, untimed steps stretched."""
        if i <= 0:
            return 0.0
        gap = max(0.0, self._time(i) - self._time(i - 1))
        if isinstance(self.events[i], STEP_TYPES):
            gap = max(gap, MIN_STEP_S)
        return min(gap, MAX_GAP_S)

    def _tick(self) -> None:
        if not self.playing:
            return
        start = time.perf_counter()
        delay = 1
        if self.speed == 0.0:
            while self.position < self.total() and time.perf_counter() - start < SLICE_S:
                self._play_one()
        else:
            while self.position < self.total():
                now = time.perf_counter()
                if now < self._next_due:
                    delay = int((self._next_due - now) * 1000)
                    break
                self._play_one()
                if self.position < self.total():
                    self._next_due += self._gap(self.position) * self.speed
                if now - start > SLICE_S:
                    delay = 0
                    break
        self._emit_position()
        if self.position >= self.total():
            self.playing = False
            self.state_changed.emit("finished")
            return
        self._timer.start(max(0, min(delay, 250)))

    def _emit_position(self) -> None:
        self.position_changed.emit(self.position, self.total())


class PlaybackBar(QWidget):
    """Restart, play/pause, step, speed, a scrub slider over the run, and "save trace"."""

    save_requested = Signal(str)  # a path chosen by the person

    def __init__(self, player: TracePlayer, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.player = player
        style = self.style()
        self._icons = {
            "restart": style.standardIcon(QStyle.StandardPixmap.SP_MediaSkipBackward),
            "play": style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay),
            "pause": style.standardIcon(QStyle.StandardPixmap.SP_MediaPause),
            "step": style.standardIcon(QStyle.StandardPixmap.SP_MediaSkipForward),
            "end": style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward),
        }
        self.restart_button = QToolButton(icon=self._icons["restart"])
        self.restart_button.setToolTip("Back to the start of the run")
        self.play_button = QToolButton(icon=self._icons["play"])
        self.play_button.setToolTip("Play / pause the recorded run")
        self.step_button = QToolButton(icon=self._icons["step"])
        self.step_button.setToolTip("Step one round / one window step")
        self.end_button = QToolButton(icon=self._icons["end"])
        self.end_button.setToolTip("Jump to the end (and follow the live run again)")
        self.speed_box = QComboBox()
        for name, factor in SPEEDS:
            self.speed_box.addItem(name, factor)
        self.speed_box.setToolTip("Playback speed: as fast as possible, as recorded, or slowed down")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setToolTip("Scrub through the recorded run")
        self.label = QLabel("no run")
        self.label.setMinimumWidth(self.label.fontMetrics().horizontalAdvance("00,000 / 00,000 events") + 8)
        self.save_button = QToolButton(text="Save trace…")
        self.save_button.setToolTip("Write the events of this run to a trace file (JSON lines)")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        for w in (self.restart_button, self.play_button, self.step_button, self.end_button, self.speed_box):
            lay.addWidget(w)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.label)
        lay.addWidget(self.save_button)

        self._scrub_target: int | None = None
        self._scrub_timer = QTimer(self)
        self._scrub_timer.setSingleShot(True)
        self._scrub_timer.setInterval(60)
        self._scrub_timer.timeout.connect(self._apply_scrub)

        self.restart_button.clicked.connect(lambda: player.seek(0))
        self.play_button.clicked.connect(player.toggle)
        self.step_button.clicked.connect(player.step)
        self.end_button.clicked.connect(player.play_all)
        self.speed_box.currentIndexChanged.connect(lambda i: player.set_speed(self.speed_box.itemData(i)))
        self.slider.sliderMoved.connect(self._scrub)
        self.slider.sliderReleased.connect(self._apply_scrub)
        self.slider.actionTriggered.connect(self._slider_action)
        self.save_button.clicked.connect(self._ask_save)
        player.position_changed.connect(self._show_position)
        player.state_changed.connect(self._show_state)
        player.speed_changed.connect(self._show_speed)

    def _show_position(self, pos: int, total: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, total)
        if not self.slider.isSliderDown():
            self.slider.setValue(pos)
        self.slider.blockSignals(False)
        self.label.setText(f"{pos:,} / {total:,} events")

    def _show_state(self, state: str) -> None:
        self.play_button.setIcon(self._icons["pause" if state == "playing" else "play"])

    def _show_speed(self, factor: float) -> None:
        i = self.speed_box.findData(factor)
        if i >= 0 and i != self.speed_box.currentIndex():
            self.speed_box.blockSignals(True)
            self.speed_box.setCurrentIndex(i)
            self.speed_box.blockSignals(False)

    def _scrub(self, value: int) -> None:
        self._scrub_target = value
        if not self._scrub_timer.isActive():
            self._scrub_timer.start()

    def _slider_action(self, _action: int) -> None:  # page-step clicks on the groove
        if not self.slider.isSliderDown():
            self._scrub(self.slider.sliderPosition())

    def _apply_scrub(self) -> None:
        # applied now (the slider released): the scrub still pending would apply it again, pausing a replay
        # started in the meantime (60 ms later; on a loaded machine, in the middle of the replay)
        self._scrub_timer.stop()
        target = self._scrub_target if self._scrub_target is not None else self.slider.value()
        self._scrub_target = None
        self.player.pause()
        self.player.seek(target)

    def _ask_save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save trace", "run.trace.jsonl", "Trace files (*.jsonl *.trace);;All files (*)")
        if path:
            self.save_requested.emit(path)
