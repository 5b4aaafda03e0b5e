"""Decoding statistics per region and per run: TPF, acceptance, draft vs verify time, throughput.

Definitions (docs/architecture.md, The self-speculative round):
- TPF = response tokens (the stop token excluded) / decode forwards (draft + verify; AR: one per step). The prefill
  and vision encoding are not counted as forwards.
- k = accepted candidates of a round (0..B+1; candidate 0 is a0, the exact AR token). `mean_accepted` is the mean
  k, `mean_accepted_drafts` the mean number of accepted mask drafts max(k−1, 0).
- per-position acceptance (vLLM's definition): rounds in which candidate i was accepted (k > i) / rounds.
- tokens/s: `decode_tokens_per_s` over the decode phase (after the prefill), `tokens_per_s` over the whole request
  (prefill and vision included).

What must never live here: torch, tokenizers, events.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence


@dataclass
class DecodeStats:
    mode: str  # "ar" | "selfspec"
    block_size: int = 0
    prefill_ms: float = 0.0
    draft_ms: float = 0.0
    verify_ms: float = 0.0
    step_ms: float = 0.0  # AR forwards
    forwards: int = 0
    rounds: int = 0
    accepted: list[int] = field(default_factory=list)  # k per round
    tokens: int = 0  # response tokens, stop token excluded
    output_tokens: int = 0  # as returned, stop token included
    decode_ms: float = 0.0
    _t0: float = 0.0

    def started(self) -> None:
        self._t0 = time.perf_counter()

    def add_step(self, ms: float) -> None:
        self.forwards += 1
        self.step_ms += ms

    def add_round(self, k: int, draft_ms: float, verify_ms: float, forwards: int = 2) -> None:
        """`forwards` < 2 when a0 alone ended the decode (no verify; round 0: not even a draft)."""
        self.rounds += 1
        self.forwards += forwards
        self.accepted.append(int(k))
        self.draft_ms += draft_ms
        self.verify_ms += verify_ms

    def finished(self, tokens: Sequence[int], stop_ids: Iterable[int]) -> None:
        self.decode_ms = (time.perf_counter() - self._t0) * 1e3 if self._t0 else 0.0
        stops = set(stop_ids)
        self.output_tokens = len(tokens)
        self.tokens = len(tokens) - (1 if tokens and tokens[-1] in stops else 0)

    def to_dict(self) -> dict[str, Any]:
        return summarize(
            dict(mode=self.mode, block_size=self.block_size, prefill_ms=self.prefill_ms, draft_ms=self.draft_ms,
                 verify_ms=self.verify_ms, step_ms=self.step_ms, forwards=self.forwards, rounds=self.rounds,
                 accepted=list(self.accepted), tokens=self.tokens, output_tokens=self.output_tokens,
                 decode_ms=self.decode_ms, regions=1)
        )


_SUMMED = ("prefill_ms", "draft_ms", "verify_ms", "step_ms", "forwards", "rounds", "tokens", "output_tokens",
           "decode_ms", "regions")


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """Add the derived figures (TPF, acceptance, rates) to the raw counters; plain JSON-able numbers only."""
    d = dict(raw)
    rounds, forwards, tokens = d["rounds"], d["forwards"], d["tokens"]
    accepted: list[int] = d["accepted"]
    bsz = d.get("block_size") or 0
    width = max([bsz + 1] + [k for k in accepted]) if (bsz or accepted) else 0
    d["tpf"] = tokens / forwards if forwards else 0.0
    d["mean_accepted"] = sum(accepted) / rounds if rounds else 0.0
    d["mean_accepted_drafts"] = sum(max(k - 1, 0) for k in accepted) / rounds if rounds else 0.0
    d["acceptance_histogram"] = [sum(1 for k in accepted if k == i) for i in range(width + 1)] if rounds else []
    d["per_position_acceptance"] = [sum(1 for k in accepted if k > i) / rounds for i in range(width)] if rounds else []
    d["total_ms"] = d["prefill_ms"] + d["decode_ms"]
    d["decode_tokens_per_s"] = tokens / (d["decode_ms"] / 1e3) if d["decode_ms"] > 0 else 0.0
    d["tokens_per_s"] = tokens / (d["total_ms"] / 1e3) if d["total_ms"] > 0 else 0.0
    d["ms_per_forward"] = (d["draft_ms"] + d["verify_ms"] + d["step_ms"]) / forwards if forwards else 0.0
    return d


def merge(per_region: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Run-level stats from region stats dicts (as produced by DecodeStats.to_dict)."""
    items = [s for s in per_region if s]
    if not items:
        return {}
    raw: dict[str, Any] = {key: sum(s.get(key, 0) for s in items) for key in _SUMMED}
    raw["accepted"] = [k for s in items for k in s.get("accepted", [])]
    modes = {s.get("mode", "") for s in items}
    raw["mode"] = modes.pop() if len(modes) == 1 else "mixed"
    raw["block_size"] = max(s.get("block_size", 0) for s in items)
    return summarize(raw)
