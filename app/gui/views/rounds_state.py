"""State behind the rounds view, built from events alone (no Qt here, so it is cheap to test and to rebuild).

`RoundsModel` keeps the self-speculative rounds of every region (docs/architecture.md, The self-speculative round): the
rounds in order, the character span each round appended to the region's text, and running statistics. Feeding 10,000
events must stay in the low milliseconds per thousand events: every update is O(1) or O(block size), text is kept as
pieces and joined lazily.

What must never live here: painting, widgets, timers.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from app.core.record.events import (
    Event,
    RegionFinished,
    RegionStarted,
    RoundVerified,
    RunFinished,
    RunStarted,
    SlotInspection,
    TokensCommitted,
)
from app.core.record.line_readings import LineReading, line_readings
from app.gui.views.view_text import _SPECIAL_TOKEN, _Text, visible_whitespace
from app.gui.views.server_stats import ServerStats

BASELINE_KEYS = ("ar_tokens_per_s", "baseline_tokens_per_s", "ar_tps")


# --- self-speculative rounds -------------------------------------------------------------------------------------


@dataclass
class RoundRecord:
    region_id: str
    index: int  # position in the region's round list (0-based)
    round_index: int  # as the engine numbered it
    k: int
    candidates: list[int]
    verified: list[int]
    new_tokens: list[int]
    text: str
    candidate_texts: list[str]
    verified_texts: list[str]
    bonus: int | None
    draft_ms: float
    verify_ms: float
    cache_len: int
    block_size: int
    start: int  # character span this round appended to the region's text
    end: int
    forwards: int = 2  # draft + verify (fewer when a0 alone ended the decode)
    inspected: list[SlotInspection] = field(default_factory=list)  # the reject inspector's slots (may be empty)
    probs: list[float] = field(default_factory=list)  # the verifier's probability of each new token (may be empty)
    token_start: int = 0  # response tokens committed before this round (slot i writes output token token_start + i)

    def slot(self, position: int) -> SlotInspection | None:
        """What the inspector recorded at candidate slot `position` (None: not recorded)."""
        return next((s for s in self.inspected if s.position == position), None)

    @property
    def rejected_slot(self) -> SlotInspection | None:
        return None if self.full_accept else self.slot(self.k)

    def token_texts(self) -> list[str]:
        """The text of each committed token: the accepted drafts, then the verifier's token or the bonus."""
        n, k = len(self.new_tokens), self.k
        out = [self.candidate_texts[i] if i < len(self.candidate_texts) else "" for i in range(min(k, n))]
        if n > k:
            out.append(self.bonus_text() if self.full_accept else
                       (self.verified_texts[k] if k < len(self.verified_texts) else ""))
        return out[:n]

    def char_probs(self) -> list[tuple[int, int, float]]:
        """(start, end, p) character spans of this round's text with the verifier's probability of the token that
        wrote them; one span at the round's lowest probability when the token texts do not spell the text (a stop
        token's text, byte pieces)."""
        if not self.probs or self.end <= self.start:
            return []
        texts = self.token_texts()
        for drop in (0, 1):  # a stop token's text is not in the round's text
            pieces = texts[: len(texts) - drop]
            joined = "".join(pieces)
            if joined and self.text.endswith(joined):
                pos, spans = self.end - len(joined), []
                for piece, p in zip(pieces, self.probs):
                    if piece:
                        spans.append((pos, pos + len(piece), float(p)))
                    pos += len(piece)
                return spans
        return [(self.start, self.end, float(min(self.probs)))]

    @property
    def accepted(self) -> int:
        """Tokens this round confirmed (vLLM's acceptance length: the correction/bonus token included)."""
        return len(self.new_tokens)

    @property
    def cut(self) -> int | None:
        """The first candidate slot whose token was never output, when the round was cut short (a stop token
        among the accepted drafts, or the token budget): slots from here on are greyed and not counted as
        accepted. None when the round committed what the verifier's verdict gives."""
        natural = min(self.k, self.slots) + 1
        n = len(self.new_tokens)
        return n if n < natural else None

    @property
    def used(self) -> int:
        """Candidate slots accepted and output: k, cut at the stop token (or the budget)."""
        return min(self.k, len(self.new_tokens), self.slots)

    def slot_state(self, i: int) -> str:
        """What became of candidate slot `i` (`slots`: the bonus cell): accepted, rejected (the verifier's token
        replaced it), discarded (after the rejection), unused (after the stop token: never output), bonus, none."""
        if i >= self.slots:
            return "bonus" if self.full_accept else "none"
        if self.cut is not None and i >= self.cut:
            return "unused"
        if i < self.used:
            return "accepted"
        return "rejected" if i == self.k else "discarded"

    @property
    def full_accept(self) -> bool:
        return (self.bonus is not None or self.k >= len(self.candidates)) and self.cut is None

    @property
    def slots(self) -> int:
        return len(self.candidates)

    def describe(self) -> str:
        """A few lines for a tooltip."""
        lines = [f"Round {self.round_index + 1} of region {self.region_id}"]
        if self.cut is not None:
            lines.append(f"{self.used} of {self.slots} slots accepted, +{self.accepted} tokens: the decode ended at slot "
                         f"{self.cut - 1}; the {self.slots - self.cut} draft(s) after it were never output")
        elif self.full_accept:
            lines.append(f"all {self.slots} drafts accepted + bonus {visible_whitespace(self.bonus_text())!r}: +{self.accepted} tokens")
        else:
            draft = self.candidate_texts[self.k] if self.k < len(self.candidate_texts) else f"#{self.candidates[self.k]}"
            fix = self.verified_texts[self.k] if self.k < len(self.verified_texts) else f"#{self.verified[self.k]}"
            lines.append(f"{self.k} of {self.slots} drafts accepted, +{self.accepted} tokens")
            lines.append(f"rejected at position {self.k}: draft {visible_whitespace(draft)!r} ≠ verifier {visible_whitespace(fix)!r}")
        lines.append(f"draft {self.draft_ms:.1f} ms · verify {self.verify_ms:.1f} ms · cache {self.cache_len:,}")
        lines.append(f"text {visible_whitespace(self.text)[:60]!r} (chars {self.start}–{self.end})")
        return "\n".join(lines)

    def bonus_text(self) -> str:
        if len(self.verified_texts) > len(self.candidates):
            return self.verified_texts[len(self.candidates)]
        if self.full_accept and self.text and self.candidate_texts:
            tail = self.text[len("".join(self.candidate_texts)) :]
            if tail:
                return tail
        return "" if self.bonus is None else f"#{self.bonus}"


