"""State behind the R-SWA window view, built from events alone (no Qt here, so it is cheap to test and to rebuild).

`WindowModel` keeps the R-SWA stream of a whole-document run (docs/architecture.md, The R-SWA window): the pinned
prefix, the output tokens and their character spans, the attended window, the cache size per step and the n-gram blocks.
Every update is O(1).

What must never live here: painting, widgets, timers.
"""
from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field
from typing import Any

from app.core.record.events import (
    Event,
    NgramBanned,
    PrefixLaid,
    RegionFinished,
    WindowStepped,
)
from app.gui.views.view_text import _Text

# --- R-SWA window ------------------------------------------------------------------------------------------------


@dataclass
class Ban:
    step: int  # output index being produced when the blocker fired
    token: int
    ngram_start: int  # output index where the repeated n-gram began
    text: str


@dataclass
class WindowStream:
    """One R-SWA generation. Engines may report every step or every few steps (`events_every`), so the stream
    is a list of *chunks*: each WindowStepped brings the text of the outputs decoded since the previous one and
    `decoded`, the output count so far. With one event per step a chunk is one token."""

    region_id: str
    prefix_len: int = 0
    window: int = 0
    segments: list[dict[str, Any]] = field(default_factory=list)
    layers: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    dtype_bytes: int = 0
    tokens: array = field(default_factory=lambda: array("l"))  # the token of each chunk's last step
    token_texts: list[str] = field(default_factory=list)  # each chunk's text
    decoded: array = field(default_factory=lambda: array("l"))  # outputs decoded after each chunk
    char_starts: array = field(default_factory=lambda: array("l"))
    cache_positions: array = field(default_factory=lambda: array("l"))
    cache_bytes: array = field(default_factory=lambda: array("q"))
    full_positions: array = field(default_factory=lambda: array("l"))
    full_bytes: array = field(default_factory=lambda: array("q"))
    attended: tuple[int, int] = (0, 0)
    last_step: int = -1
    bans: list[Ban] = field(default_factory=list)
    max_cache_positions: int = 0
    finished: bool = False
    _text: _Text = field(default_factory=_Text)

    @property
    def text(self) -> str:
        return self._text.value

    @property
    def chunks(self) -> int:
        return len(self.decoded)

    @property
    def output_len(self) -> int:
        """Output tokens decoded so far."""
        return self.decoded[-1] if self.decoded else 0

    @property
    def bound(self) -> int:
        """What the cache may hold at most: the pinned prefix plus the window."""
        return self.prefix_len + self.window

    def chunk_of(self, output_index: int) -> int:
        """Index of the chunk holding output `output_index` (clamped to the chunks there are)."""
        i = bisect.bisect_right(self.decoded, output_index)
        return max(0, min(i, len(self.decoded) - 1))

    def chunk_range(self, i: int) -> tuple[int, int]:
        """Outputs [a, b) of chunk i."""
        return (self.decoded[i - 1] if i else 0), self.decoded[i]

    def span_chars(self, lo: int, hi: int) -> tuple[int, int]:
        """Character span of outputs [lo, hi) (to chunk granularity)."""
        n = self.output_len
        lo, hi = max(0, min(lo, n)), max(0, min(hi, n))
        if hi <= lo or not self.decoded:
            pos = self.char_starts[self.chunk_of(lo)] if self.decoded and lo < n else len(self._text)
            return pos, pos
        a = self.char_starts[self.chunk_of(lo)]
        j = self.chunk_of(hi - 1)
        b = self.char_starts[j + 1] if j + 1 < len(self.char_starts) else len(self._text)
        return a, b

    def window_chars(self) -> tuple[int, int]:
        return self.span_chars(*self.attended)

    def add_step(self, ev: WindowStepped) -> None:
        if not self.prefix_len:
            self.prefix_len = ev.prefix_len
        prev = self.output_len
        decoded = int(ev.decoded) if ev.decoded and ev.decoded > prev else prev + 1
        self.char_starts.append(len(self._text))
        self._text.append(ev.text)
        self.tokens.append(int(ev.token))
        self.token_texts.append(ev.text)
        self.decoded.append(decoded)
        self.cache_positions.append(int(ev.cache_positions))
        self.cache_bytes.append(int(ev.cache_bytes))
        self.full_positions.append(int(ev.full_positions))
        self.full_bytes.append(int(ev.full_bytes))
        lo, hi = (int(ev.attended[0]), int(ev.attended[1])) if ev.attended else (0, 0)
        self.attended = (lo, max(lo, hi))
        self.last_step = ev.step
        if ev.cache_positions > self.max_cache_positions:
            self.max_cache_positions = int(ev.cache_positions)

    def evicted_before(self) -> int:
        """Outputs with an index below this have left the window (greyed on the ribbon)."""
        return self.attended[0]


class WindowModel:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.streams: dict[str, WindowStream] = {}
        self.current: str | None = None
        self.version = 0

    def stream(self, region_id: str) -> WindowStream:
        s = self.streams.get(region_id)
        if s is None:
            s = self.streams[region_id] = WindowStream(region_id)
        return s

    def feed(self, ev: Event) -> bool:
        if isinstance(ev, WindowStepped):
            s = self.stream(ev.region_id)
            s.add_step(ev)
            self.current = ev.region_id
            self.version += 1
            return True
        if isinstance(ev, PrefixLaid):
            s = self.stream(ev.region_id)
            s.prefix_len, s.window, s.segments = ev.prefix_len, ev.window, list(ev.segments)
            s.layers, s.kv_heads, s.head_dim, s.dtype_bytes = ev.layers, ev.kv_heads, ev.head_dim, ev.dtype_bytes
            self.current = ev.region_id
            self.version += 1
            return True
        if isinstance(ev, NgramBanned):
            s = self.stream(ev.region_id)
            s.bans.append(Ban(ev.step, ev.token, ev.ngram_start, ev.text))
            self.version += 1
            return True
        if isinstance(ev, RegionFinished) and ev.region_id in self.streams:
            self.streams[ev.region_id].finished = True
            self.version += 1
            return True
        return False
