"""Where a page's time goes: a light stage clock (`bench documents --corpus real --profile`, a page's stats).

`measuring(clock)` makes a `StageClock` the current one (for this thread's context); `stage(name)` around a piece of
work adds its milliseconds to the current clock under `name`, and costs nothing when no clock is current. Stages
nest and are counted by their own time: a render inside the orientation check is the render's, not the
orientation's, so the stages of a page add up to the time measured and each share is of that whole. Work done in
another process (the layout child) sends its clock's `ms` back and the parent `absorb`s it into the open stage.

What must never live here: printing, logging, or any knowledge of what the stages are (callers name them; STAGES
is only the order a profile is shown in).
"""
from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from typing import Iterator, Mapping

STAGES = ("render", "layout", "column cut", "orientation", "detector", "recogniser", "word list", "decoder",
          "assembly", "writing")


class StageClock:
    """Milliseconds per stage (own time: nested stages are taken out of their parent's)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._open: list[list[float]] = []  # per open stage: [time nested stages took]
        self._whole = 0  # open stages that keep what runs inside them as their own

    def add(self, name: str, ms: float) -> None:
        self.ms[name] = self.ms.get(name, 0.0) + float(ms)

    def absorb(self, ms: Mapping[str, float]) -> None:
        """Another clock's stages (the layout child's), taken out of the stage open here."""
        for name, value in ms.items():
            self.add(name, value)
        if self._open:
            self._open[-1][0] += sum(float(v) for v in ms.values())

    @contextlib.contextmanager
    def stage(self, name: str, whole: bool = False) -> Iterator[None]:
        """Time the block as `name`; with `whole`, the stages inside it count as its own (the orientation check's
        small rendering and line readings are the check's cost, not the page's render and recogniser)."""
        if self._whole:
            yield
            return
        self._whole += int(whole)
        frame = [0.0]
        self._open.append(frame)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            total = (time.perf_counter() - t0) * 1e3
            self._whole -= int(whole)
            self._open.pop()
            self.add(name, max(0.0, total - frame[0]))
            if self._open:
                self._open[-1][0] += total

    def rounded(self) -> dict[str, float]:
        """The stages in STAGES order (others after), milliseconds to 0.1."""
        names = [n for n in STAGES if n in self.ms] + [n for n in self.ms if n not in STAGES]
        return {n: round(self.ms[n], 1) for n in names}


_CURRENT: ContextVar[StageClock | None] = ContextVar("stage_clock", default=None)


@contextlib.contextmanager
def measuring(clock: StageClock) -> Iterator[StageClock]:
    """`clock` is the current one inside the block."""
    token = _CURRENT.set(clock)
    try:
        yield clock
    finally:
        _CURRENT.reset(token)


def current() -> StageClock | None:
    return _CURRENT.get()


@contextlib.contextmanager
def stage(name: str, whole: bool = False) -> Iterator[None]:
    """Time the block as stage `name` on the current clock (nothing when there is none); `whole`: StageClock.stage."""
    clock = _CURRENT.get()
    if clock is None:
        yield
        return
    with clock.stage(name, whole):
        yield


def absorb(ms: Mapping[str, float] | None) -> None:
    """Add another process's stage milliseconds to the current clock (nothing when there is none)."""
    clock = _CURRENT.get()
    if clock is not None and ms:
        clock.absorb(ms)


def shares(ms: Mapping[str, float], total: float | None = None) -> dict[str, float]:
    """Each stage's share of `total` (default: the stages' sum), 0..1."""
    whole = float(total if total is not None else sum(ms.values()))
    return {n: (float(v) / whole if whole > 0 else 0.0) for n, v in ms.items()}


def summary_line(ms: Mapping[str, float], total: float | None = None) -> str:
    """'render 120 ms (4%) · layout 900 ms (31%) · …' — for a status line."""
    share = shares(ms, total)
    return " · ".join(f"{n} {v:.0f} ms ({100 * share[n]:.0f}%)" for n, v in ms.items() if v >= 0.5)


def timed(name: str):
    """Decorator: every call of the function is timed as stage `name` (see `stage`)."""
    import functools

    def wrap(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            with stage(name):
                return fn(*args, **kwargs)

        return call

    return wrap
