"""The stage clock (app.core.base.stages) and the page profile of `bench documents --corpus real --profile`.

The clock's accounting is tested on a hand-wound clock (each piece of "work" advances it by exactly its
milliseconds), so the asserts are on what the clock adds up, never on a measured duration; how the real clock
measures real work is `python -m app bench stages`."""
from __future__ import annotations

import json

import pytest

from app.core.base import stages as stages_module
from app.core.base.stages import StageClock, absorb, measuring, shares, stage, summary_line, timed


class HandClock:
    """Stands in for the `time` module the stage clock reads: `work(ms)` is the only way time passes."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now

    def work(self, ms: float) -> None:
        self.now += ms / 1e3


@pytest.fixture
def hand(monkeypatch) -> HandClock:
    clock = HandClock()
    monkeypatch.setattr(stages_module, "time", clock)
    return clock


def test_nested_stages_count_their_own_time_and_add_up_to_the_whole(hand):
    clock = StageClock()
    t0 = hand.perf_counter()
    with measuring(clock):
        with stage("layout"):
            hand.work(20)
            with stage("detector"):
                hand.work(30)
            hand.work(40)  # waiting for the child process, whose recogniser took those 40 ms:
            absorb({"recogniser": 40.0})  # out of the open stage, into its own
            hand.work(10)
    whole = (hand.perf_counter() - t0) * 1e3
    assert set(clock.ms) == {"layout", "detector", "recogniser"}
    assert clock.ms == pytest.approx({"detector": 30.0, "recogniser": 40.0, "layout": 30.0})
    assert sum(clock.ms.values()) == pytest.approx(whole)  # own times: nothing counted twice
    assert sum(shares(clock.ms).values()) == pytest.approx(1.0)


def test_a_whole_stage_keeps_what_runs_inside_it(hand):
    clock = StageClock()
    with measuring(clock), stage("orientation", whole=True):
        with stage("render"):
            hand.work(10)
        with stage("recogniser"):
            hand.work(10)
    assert list(clock.ms) == ["orientation"] and clock.ms["orientation"] == pytest.approx(20.0)


def test_no_clock_no_cost_and_no_record():
    @timed("decoder")
    def work(x):
        return x + 1

    assert work(1) == 2  # no current clock: the call just runs
    clock = StageClock()
    with measuring(clock):
        assert work(2) == 3
    assert "decoder" in clock.ms
    assert work(3) == 4 and list(clock.ms) == ["decoder"]  # the clock is current inside its block only


def test_shares_and_the_status_line():
    ms = {"render": 25.0, "recogniser": 75.0}
    assert shares(ms) == {"render": 0.25, "recogniser": 0.75}
    assert summary_line(ms) == "render 25 ms (25%) · recogniser 75 ms (75%)"


def test_rounded_follows_the_page_order():
    clock = StageClock()
    for name in ("decoder", "render", "mine"):
        clock.add(name, 1.234)
    assert list(clock.rounded()) == ["render", "decoder", "mine"] and clock.rounded()["render"] == 1.2


@pytest.mark.slow  # the default pipeline and a bare RapidOCR pass on one line image
def test_profile_of_a_scanned_page_names_its_stages_and_the_bare_pass(tmp_path, capsys):
    from app.bench import real_corpus

    out = tmp_path / "rows.json"
    assert real_corpus.main(["--only", "s21-russian-line", "--profile", "--no-warm", "--json", str(out)]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [r["converter"] for r in rows] == ["default", "rapidocr"]
    ours = rows[0]["stages"]
    # the layout child's detector comes back to the parent; the page is rendered; the recogniser reads it
    assert {"render", "layout", "detector", "recogniser"} <= set(ours)
    assert all(v >= 0 for v in ours.values()) and sum(shares(ours).values()) == pytest.approx(1.0)
    printed = capsys.readouterr().out
    assert "stages of default" in printed and "default / rapidocr:" in printed and "| mean |" in printed