@dataclass
class RegionRounds:
    region_id: str
    task: str = ""
    engine: str = ""
    page: int = 0
    rounds: list[RoundRecord] = field(default_factory=list)
    finished: bool = False
    final_text: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    readings: list[LineReading] = field(default_factory=list)  # the document's lines beside the decoder's, once done
    # running statistics
    tokens: int = 0  # response tokens, a committed stop token excluded (the engine's `tokens`)
    output_tokens: int = 0  # every committed token, a stop token included
    stop_tokens: int = 0  # 0 or 1: the final round committed a stop token
    draft_ms: float = 0.0
    verify_ms: float = 0.0
    histogram: dict[int, int] = field(default_factory=dict)  # accepted length -> rounds
    pos_total: list[int] = field(default_factory=list)
    pos_accepted: list[int] = field(default_factory=list)
    _text: _Text = field(default_factory=_Text)
    _starts: list[int] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self._text.value

    @property
    def text_len(self) -> int:
        return len(self._text)

    def add(self, ev: RoundVerified, *, ends_with_stop: bool = False) -> RoundRecord:
        start, end = self._text.append(ev.text)
        rec = RoundRecord(
            region_id=ev.region_id,
            index=len(self.rounds),
            round_index=ev.round_index,
            k=ev.k,
            candidates=list(ev.candidates),
            verified=list(ev.verified),
            new_tokens=list(ev.new_tokens),
            text=ev.text,
            candidate_texts=list(ev.candidate_texts),
            verified_texts=list(ev.verified_texts),
            bonus=ev.bonus,
            draft_ms=float(ev.draft_ms),
            verify_ms=float(ev.verify_ms),
            cache_len=ev.cache_len,
            block_size=ev.block_size or max(0, len(ev.candidates) - 1),
            start=start,
            end=end,
            forwards=int(ev.forwards),
            inspected=list(ev.inspected),
            probs=list(ev.probs),
            token_start=self.output_tokens,
        )
        self.rounds.append(rec)
        self._starts.append(start)
        self.output_tokens += len(ev.new_tokens)
        if ends_with_stop and ev.new_tokens:
            self.stop_tokens = 1
        self.tokens = max(0, self.output_tokens - self.stop_tokens)
        self.draft_ms += rec.draft_ms
        self.verify_ms += rec.verify_ms
        self.histogram[rec.accepted] = self.histogram.get(rec.accepted, 0) + 1
        n = len(rec.candidates)
        if len(self.pos_total) < n:
            grow = n - len(self.pos_total)
            self.pos_total.extend([0] * grow)
            self.pos_accepted.extend([0] * grow)
        for i in range(n if rec.cut is None else rec.cut):  # slots past a stop token were never judged
            self.pos_total[i] += 1
            if i < rec.used:
                self.pos_accepted[i] += 1
        return rec

    def rejections(self) -> list[tuple[RoundRecord, SlotInspection]]:
        """Every round whose rejected slot the inspector recorded, closest calls (smallest margin) first."""
        found = [(rec, slot) for rec in self.rounds if (slot := rec.rejected_slot) is not None]
        return sorted(found, key=lambda pair: (pair[1].margin, pair[0].index))

    def context_before(self, rec: RoundRecord, chars: int = 80) -> str:
        """The last `chars` characters committed before round `rec` (what the model had written so far)."""
        return self.text[max(0, rec.start - chars): rec.start]

    def round_at(self, char_pos: int) -> RoundRecord | None:
        """The round that confirmed the character at `char_pos`."""
        if not self.rounds or char_pos < 0 or char_pos >= self.text_len:
            return None
        i = bisect.bisect_right(self._starts, char_pos) - 1
        while i > 0 and self.rounds[i].start == self.rounds[i].end:  # rounds that added no text
            i -= 1
        return self.rounds[max(i, 0)]

    # statistics (docs/architecture.md: TPF counts the draft and the verify forward of every round)
    @property
    def live_tpf(self) -> float:
        """Response tokens per forward so far; like the engine's figure, a committed stop token does not count."""
        forwards = sum(r.forwards for r in self.rounds)
        return self.tokens / forwards if forwards else 0.0

    @property
    def tpf(self) -> float:
        """The engine's own figure once the region finished (response tokens, stop token excluded), else live."""
        value = self.stats.get("tpf") if self.finished else None
        return float(value) if isinstance(value, (int, float)) and value > 0 else self.live_tpf

    @property
    def mean_accepted(self) -> float:
        return self.tokens / len(self.rounds) if self.rounds else 0.0

    @property
    def tokens_per_s(self) -> float:
        ms = self.draft_ms + self.verify_ms
        return self.tokens / (ms / 1000.0) if ms > 0 else 0.0

    def position_rates(self) -> list[float]:
        return [a / t if t else 0.0 for a, t in zip(self.pos_accepted, self.pos_total)]


