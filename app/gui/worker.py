"""One lane for the model: a single worker thread owns the loaded engine and runs layout + decoding; the GUI gets
the event stream and never waits for it.

The worker never blocks on the GUI either: `emit` appends to a locked queue and, at most once per pending drain,
posts a queued signal; the GUI drains everything queued so far in one go (so a burst of tokens costs one wake-up,
not a thousand). Every run has an id; events of a run the person cancelled or replaced are dropped at the drain
(Orange's disconnect-on-cancel), so a late token can never land in the wrong block.

What must never live here: widgets, or decoding code of its own (the core pipeline does the work).
"""
from __future__ import annotations

import threading
import traceback
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal, Slot

from app.core.record import events as ev

if TYPE_CHECKING:  # pragma: no cover
    from app.core.review.runner import RunRequest


_PARKED: list[tuple[QThread, QObject]] = []  # lanes whose thread would not end at shutdown: never destroyed


class _Worker(QObject):
    """Lives in the worker thread. `run(request)` executes there (queued call)."""

    wake = Signal()
    finished = Signal(int, str)  # run id, error text (a crash; "" otherwise)

    def __init__(self, client: "DecodeClient") -> None:
        super().__init__()
        self._client = client
        self._runner = None  # a cached pipeline runner: keeps the model loaded between runs

    @Slot(object, object)
    def run(self, request: "RunRequest", cancel) -> None:
        emit = self._client.emitter(request.run_id)
        error = ""
        try:
            if self._runner is None:
                from app.core.review.runner import PipelineRunner

                self._runner = PipelineRunner()
            self._runner.run(request, emit, cancel)  # what it read reaches the window as events, nothing else
            self._client.device = self._runner.device
        except Exception as exc:  # noqa: BLE001 - a crash ends the run as failed (run_finished's error), never the lane
            error = str(exc) or type(exc).__name__
            traceback.print_exc()
        self.finished.emit(request.run_id, error)

    @Slot()
    def shutdown(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


class DecodeClient(QObject):
    """The GUI's handle on the worker. `submit()` starts a run (cancelling the previous one), `cancel()` asks the
    running one to stop between two forwards. `events(list)` delivers the current run's events in order;
    `run_finished(run_id, error)` follows the run's last event (error: the lane crashed)."""

    events = Signal(list)
    run_finished = Signal(int, str)
    _start = Signal(object, object)
    _shutdown = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._queue: list[tuple[int, ev.Event]] = []
        self._wake_pending = False
        self._run_id = 0
        self._discarded = -1
        self._cancel = None
        self.running = False
        self.dropped = 0
        self.device = ""  # the device of the loaded model, for the About box
        self.recorder = None  # a TraceWriter: every event of a run is also written there (thread-safe)
        self._recorders: dict[int, object] = {}  # run id → the recorder set when that run was submitted
        self._stopped = False
        self._thread = QThread()
        self._thread.setObjectName("scriptorium-decoder")
        self._worker = _Worker(self)
        self._worker.moveToThread(self._thread)
        self._start.connect(self._worker.run)
        self._shutdown.connect(self._worker.shutdown)
        self._worker.wake.connect(self._drain)
        self._worker.finished.connect(self._finished)
        self._thread.start()

    # --- from the worker thread ---------------------------------------------------------------------------------

    def emitter(self, run_id: int):
        """The `emit` run `run_id`'s pipeline calls on the worker thread: queued with the run id (the drain drops
        the events of a run cancelled with discard, or replaced), one wake-up per pending drain."""

        def emit(event: ev.Event) -> None:
            # the recorder of THIS run: a cancelled run's late events once went into the next run's trace
            recorder = self._recorders.get(run_id)
            if recorder is not None:
                try:
                    recorder(event)
                except Exception:  # noqa: BLE001 - a full disk must not stop decoding
                    self._recorders[run_id] = None
            with self._lock:
                self._queue.append((run_id, event))
                if self._wake_pending:
                    return
                self._wake_pending = True
            self._worker.wake.emit()

        return emit

    # --- GUI thread -----------------------------------------------------------------------------------------------

    def submit(self, request: "RunRequest") -> int:
        from app.core.base.cancel import CancelToken

        self.cancel()
        self._run_id += 1
        request.run_id = self._run_id
        self._recorders[request.run_id] = self.recorder
        self._cancel = CancelToken()
        self.running = True
        self._start.emit(request, self._cancel)
        return request.run_id

    def cancel(self, discard: bool = False) -> None:
        """Ask the run to stop between two forwards. With `discard`, its remaining events are dropped too (the
        document was closed, or a replay takes over the window)."""
        if self._cancel is not None:
            self._cancel.cancel()
            if discard:
                self._discarded = self._run_id

    @property
    def current_run(self) -> int:
        return self._run_id

    def _drain(self) -> None:
        with self._lock:
            batch, self._queue = self._queue, []
            self._wake_pending = False
        current = [e for rid, e in batch if rid == self._run_id and rid != self._discarded]
        self.dropped += len(batch) - len(current)
        if current:
            self.events.emit(current)

    def _finished(self, run_id: int, error: str) -> None:
        self._drain()
        self._recorders.pop(run_id, None)
        if self._stopped:  # the lane was shut down (the window closed): nobody is told a run ended any more
            self.running = False
            return
        if run_id != self._run_id:
            return
        self.running = False
        self._cancel = None
        self.run_finished.emit(run_id, error)

    def shutdown(self, timeout_ms: int = 30_000) -> None:
        """End the lane (the window closes, the app quits; a second call does nothing): the run is cancelled
        and its late events dropped, the model is let go on its own thread, and the thread is waited for until
        it has ended. A QThread destroyed while it runs takes the process down, and a worker freed under its
        running thread is a use-after-free, so the lane is never abandoned: one still busy after `timeout_ms`
        (a forward that does not return) is parked, thread and worker, for the rest of the process."""
        if self._stopped:
            return
        self._stopped = True
        self.cancel(discard=True)
        self._shutdown.emit()
        self._thread.quit()
        if not self._thread.wait(timeout_ms):
            _PARKED.append((self._thread, self._worker))
