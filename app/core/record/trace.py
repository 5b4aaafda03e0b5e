"""Trace files: a run's events as JSON lines, written while it happens and read back to replay it.

Layout of a file:

    {"type": "trace_header", "format": 1, "app": "scriptorium", "version": "0.1.0", "created": "2026-..."}
    {"type": "run_started", ..., "_t": 0.0}
    {"type": "round_verified", ..., "_t": 0.0132}
    ...

Each event line is `Event.to_dict()` plus `_t`, the seconds since the writer was opened (slowed replay uses it).
Older/newer readers ignore keys they do not know, so `_t` never gets in the way of `event_from_dict`. A run that
crashed mid-write leaves a truncated last line: the reader drops it (and only it) instead of refusing the file.
Every event line is checked against its dataclass (app.core.base.schema) before it is used: a line of the wrong shape
makes `load_trace` raise TraceError naming the line, never a crash later in the replay.

What must never live here: Qt, torch, or any knowledge of how events are shown.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Iterable

from app import __version__
from app.core.record.events import Event, all_event_types, event_from_dict
from app.core.base.schema import check_fields

EVENT_TYPES = all_event_types()

FORMAT = 1
HEADER_TYPE = "trace_header"
TIME_KEY = "_t"


class TraceError(ValueError):
    """A file is not a readable trace; the message names the file, the line and the cause."""


@dataclass
class Trace:
    """Events in recorded order, their times (seconds from the start of recording) and the header, if any."""

    events: list[Event]
    times: list[float]
    header: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    dropped_last_line: bool = False

    def __len__(self) -> int:
        return len(self.events)


class TraceWriter:
    """`writer(event)` appends one line and flushes, so a crash loses at most the line being written.

    Thread-safe: the decoding worker calls it while the GUI may close it. Usable as a context manager and as the
    `emit` callable of an engine (chain it with another sink via `tee`)."""

    def __init__(self, path: str | Path, *, meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file: IO[str] | None = self.path.open("w", encoding="utf-8")
        self._t0 = time.perf_counter()
        self.count = 0
        header = {
            "type": HEADER_TYPE,
            "format": FORMAT,
            "app": "scriptorium",
            "version": __version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        if meta:
            header.update({k: v for k, v in meta.items() if k not in header})
        self._write_line(json.dumps(header, ensure_ascii=False, separators=(",", ":")))

    def _write_line(self, line: str) -> None:
        assert self._file is not None
        self._file.write(line + "\n")
        self._file.flush()

    def __call__(self, event: Event, t: float | None = None) -> None:
        """Append `event`, stamped `t` seconds from the start (default: the time since the writer was opened)."""
        data = event.to_dict()
        data[TIME_KEY] = round(time.perf_counter() - self._t0 if t is None else float(t), 6)
        line = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            if self._file is None:  # late events of a run whose recording was stopped
                return
            self._write_line(line)
            self.count += 1

    write = __call__

    @property
    def closed(self) -> bool:
        return self._file is None

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tee(*sinks):
    """One emit callable that forwards each event to every sink in turn (e.g. the GUI and a TraceWriter)."""

    def emit(event: Event) -> None:
        for sink in sinks:
            sink(event)

    return emit


def load_trace(path: str | Path) -> Trace:
    """Read a trace file with its timings. Raises TraceError with the file, line and cause when it is not one."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not a trace file (not UTF-8 text: {exc.reason})") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read the trace file ({exc.strerror or exc})") from None
    lines = raw.split("\n")
    complete_end = raw.endswith("\n")
    trace = Trace(events=[], times=[], path=str(path))
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    for pos, (lineno, line) in enumerate(numbered):
        is_last = pos == len(numbered) - 1
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("a line must be a JSON object")
            if data.get("type") == HEADER_TYPE:
                if not isinstance(data.get("format", FORMAT), int):
                    raise TraceError(f"{path}, line {lineno}: the trace header's format is not a number")
                if data.get("format", FORMAT) > FORMAT:
                    raise TraceError(
                        f"{path}: trace format {data.get('format')} is newer than this app reads ({FORMAT}); "
                        f"it was written by {data.get('app', '?')} {data.get('version', '?')}"
                    )
                trace.header = data
                continue
            t = data.get(TIME_KEY)
            cls = EVENT_TYPES.get(data.get("type"))
            if cls is not None:  # every field of the declared type, before anything replays it
                check_fields(cls, data, str(data.get("type")))
            event = event_from_dict(data)
        except TraceError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            if is_last and not complete_end and trace.events:
                trace.dropped_last_line = True  # the writer was killed mid-line
                break
            cause = str(exc) if not isinstance(exc, json.JSONDecodeError) else f"not JSON ({exc.msg})"
            raise TraceError(f"{path}, line {lineno}: not a trace event: {cause}") from None
        trace.events.append(event)
        prev = trace.times[-1] if trace.times else 0.0
        trace.times.append(float(t) if isinstance(t, (int, float)) and t >= prev else prev)
    if not trace.events and not trace.header:
        raise TraceError(f"{path}: empty file, not a trace")
    return trace


def read_trace(path: str | Path) -> list[Event]:
    """The events of a trace file, in recorded order (see `load_trace` for timings and the header)."""
    return load_trace(path).events


def write_trace(path: str | Path, events: Iterable[Event], times: Iterable[float] | None = None) -> Path:
    """Write a whole list of events at once (tests, synthetic traces, "save the recorded run")."""
    path = Path(path)
    times_list = list(times) if times is not None else None
    with TraceWriter(path) as writer:
        for i, event in enumerate(events):
            writer(event, None if times_list is None else times_list[i])
    return path
