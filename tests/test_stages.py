"""The stage clock (app.core.base.stages) and the page profile of `bench documents --corpus real --profile`."""
from __future__ import annotations

import json
import time

import pytest

from app.core.base.stages import StageClock, absorb, measuring, shares, stage, summary_line, timed


def _busy(ms: float) -> None:
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def test_nested_stages_count_their_own_time_and_add_up_to_the_whole():
    clock = StageClock()
    t0 = time.perf_counter()
    with measuring(clock):
        with stage("layout"):
            _busy(20)
            with stage("detector"):
                _busy(30)
            _busy(40)  # waiting for the child process, whose recogniser took those 40 ms:
            absorb({"recogniser": 40.0})  # out of the open stage, into its own
            _busy(10)
    whole = (time.perf_counter() - t0) * 1e3
    assert set(clock.ms) == {"layout", "detector", "recogniser"}
    assert clock.ms["detector"] >= 30 and clock.ms["recogniser"] == 40.0
    assert 28 <= clock.ms["layout"] < 30 + 25  # its own 30 ms, not the detector's nor the child's
    assert sum(clock.ms.values()) == pytest.approx(whole, abs=5)


def test_a_whole_stage_keeps_what_runs_inside_it():
    clock = StageClock()
    with measuring(clock), stage("orientation", whole=True):
        with stage("render"):
            _busy(10)
        with stage("recogniser"):
            _busy(10)
    assert list(clock.ms) == ["orientation"] and clock.ms["orientation"] >= 20


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
    assert sum(ours.values()) <= rows[0]["s"] * 1e3 + 1
    printed = capsys.readouterr().out
    assert "stages of default" in printed and "default / rapidocr:" in printed and "| mean |" in printed
