"""Replay controls tell the truth: a replay's progress has no Cancel (the playback bar pauses it), a paused replay
shows no progress, and showing another document pauses the replay. The About box lists the playback keys."""
from __future__ import annotations

from app.bench.frames import synthetic_rounds_trace
from app.core.record.trace import write_trace


def test_a_replay_shows_no_dead_cancel_and_no_stale_progress_once_paused(qtbot, tmp_path):
    from app.gui.main_window import MainWindow

    events = synthetic_rounds_trace(400, block_size=4, seed=3)
    path = write_trace(tmp_path / "run.jsonl", events)
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    player = w.views.player
    player.set_speed(0.05)  # slow enough to catch it playing
    w.open_trace(path)
    player.play()
    qtbot.waitUntil(lambda: w.progress.active and player.position > 0, timeout=10_000)
    assert w.progress.cancel_button.isHidden() and not w.actions.cancel.isEnabled()
    assert w.progress.phase.text()  # "Replaying…" or a phase of the replayed run, not "Starting…"
    assert "Starting" not in w.progress.phase.text()
    player.pause()
    assert not w.progress.active and not w.progress.isVisible() and w.progress.text == ""
    player.play()
    assert w.progress.active
    other = tmp_path / "other.png"
    from PIL import Image

    Image.new("RGB", (60, 40), "white").save(other)
    w.open_files([str(other)], run=False)  # another document shown: the replay pauses, its progress goes
    assert not player.playing and not w.progress.active


def test_the_about_box_lists_playback_review_and_find_keys():
    from app.gui.about import about_html
    from app.gui.actions import shortcut_table

    text = about_html("cpu", shortcut_table())
    for words in ("Play / pause the replay", "Step one event", "Next block needing review", "Find in the document",
                  "Read the region again", "Alt+Down", "F3"):
        assert words in text, words


def test_the_statistics_fit_at_1280x800_with_axes_counts_and_positions(qtbot, tmp_path, artifacts_dir):
    from PySide6.QtCore import QPoint

    from app.core.record.events import RoundVerified
    from app.gui.main_window import MainWindow

    events = synthetic_rounds_trace(300, block_size=8, seed=3)
    path = write_trace(tmp_path / "run.jsonl", events)
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(50)  # the first show sizes the dock
    w.views.player.set_speed(0.0)
    w.open_trace(path)
    w.views.player.play_all()
    qtbot.waitUntil(lambda: w.views.player.position == len(events), timeout=10_000)
    w.views.flush()
    stats = w.views.rounds_view.stats
    (t1, x1, v1), (t2, x2, v2), (_t3, _x3, v3) = stats.charts()
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert sum(v1) == len(rounds) and x1[0] == "1" and x1[-1] == str(8 + 2)  # 1 … B+2 tokens a round
    assert x2[:3] == ["a0", "1", "2"] and x2[-1] == "8" and v2[0] == 100.0  # a0 is always accepted
    assert "TPF" in stats.toolTip() and "a0" in stats.toolTip() and "Mean accepted" in stats.toolTip()
    # nothing clipped: the whole panel lies inside the dock's visible area
    viewport = w.views.scroller.viewport()
    bottom = stats.mapTo(viewport, QPoint(0, stats.height())).y()
    assert stats.height() >= stats.minimumHeight() and bottom <= viewport.height()
    w.grab().save(str(artifacts_dir / "decoding_statistics_1280x800.png"))
