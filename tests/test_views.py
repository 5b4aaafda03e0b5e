"""The live decoding views (app.gui.views), driven by traces of real tiny-model runs (GravityOCR self-speculative
and Unlimited-OCR R-SWA, random weights of the real classes) and, for scale, by 10,000-token synthetic traces.

Screenshots of both views mid-run are written to tests/artifacts/ (frame times: `python -m app bench frames`).
"""
from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtWidgets import QWidget

from app.bench.frames import synthetic_rounds_trace, synthetic_window_trace
from app.core.record.events import (
    ErrorRaised,
    LayoutDone,
    PageRendered,
    RegionFinished,
    RoundVerified,
    RunFinished,
    RunStarted,
    WindowStepped,
)
from app.core.record.trace import TraceWriter, load_trace, tee
from app.gui.views import DecodingViews

torch = pytest.importorskip("torch")

GRAVITY_TOKENS = 48
UNLIMITED_TOKENS = 48


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def gravity(tiny_glmocr_dir):
    from app.core.engines import open_engine
    from app.core.tiny.glm_checkpoint import sample_images

    engine = open_engine("gravity", model_path=tiny_glmocr_dir, device="cpu", dtype="fp32")
    return engine, sample_images(2, seed=7)


@pytest.fixture(scope="module")
def unlimited(tiny_unlimited_dir):
    from PIL import Image

    from app.core.engines import open_engine

    engine = open_engine("unlimited", model_path=tiny_unlimited_dir, device="cpu", max_new_tokens=UNLIMITED_TOKENS, ngram_size=3)
    pages = [Image.new("RGB", (180, 240), "white"), Image.new("RGB", (180, 240), (235, 235, 235))]
    return engine, pages


def run_gravity(gravity, emit) -> list:
    engine, images = gravity
    emit(RunStarted(engine="gravity", document="tiny.pdf", model="tiny", device="cpu", block_size=engine.block_size))
    results = [
        engine.decode_region(img, "text", region_id=f"p0-r{i}", emit=emit, max_new_tokens=GRAVITY_TOKENS)
        for i, img in enumerate(images)
    ]
    emit(RunFinished(stats={"regions": len(results)}))
    return results


def run_unlimited(unlimited, emit):
    engine, pages = unlimited
    emit(RunStarted(engine="unlimited", document="tiny.pdf", model="tiny", device="cpu"))
    result = engine.decode_document(pages, emit=emit)
    emit(RunFinished(stats=dict(result.stats)))
    return result


