"""`scriptorium replay FILE`: the main window plays a trace without loading any model; bad files get a one-line
error before any window opens. Also the frames benchmark command."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.bench.frames import synthetic_rounds_trace, synthetic_window_trace
from app.core.record.events import RoundVerified
from app.core.record.trace import write_trace

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_replay_command_rejects_a_bad_file_with_one_line(tmp_path, capsys):
    from app.cli import main

    bad = tmp_path / "notes.txt"
    bad.write_text("this is not a trace\n", encoding="utf-8")
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("scriptorium replay:") and "notes.txt" in err and "\n" not in err
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such trace file" in capsys.readouterr().err


def test_replay_command_names_a_missing_document(tmp_path, capsys):
    from app.cli import main
    from app.core.record.events import RunStarted
    from app.core.record.trace import write_trace

    path = write_trace(tmp_path / "run.jsonl", [RunStarted(engine="gravity", document="a.pdf")])
    assert main(["replay", str(path), "--document", str(tmp_path / "gone.pdf")]) == 2
    assert "gone.pdf: no such document" in capsys.readouterr().err


def test_open_replay_plays_into_the_main_window(qtbot, tmp_path):
    from app.commands.replay import open_replay
    from app.gui.views import DecodingViews

    events = synthetic_rounds_trace(120, block_size=4, seed=9)
    path = write_trace(tmp_path / "run.jsonl", events)
    window, player = open_replay(str(path), speed=0.0)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: player.position == len(events), timeout=20_000)
    views = window.findChild(DecodingViews)
    views.flush()
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    reg = views.rounds_model.regions["p0-r0"]
    assert [r.accepted for r in reg.rounds] == [len(e.new_tokens) for e in rounds]
    assert views.rounds_view.text.toPlainText() == "".join(e.text for e in rounds)
    window.close()


def test_replay_command_runs_to_the_end_without_a_model(tmp_path):
    path = write_trace(tmp_path / "doc.jsonl", synthetic_window_trace(300, window=16))
    out = subprocess.run(
        [sys.executable, "-m", "app", "replay", str(path), "--speed", "fast", "--exit-when-done"],
        capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "torch" not in out.stderr.lower() or "Traceback" not in out.stderr


def test_frames_benchmark_prints_its_table(qapp, capsys):
    from app.bench.frames import main

    assert main(["--tokens", "1500"]) == 0
    out = capsys.readouterr().out
    assert "live frame ms p50" in out and "rounds" in out and "window" in out


def test_replay_with_document_points_the_trace_at_the_local_file(qtbot, tmp_path):
    from app.commands.replay import open_replay
    from app.core.record import events as ev
    from app.core.base.paths import sample_document

    elsewhere = "/home/someone/else/sample.pdf"  # recorded on another machine
    regions = [{"id": "p1-r01", "page": 0, "box": [10, 10, 200, 40], "label": "text", "task": "text", "order": 0,
                "box_pt": [10, 10, 200, 40]}]
    events = [
        ev.RunStarted(engine="gravity", document=elsewhere),
        ev.DocumentOpened(path=elsewhere, page_count=1),
        ev.LayoutDone(page=0, regions=regions),
        ev.RegionStarted(region_id="p1-r01", page=0, task="text", engine="gravity"),
        ev.RoundVerified(region_id="p1-r01", round_index=0, k=2, candidates=[5, 6, 7], verified=[5, 6, 8],
                         new_tokens=[5, 6, 8], text="Hello", draft_ms=1.0, verify_ms=1.0, cache_len=10),
        ev.RegionFinished(region_id="p1-r01", text="Hello"),
        ev.RunFinished(),
    ]
    path = write_trace(tmp_path / "run.jsonl", events)
    doc = str(sample_document())
    window, player = open_replay(str(path), document=doc, speed=0.0)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: player.position == len(events), timeout=10_000)
    if hasattr(window, "work"):
        assert str(window.work.path) == str(Path(doc).resolve())
    from PySide6.QtCore import QThreadPool

    for pool in window.findChildren(QThreadPool):  # let page rendering finish before the window goes away
        pool.waitForDone(10_000)
    qtbot.wait(50)
    window.close()
