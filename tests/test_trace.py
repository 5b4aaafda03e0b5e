"""Trace files (app.core.record.trace): round trip with timings, a header with the app version, tolerance of a truncated
last line, clear errors on files that are not traces."""
from __future__ import annotations

import json
import threading

import pytest

from app import __version__
from app.bench.frames import synthetic_rounds_trace, synthetic_window_trace
from app.core.record.events import RegionStarted, RoundVerified, WindowStepped
from app.core.record.trace import TraceError, TraceWriter, load_trace, read_trace, tee, write_trace


def test_round_trip_keeps_every_event_and_its_time(tmp_path):
    events = synthetic_rounds_trace(300, seed=3) + synthetic_window_trace(200, window=16, seed=4)
    path = tmp_path / "run.jsonl"
    with TraceWriter(path) as writer:
        for ev in events:
            writer(ev)
    assert writer.closed and writer.count == len(events)
    trace = load_trace(path)
    assert trace.events == events  # dataclass equality: every field, tuples restored
    assert trace.header["version"] == __version__ and trace.header["app"] == "scriptorium"
    assert len(trace.times) == len(events) and trace.times == sorted(trace.times)
    assert isinstance(trace.events[-3], WindowStepped) and isinstance(trace.events[-3].attended, tuple)
    assert read_trace(path) == events


def test_explicit_times_survive(tmp_path):
    events = synthetic_rounds_trace(40, seed=1)
    times = [i * 0.25 for i in range(len(events))]
    trace = load_trace(write_trace(tmp_path / "t.jsonl", events, times))
    assert trace.times == times and trace.events == events


def test_truncated_last_line_is_dropped_not_fatal(tmp_path):
    events = synthetic_rounds_trace(60, seed=2)
    path = write_trace(tmp_path / "cut.jsonl", events)
    raw = path.read_text(encoding="utf-8")
    path.write_text(raw[: len(raw) - 25], encoding="utf-8")  # the writer died mid-line
    trace = load_trace(path)
    assert trace.dropped_last_line and trace.events == events[:-1]


@pytest.mark.parametrize(
    "content, needle",
    [
        ("", "empty"),
        ("hello world\n", "line 1"),
        ('{"type": "run_started", "engine": "x"}\nnot json\n{"type": "run_finished"}\n', "line 2"),
        ('{"type": "no_such_event"}\n', "unknown event type"),
        ('[1, 2]\n', "JSON object"),
        ('{"type": "trace_header", "format": 99, "app": "scriptorium", "version": "9"}\n', "newer"),
    ],
)
def test_bad_files_raise_a_clear_error(tmp_path, content, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TraceError, match=needle) as info:
        load_trace(path)
    assert str(path) in str(info.value)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(TraceError, match="no such trace file"):
        load_trace(tmp_path / "nope.jsonl")
    binary = tmp_path / "img.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    with pytest.raises(TraceError, match="not UTF-8"):
        load_trace(binary)


def test_writer_is_thread_safe_flushes_and_ignores_late_events(tmp_path):
    path = tmp_path / "threads.jsonl"
    writer = TraceWriter(path, meta={"engine": "gravity"})
    ev = RegionStarted(region_id="r", page=0, task="text", engine="gravity")
    threads = [threading.Thread(target=lambda: [writer(ev) for _ in range(200)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text(encoding="utf-8").splitlines()  # readable before close: every line is flushed
    assert len(lines) == 801 and all(json.loads(line) for line in lines)
    writer.close()
    writer(ev)  # a late event from a stopped recording is dropped, not an error
    trace = load_trace(path)
    assert len(trace) == 800 and trace.header["engine"] == "gravity"


def test_tee_feeds_every_sink(tmp_path):
    got: list = []
    with TraceWriter(tmp_path / "tee.jsonl") as writer:
        emit = tee(got.append, writer)
        for ev in synthetic_rounds_trace(30):
            emit(ev)
    assert got == read_trace(tmp_path / "tee.jsonl")
    assert any(isinstance(e, RoundVerified) for e in got)