@pytest.fixture(scope="module")
def gravity_trace(gravity, tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "gravity.jsonl"
    with TraceWriter(path) as writer:
        results = run_gravity(gravity, writer)
    return load_trace(path), results


@pytest.fixture(scope="module")
def unlimited_trace(unlimited, tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "unlimited.jsonl"
    with TraceWriter(path) as writer:
        result = run_unlimited(unlimited, writer)
    return load_trace(path), result


@pytest.fixture
def views(qtbot):
    w = DecodingViews()
    qtbot.addWidget(w)
    w.resize(1200, 760)
    w.show()
    qtbot.waitExposed(w)
    return w


def replay(qtbot, views: DecodingViews, trace, speed: float = 0.0) -> None:
    player = views.load_trace(trace.events, trace.times, play=False)
    player.set_speed(speed)
    with qtbot.waitSignal(player.state_changed, check_params_cb=lambda s: s == "finished", timeout=20_000):
        player.play()
    views.flush()


def snapshot(views: DecodingViews) -> dict:
    """Everything the views show, as plain data: equal snapshots = identical final state."""
    rounds = {
        rid: ([(r.k, r.new_tokens, r.start, r.end) for r in reg.rounds], reg.text, reg.tpf, dict(reg.histogram), reg.position_rates())
        for rid, reg in views.rounds_model.regions.items()
    }
    streams = {
        sid: (list(s.decoded), s.text, list(s.cache_positions), list(s.full_positions), s.attended, [(b.step, b.token) for b in s.bans], s.bound)
        for sid, s in views.window_model.streams.items()
    }
    return {"rounds": rounds, "streams": streams, "tinted": views.rounds_view.text.toPlainText(), "window_text": views.window_view.text.toPlainText()}


# --- replaying recorded tiny-model runs -----------------------------------------------------------------------


def test_rounds_view_after_replay_of_a_tiny_gravity_run(qtbot, views, gravity_trace, artifacts_dir):
    trace, results = gravity_trace
    replay(qtbot, views, trace)
    assert views.tabs.currentWidget() is views.rounds_view  # rounds arrived: the rounds tab came forward
    for res in results:
        rounds = [e for e in trace.events if isinstance(e, RoundVerified) and e.region_id == res.region_id]
        assert rounds, "the tiny run made no rounds"
        views.rounds_view.show_region(res.region_id)
        history = views.rounds_view.history
        assert history.row_count() == len(rounds)
        assert [r.accepted for r in history.region.rounds] == [len(e.new_tokens) for e in rounds]
        assert [r.k for r in history.region.rounds] == [e.k for e in rounds]
        # the tinted text is the output: every round's text in order, and the region's final text
        tinted = views.rounds_view.text.toPlainText()
        assert tinted == "".join(e.text for e in rounds)
        assert tinted.strip() == res.text
        reg = views.rounds_model.regions[res.region_id]
        n_tokens = sum(len(e.new_tokens) for e in rounds)
        assert reg.output_tokens == n_tokens and reg.tokens == res.stats["tokens"]
        assert reg.tpf == pytest.approx(res.stats["tpf"])  # finished: the engine's figure (stop token excluded)
        assert reg.live_tpf == pytest.approx(reg.tpf)  # and the live figure agrees with it
        assert sum(reg.histogram.values()) == len(rounds)
        assert "TPF" in views.rounds_view.stats.summary()


def test_selecting_a_round_highlights_its_text_span(qtbot, views, gravity_trace):
    trace, results = gravity_trace
    replay(qtbot, views, trace)
    rid = results[0].region_id
    views.rounds_view.show_region(rid)
    qtbot.wait(20)
    reg = views.rounds_model.regions[rid]
    target = min(3, len(reg.rounds) - 1)
    history = views.rounds_view.history
    history.verticalScrollBar().setValue(0)
    y = target * history.ROW_H + history.ROW_H // 2
    with qtbot.waitSignal(views.round_selected) as sig:
        qtbot.mouseClick(history.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(60, y))
    document, region_id, start, end = sig.args
    rec = reg.rounds[target]
    assert (document, region_id, start, end) == (views.document, rid, rec.start, rec.end)
    assert reg.text[start:end] == rec.text
    assert views.rounds_view.strip.record is rec
    # a selected round animates (drafts, verify sweep, resolution) to its end, not frozen as grey drafts
    qtbot.waitUntil(lambda: not views._frame_timer.isActive(), timeout=3000)
    views.rounds_view.select_round(max(0, target - 1))
    qtbot.waitUntil(lambda: views.rounds_view.strip.painted_phase >= 1.0, timeout=3000)
    views.rounds_view.select_round(target)
    sel = views.rounds_view.text.extraSelections()
    assert len(sel) == 1 and sel[0].cursor.selectedText() == rec.text.replace("\n", "\u2029")
    # clicking a character of the tinted text selects the round that confirmed it
    other = reg.rounds[-1]
    other_first = other.start if other.end > other.start else None
    if other_first is not None:
        edit = views.rounds_view.text
        from PySide6.QtGui import QTextCursor

        cur = QTextCursor(edit.document())
        cur.setPosition(other_first)
        edit.setTextCursor(cur)
        edit.ensureCursorVisible()
        rect = edit.cursorRect(cur)
        with qtbot.waitSignal(views.round_selected) as sig2:
            qtbot.mouseClick(edit.viewport(), Qt.MouseButton.LeftButton, pos=rect.center() + QPoint(2, 0))
        assert sig2.args[1] == rid and sig2.args[2] <= other_first < sig2.args[3]


def test_window_view_after_replay_of_a_tiny_unlimited_run(qtbot, views, unlimited_trace):
    trace, result = unlimited_trace
    spans = []
    views.window_span_changed.connect(lambda *a: spans.append(a))
    replay(qtbot, views, trace)
    assert views.tabs.currentWidget() is views.window_view
    steps = [e for e in trace.events if isinstance(e, WindowStepped)]
    s = views.window_model.streams["doc"]
    assert s.output_len == steps[-1].decoded and s.chunks == len(steps)
    assert s.prefix_len > 0 and s.window > 0
    # the cache figure never exceeds P + W, while full attention grows past it
    assert max(s.cache_positions) <= s.prefix_len + s.window == s.bound
    assert s.full_positions[-1] == s.prefix_len + steps[-1].decoded - 1 or s.full_positions[-1] > s.bound
    # the highlighted window span is exactly the text of the outputs inside the window
    assert spans and spans[-1][1] == "doc"
    _, _, a, b = spans[-1]
    lo, hi = steps[-1].attended
    assert s.text[a:b] == "".join(e.text for e in steps[lo:hi])
    assert views.window_view.text.toPlainText() == "".join(e.text for e in steps)
    bans = [e for e in trace.events if type(e).__name__ == "NgramBanned"]
    assert [(b.step, b.token) for b in s.bans] == [(e.step, e.token) for e in bans]


# --- a live run --------------------------------------------------------------------------------------------------


class Bridge(QObject):
    """Carries events from the worker thread to the GUI thread (queued), as the app's worker does."""

    arrived = Signal(object)


@pytest.mark.parametrize("which", ["gravity", "unlimited"])
def test_live_tiny_run_updates_views_and_its_trace_replays_to_the_same_state(qtbot, views, request, tmp_path, which, artifacts_dir):
    fixture = request.getfixturevalue(which)
    bridge = Bridge()
    bridge.arrived.connect(views.feed)
    path = tmp_path / f"live-{which}.jsonl"
    writer = TraceWriter(path)
    done = threading.Event()
    runner = run_gravity if which == "gravity" else run_unlimited

    def work():
        try:
            runner(fixture, tee(writer, bridge.arrived.emit))
        finally:
            writer.close()
            done.set()

    seen = {"animating": False, "mid_shot": False}
    thread = threading.Thread(target=work, daemon=True)
    thread.start()

    def progressed():
        if which == "gravity":
            strip = views.rounds_view.strip
            seen["animating"] |= strip.record is not None and strip.animating()
            n = sum(len(r.rounds) for r in views.rounds_model.regions.values())
        else:
            n = sum(s.chunks for s in views.window_model.streams.values())
        if n >= (6 if which == "gravity" else 20) and not seen["mid_shot"]:
            seen["mid_shot"] = True
            views.render_frame()
            qtbot.wait(1)  # let the layout settle before the picture
            views.grab().save(str(artifacts_dir / f"views_{'rounds' if which == 'gravity' else 'window'}_live_midrun.png"))
        return done.is_set() and views.recording and isinstance(views.recording[-1], RunFinished)

    qtbot.waitUntil(progressed, timeout=60_000)
    thread.join(5)
    assert views.frames > 0 and seen["mid_shot"]
    if which == "gravity":
        assert seen["animating"], "the round strip never animated during the live run"
        qtbot.waitUntil(lambda: not views.rounds_view.strip.animating(), timeout=5_000)
    views.flush()
    live_state = snapshot(views)
    assert live_state["rounds" if which == "gravity" else "streams"]
    # the in-memory recording equals the file written during the run
    trace = load_trace(path)
    assert trace.events == views.recording
    # the trace replays to the same final state, in a fresh widget...
    other = DecodingViews()
    qtbot.addWidget(other)
    other.resize(1200, 760)
    other.show()
    replay(qtbot, other, trace)
    assert snapshot(other) == live_state
    # ...and scrubbing the live recording back to the start and playing it again rebuilds the same state
    views.player.seek(0)
    assert not views.rounds_model.regions and not views.window_model.streams
    views.player.play_all()
    views.flush()
    assert snapshot(views) == live_state


# --- playback controls -------------------------------------------------------------------------------------------


def test_player_steps_pauses_scrubs_and_slows_down(qtbot, views):
    events = synthetic_rounds_trace(160, block_size=4, seed=5)
    n_rounds = sum(isinstance(e, RoundVerified) for e in events)
    player = views.load_trace(events, None, play=False)  # no timings: slowed steps still take time
    history = views.rounds_view.history
    player.step()
    views.flush()
    assert history.row_count() == 1 and isinstance(events[player.position - 1], RoundVerified)
    player.step()
    views.flush()
    assert history.row_count() == 2
    # scrub forward, then back: the state is rebuilt from the start and equals a fresh feed
    player.seek(40)
    player.seek(17)
    views.flush()
    fresh = DecodingViews()
    qtbot.addWidget(fresh)
    for ev in events[:17]:
        fresh.feed(ev)
    fresh.flush()
    assert snapshot(views)["rounds"] == snapshot(fresh)["rounds"]
    # ×5 slower: each untimed round lasts ≥ 12 ms × 5, so 0.3 s plays some, not all (the rate itself is measured
    # by `python -m app bench frames`, not asserted here)
    player.set_speed(5.0)
    start = player.position
    player.play()
    qtbot.wait(300)
    player.pause()
    played_rounds = sum(isinstance(e, RoundVerified) for e in events[start : player.position])
    assert played_rounds >= 1 and player.position < len(events)
    paused_at = player.position
    qtbot.wait(100)
    assert player.position == paused_at
    assert views.rounds_view.strip.slow == 1.25
    # the playback bar drives the same player: scrub with the slider, then play to the end fast
    bar = views.playback_bar
    bar.slider.setValue(5)
    bar._scrub(5)
    bar._apply_scrub()
    assert player.position == 5
    bar.speed_box.setCurrentIndex(0)
    assert player.speed == 0.0
    with qtbot.waitSignal(player.state_changed, check_params_cb=lambda s: s == "finished", timeout=10_000):
        qtbot.mouseClick(bar.play_button, Qt.MouseButton.LeftButton)
    views.flush()
    assert history.row_count() == n_rounds
    assert bar.slider.value() == bar.slider.maximum() == len(events)


def test_a_replay_started_right_after_a_scrub_is_not_paused_by_the_scrub(qtbot, views):
    """The race: releasing the slider applies the scrub at once, but the scrub's own 60 ms timer stayed
    pending and, firing later, paused the replay the person had started in between."""
    player = views.load_trace(synthetic_rounds_trace(160, block_size=4, seed=5), None, play=False)
    bar = views.playback_bar
    player.set_speed(20.0)  # slowed right down: still playing well after the scrub's timer would have fired
    bar._scrub(5)  # the slider dragged ...
    bar._apply_scrub()  # ... and released
    assert player.position == 5
    player.play()
    qtbot.wait(200)
    assert player.playing and player.position > 5


def test_unknown_and_unrelated_events_are_ignored(views):
    for ev in (PageRendered(page=0, width=10, height=10, dpi=72), LayoutDone(page=0, regions=[]),
               ErrorRaised(message="x"), RegionFinished(region_id="zzz", text="t"), "not an event", None):
        views.feed(ev)
    views.flush()
    assert not views.rounds_model.regions and not views.window_model.streams
    views.render_frame(paint_now=True)
    # a run whose engine has no rounds/window says so, and what would show them
    views.feed(RunStarted(engine="classic"))
    views.flush()
    assert "Classic OCR" in views.rounds_view.hint.text() and "GravityOCR" in views.rounds_view.hint.text()
    assert "Unlimited-OCR" in views.window_view.hint.text()
    assert not views.rounds_view.hint.isHidden() and not views.window_view.hint.isHidden()


def test_save_recording_writes_a_trace_that_reads_back(views, tmp_path):
    events = synthetic_window_trace(50, window=8)
    for ev in events:
        views.feed(ev)
    path = views.save_recording(tmp_path / "saved.jsonl")
    assert load_trace(path).events == events
    views.reset()
    assert not views.recording and not views.window_model.streams


# --- scale: 10,000 tokens ------------------------------------------------------------------------------------------


def test_ten_thousand_tokens_are_shown_without_a_widget_per_token(qtbot, views, artifacts_dir):
    """The views take 10,000 tokens of either kind, draw them and replay them through the player with the same
    widgets they started with. How fast (feed, frame, frames a second) is `python -m app bench frames`."""
    widgets_before = len(views.findChildren(QWidget))
    for name, events in (("rounds", synthetic_rounds_trace(10_000)), ("window", synthetic_window_trace(10_000))):
        views.reset()
        for ev in events:
            views.feed(ev)
        views.render_frame(paint_now=True)
        qtbot.wait(5)  # let the layout settle (the empty-view hint just hid) before the picture
        views.grab().save(str(artifacts_dir / f"views_{name}_10k.png"))
    assert views.window_model.streams
    # replaying through the player: frames are drawn from the latest state, far fewer than the events
    views.reset()
    events = synthetic_window_trace(10_000)
    frames0 = views.frames
    replay(qtbot, views, type("T", (), {"events": events, "times": None})())
    assert 1 <= views.frames - frames0 < len(events) // 4
    assert len(views.findChildren(QWidget)) == widgets_before  # no widget per token


def test_round_strip_keeps_up_with_fast_rounds(qtbot, views):
    """Rounds arriving faster than the animation: a batch nobody saw yet collapses to its newest round; once a
    round is on screen it finishes its sweep and the newest waiting round plays next."""
    events = [e for e in synthetic_rounds_trace(120, block_size=4, seed=3) if isinstance(e, RoundVerified)]
    for ev in events[:10]:  # one batch before any frame
        views.feed(ev)
    strip = views.rounds_view.strip
    assert strip.record.round_index == 9 and strip.animating()
    views.render_frame(paint_now=True)  # on screen now
    assert strip._painted
    for ev in events[10:15]:
        views.feed(ev)
    assert strip.record.round_index == 9 and strip._pending.round_index == 14 and strip.skipped == 4
    qtbot.waitUntil(lambda: strip.record.round_index == 14, timeout=5_000)  # the frame timer moved it on
    qtbot.waitUntil(lambda: not strip.animating(), timeout=5_000)
