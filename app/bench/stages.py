"""`python -m app bench stages [--reps N]`: how closely the stage clock (app.core.base.stages) measures work.

Busy loops of known length stand for a page's stages: layout 20 ms, a nested detector 30 ms, a wait of 40 ms
for the layout child whose recogniser's 40 ms are absorbed, then 10 ms more; and an orientation check of
2 × 10 ms kept whole. Printed, the median of `--reps` runs: each stage's measured milliseconds beside what it
should be, and the stages' sum beside the wall time of the block (own times: their sum should be the whole,
within a few ms; a stage counted twice shows as a sum above it). The unit tests check the same accounting on a
hand-wound clock (tests/test_stages.py); the measured figures live here.

What must never live here: asserts (this prints figures).
"""
from __future__ import annotations

import argparse
import statistics
import time


def _busy(ms: float) -> None:
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def _once() -> dict[str, float]:
    from app.core.base.stages import StageClock, absorb, measuring, stage

    clock = StageClock()
    t0 = time.perf_counter()
    with measuring(clock):
        with stage("layout"):
            _busy(20)
            with stage("detector"):
                _busy(30)
            _busy(40)
            absorb({"recogniser": 40.0})
            _busy(10)
        with stage("orientation", whole=True):
            with stage("render"):
                _busy(10)
            with stage("recogniser"):
                _busy(10)
    out = dict(clock.ms)
    out["(sum)"] = sum(clock.ms.values())
    out["(wall)"] = (time.perf_counter() - t0) * 1e3
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app bench stages", description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=9, help="runs (the median is printed; default 9)")
    args = p.parse_args(argv)
    runs = [_once() for _ in range(max(1, args.reps))]
    expected = {"layout": 30.0, "detector": 30.0, "recogniser": 40.0, "orientation": 20.0, "(sum)": None,
                "(wall)": None}
    print(f"bench stages: the stage clock on busy loops, median of {len(runs)} runs")
    print("| stage | measured ms | should be |")
    print("|---|---:|---:|")
    for name, want in expected.items():
        got = statistics.median(r.get(name, 0.0) for r in runs)
        print(f"| {name} | {got:.1f} | {'' if want is None else f'{want:.0f}'} |")
    gap = statistics.median(r["(wall)"] - r["(sum)"] for r in runs)
    print(f"wall − sum of stages: {gap:+.2f} ms (own times add up to the whole when this is near 0)")
    return 0