class RoundsModel:
    """Every region's rounds, keyed by region id, in the order regions appeared."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.regions: dict[str, RegionRounds] = {}
        self.current: str | None = None  # the region most recently decoded
        self.baseline_tps: float | None = None
        self.engine: str = ""  # the engine of the latest run/region (the views explain what it can show)
        self._meta: dict[str, tuple[str, str, int]] = {}  # region id -> (task, engine, page) from RegionStarted
        self._budget: dict[str, int] = {}  # region id -> max_new_tokens from RegionStarted (0 = unknown)
        self.stop_ids: set[int] = set()  # learned from finished regions whose stats left their last token out
        self._region_stops: dict[str, set[int]] = {}  # region id -> stop ids its RegionStarted declared
        self._ar_tokens = 0
        self._ar_ms = 0.0
        self.server = ServerStats()  # what OCR servers reported about their speculative decoding (remote runs)
        self.version = 0  # bumped on every change (views compare it to skip work)

    def forget(self, region_ids) -> None:
        """Drop these regions' rounds (the oldest, to keep memory bounded: app.gui.views.decode_store)."""
        for rid in region_ids:
            for table in (self.regions, self._meta, self._budget, self._region_stops):
                table.pop(rid, None)
        if self.current not in self.regions:
            self.current = next(reversed(self.regions), None) if self.regions else None
        self.version += 1

    def region(self, region_id: str) -> RegionRounds:
        reg = self.regions.get(region_id)
        if reg is None:
            reg = self.regions[region_id] = RegionRounds(region_id)
            reg.task, reg.engine, reg.page = self._meta.get(region_id, ("", "", 0))
        return reg

    def ends_with_stop(self, reg: RegionRounds, ev: RoundVerified) -> bool:
        """Whether this round's last token is a stop token: exact when RegionStarted declared the stop ids. Older
        traces carry none, so then: an id seen ending an earlier region whose stats excluded it, a round cut short
        before its natural length (the engine truncates at a stop id or at the token budget; the budget is known
        from RegionStarted), or a special-token text."""
        new = ev.new_tokens
        if not new:
            return False
        last = new[-1]
        declared = self._region_stops.get(ev.region_id)
        if declared:
            return last in declared
        if last in self.stop_ids:
            return True
        slots = len(ev.candidates)
        natural = ev.k + 1 if ev.k < slots else slots + 1
        produced = reg.output_tokens + len(new)
        budget = self._budget.get(ev.region_id, 0)
        if slots and len(new) < natural and not (budget and produced >= budget):
            return True
        texts = dict(zip(ev.candidates, ev.candidate_texts))
        texts.update(zip(ev.verified, ev.verified_texts))
        return bool(_SPECIAL_TOKEN.fullmatch(texts.get(last, "")))

    def feed(self, ev: Event) -> RoundRecord | None | bool:
        """Apply one event. Returns the new RoundRecord for a round, True for another change, False if ignored."""
        if isinstance(ev, RoundVerified):
            reg = self.region(ev.region_id)
            self.current = ev.region_id
            self.version += 1
            return reg.add(ev, ends_with_stop=self.ends_with_stop(reg, ev))
        if isinstance(ev, RegionStarted):
            if ev.engine and ev.engine != self.engine:
                self.engine = ev.engine
                self.version += 1
            self._meta[ev.region_id] = (ev.task, ev.engine, ev.page)
            self._budget[ev.region_id] = int(ev.max_new_tokens or 0)
            self._region_stops[ev.region_id] = {int(t) for t in (ev.stop_ids or ())}
            if ev.region_id in self.regions:
                reg = self.regions[ev.region_id]
                reg.task, reg.engine, reg.page = ev.task, ev.engine, ev.page
                self.version += 1
            return True
        if isinstance(ev, RegionFinished):
            reg = self.regions.get(ev.region_id)
            if reg is None:
                self._take_baseline(ev.stats)
                if self.server.add_region(ev.stats):
                    self.version += 1
                    return True
                return False
            reg.finished = True
            reg.final_text = ev.text
            reg.stats = dict(ev.stats)
            reg.readings = line_readings(ev.stats, ev.text, reg.text, reg.task)
            self._settle_stop(reg, ev)
            self._take_baseline(ev.stats)
            self.version += 1
            return True
        if isinstance(ev, TokensCommitted):  # an AR run in the same session gives the baseline rate
            self._ar_tokens += len(ev.tokens)
            self._ar_ms += float(ev.ms)
            if self._ar_tokens >= 8 and self._ar_ms > 0:
                self.baseline_tps = self._ar_tokens / (self._ar_ms / 1000.0)
            return False
        if isinstance(ev, RunStarted):
            self.engine = ev.engine
            self.version += 1
            return True
        if isinstance(ev, RunFinished):
            self._take_baseline(ev.stats)
            if self.server.add_run(ev.stats):
                self.version += 1
                return True
            return False
        return False

    def _settle_stop(self, reg: RegionRounds, ev: RegionFinished) -> None:
        """The engine's stats say whether a stop token was committed (output_tokens - tokens): trust them over the
        live guess, and remember the stop id for the regions that follow."""
        out, kept = ev.stats.get("output_tokens"), ev.stats.get("tokens")
        if not (isinstance(out, int) and isinstance(kept, int)) or out != reg.output_tokens:
            return
        reg.stop_tokens = max(0, min(1, out - kept))
        reg.tokens = reg.output_tokens - reg.stop_tokens
        if reg.stop_tokens and ev.tokens:
            self.stop_ids.add(int(ev.tokens[-1]))

    def _take_baseline(self, stats: dict[str, Any]) -> None:
        if isinstance(stats, dict) and stats.get("mode") == "ar":  # an AR region of the same session
            value = stats.get("decode_tokens_per_s")
            if isinstance(value, (int, float)) and value > 0:
                self.baseline_tps = float(value)
                self.version += 1
                return
        for key in BASELINE_KEYS:
            value = stats.get(key) if isinstance(stats, dict) else None
            if isinstance(value, (int, float)) and value > 0:
                self.baseline_tps = float(value)
                self.version += 1
                return
