"""Two decodes of the same regions side by side (the A/B decoding diff): per region, both texts, the first output
token where the decodes part (with what each model believed there, when the reject inspector recorded it), TPF
and time for each, and the rounds of each by output position. Built from events alone (two traces, or two live
decodes), so `python -m app diff` and the window's A/B view agree.

What must never live here: Qt, torch, printing (app.commands.diff formats the report).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from app.core.record.events import (Event, RegionFinished, RegionStarted, RoundVerified, RunStarted, SlotInspection,
                             TokensCommitted)


@dataclass
class RegionRun:
    """One region as one decode produced it."""

    region_id: str
    engine: str = ""
    text: str = ""
    tokens: list[int] = field(default_factory=list)
    token_texts: list[str] = field(default_factory=list)  # one per token, from the rounds / steps
    probs: list[float] = field(default_factory=list)  # the verifier's p of each token, when recorded
    stats: dict[str, Any] = field(default_factory=dict)
    rounds: list[RoundVerified] = field(default_factory=list)
    round_starts: list[int] = field(default_factory=list)  # output token index of each round's first new token
    finished: bool = False

    @property
    def tpf(self) -> float:
        value = self.stats.get("tpf")
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
        forwards = sum(r.forwards for r in self.rounds) or (len(self.tokens) if not self.rounds else 0)
        return len(self.tokens) / forwards if forwards else 0.0

    @property
    def decode_ms(self) -> float:
        for key in ("decode_ms", "request_ms"):
            value = self.stats.get(key)
            if isinstance(value, (int, float)) and value > 0:
                return float(value)
        return sum(r.draft_ms + r.verify_ms for r in self.rounds)

    @property
    def mode(self) -> str:
        return str(self.stats.get("mode") or ("selfspec" if self.rounds else "ar"))

    @property
    def block_size(self) -> int:
        return int(self.stats.get("block_size") or (self.rounds[0].block_size if self.rounds else 0) or 0)

    def slot_at(self, index: int) -> SlotInspection | None:
        """What the inspector recorded at output token `index` (the round that wrote it, that slot), if anything."""
        for rnd, start in zip(self.rounds, self.round_starts):
            if start <= index < start + len(rnd.new_tokens):
                return next((s for s in rnd.inspected if s.position == index - start), None)
        return None

    def round_of(self, index: int) -> int | None:
        """The index (in `rounds`) of the round that wrote output token `index`."""
        for i, (rnd, start) in enumerate(zip(self.rounds, self.round_starts)):
            if start <= index < start + len(rnd.new_tokens):
                return i
        return None


def _round_token_texts(ev: RoundVerified) -> list[str]:
    n, k = len(ev.new_tokens), ev.k
    out = [ev.candidate_texts[i] if i < len(ev.candidate_texts) else "" for i in range(min(k, n))]
    if n > k:
        if k < len(ev.candidates):
            out.append(ev.verified_texts[k] if k < len(ev.verified_texts) else "")
        else:  # the bonus: the round's text after the accepted drafts
            joined = "".join(out)
            out.append(ev.text[len(joined):] if ev.text.startswith(joined) else "")
    return out[:n]


def regions_of(events: Iterable[Event]) -> dict[str, RegionRun]:
    """Every region a run decoded, in the order they started, from its events."""
    regions: dict[str, RegionRun] = {}

    def get(rid: str) -> RegionRun:
        if rid not in regions:
            regions[rid] = RegionRun(rid)
        return regions[rid]

    for ev in events:
        if isinstance(ev, RegionStarted):
            run = get(ev.region_id)
            run.engine = ev.engine
        elif isinstance(ev, RoundVerified):
            run = get(ev.region_id)
            run.tokens += list(ev.new_tokens)
            run.round_starts.append(len(run.token_texts))
            run.rounds.append(ev)
            texts = _round_token_texts(ev)
            run.token_texts += texts + [""] * (len(ev.new_tokens) - len(texts))
            if ev.probs:
                run.probs += list(ev.probs)
        elif isinstance(ev, TokensCommitted):
            run = get(ev.region_id)
            run.tokens += list(ev.tokens)
            run.token_texts += list(ev.token_texts) + [""] * (len(ev.tokens) - len(ev.token_texts))
        elif isinstance(ev, RegionFinished):  # its tokens (when it reports them) are the region's, whatever streamed
            run = get(ev.region_id)
            run.text, run.stats, run.finished = ev.text, dict(ev.stats), True
            if ev.tokens:
                run.tokens = list(ev.tokens)
    return regions


def run_label(events: Iterable[Event]) -> str:
    """What a trace ran: engine, block size, model, device, dtype (from its RunStarted and first region)."""
    for ev in events:
        if isinstance(ev, RunStarted):
            parts = [ev.engine or "?"]
            if ev.block_size:
                parts.append(f"B={ev.block_size}")
            parts += [p for p in (ev.model, ev.device, ev.dtype) if p]
            return " · ".join(parts)
    return "?"


@dataclass
class Divergence:
    """The first output token where two decodes of a region part."""

    index: int  # output token index
    a_token: int | None  # None: A ended here
    b_token: int | None
    a_text: str
    b_text: str
    char: int  # first differing character of the region texts (-1: the texts are equal)
    context: str  # the text both wrote before the divergence (its last 60 characters)
    a_slot: SlotInspection | None = None  # what A's models believed there (when recorded)
    b_slot: SlotInspection | None = None


@dataclass
class RegionDiff:
    region_id: str
    a: RegionRun | None
    b: RegionRun | None
    divergence: Divergence | None

    @property
    def same_text(self) -> bool:
        return self.a is not None and self.b is not None and self.a.text == self.b.text


@dataclass
class Comparison:
    regions: list[RegionDiff]
    label_a: str = ""
    label_b: str = ""

    @property
    def same(self) -> bool:
        return all(r.same_text for r in self.regions)


def first_char_difference(a: str, b: str) -> int:
    """Index of the first character where `a` and `b` differ (-1: equal)."""
    if a == b:
        return -1
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def first_divergence(a: RegionRun, b: RegionRun) -> Divergence | None:
    """The first output token that differs (by id; a decode that ended early differs by having none), or None when
    both produced the same tokens and text. Decodes that report no tokens (a remote server) differ by text only:
    index -1."""
    if a.tokens == b.tokens:
        if a.text == b.text:
            return None
        char = first_char_difference(a.text, b.text)
        return Divergence(-1, None, None, a.text[char:char + 1], b.text[char:char + 1], char, a.text[:char][-60:])
    i = next((j for j, (x, y) in enumerate(zip(a.tokens, b.tokens)) if x != y), min(len(a.tokens), len(b.tokens)))
    pick = lambda run: (run.tokens[i] if i < len(run.tokens) else None,  # noqa: E731
                        run.token_texts[i] if i < len(run.token_texts) and i < len(run.tokens) else "")
    (ta, xa), (tb, xb) = pick(a), pick(b)
    written = "".join(a.token_texts[:i])
    return Divergence(i, ta, tb, xa, xb, first_char_difference(a.text, b.text), written[-60:],
                      a.slot_at(i), b.slot_at(i))


def compare(events_a: Iterable[Event], events_b: Iterable[Event], *, regions: Iterable[str] | None = None
            ) -> Comparison:
    """Both runs' regions (A's order, then those only B decoded), each with its first divergence."""
    events_a, events_b = list(events_a), list(events_b)
    ra, rb = regions_of(events_a), regions_of(events_b)
    wanted = list(regions) if regions is not None else list(dict.fromkeys([*ra, *rb]))
    out = []
    for rid in wanted:
        a, b = ra.get(rid), rb.get(rid)
        out.append(RegionDiff(rid, a, b, first_divergence(a, b) if a is not None and b is not None else None))
    return Comparison(out, run_label(events_a), run_label(events_b))


_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff_text(a: str, b: str) -> str:
    """`a` → `b` word by word in the terminal's wdiff notation: [-only in A-]{+only in B+}."""
    wa, wb = _WORDS.findall(a), _WORDS.findall(b)
    out = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes():
        if op == "equal":
            out.append("".join(wa[a0:a1]))
            continue
        if a1 > a0:
            out.append("[-" + "".join(wa[a0:a1]) + "-]")
        if b1 > b0:
            out.append("{+" + "".join(wb[b0:b1]) + "+}")
    return "".join(out)
