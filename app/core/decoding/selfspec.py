"""GravityOCR's self-speculative decoding (docs/architecture.md, The self-speculative round): each round drafts B tokens
with the learned mask row in one bidirectional forward, verifies them with one causal forward of the same model, and
keeps the longest prefix on which the two agree plus the verifier's next token. Greedy only; the output equals
`model.generate(do_sample=False)` token for token in fp32 for any weights.

Notation: `clen` cached tokens; `x0` the last committed token whose KV is not cached yet (none in round 0); M the
mask id; B the block size; a token at absolute index i sits at M-RoPE position i + δ. x0 leads the draft window
causally, so the draft already computes its exact key/values (and a0, the exact AR token): they are kept, and the
verify runs the B+1 candidates only. Draft and verify therefore have the same shape (B+1 rows) from round 1 on.

What must never live here: prompts, text, events or Qt (app/core/decoding/round_events.py turns Round records into
events).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

from app.core.base.stages import timed
from app.core.decoding.autoregressive import (Decoded, Prefix, forward_logits, stop_index, text_positions, top_logprob,
                                              window_attention)
from app.core.decoding.inspector import InspectOptions, inspect_slots, slot_count, slot_rows
from app.core.decoding.stats import DecodeStats

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from app.core.base.cancel import CancelToken

# draft_hook(round_index, output_so_far, candidates) -> candidates: lets tests feed oracle drafts.
DraftHook = Callable[[int, list[int], list[int]], list[int]]


@dataclass
class Round:
    """One draft + verify round, as the visualiser needs it."""

    index: int
    k: int  # accepted candidates: first i with candidates[i] != verified[i], else B+1
    candidates: list[int]  # [a0, d1..dB]
    verified: list[int]  # the verifier's argmax for each candidate's position
    bonus: int | None  # the verifier's token after the last candidate (used when k == B+1)
    new_tokens: list[int]  # committed this round, truncated at a stop id / max_new_tokens
    draft_ms: float
    verify_ms: float
    cache_len: int  # after the round's crop
    output_len: int  # response tokens committed so far, this round included
    final: bool = False  # the decode stopped after this round (stop id or max_new_tokens)
    forwards: int = 2  # 1 when a0 alone ended the decode (no verify), 0 when the prefill's token did (round 0)
    inspected: list[dict] = field(default_factory=list)  # the inspector's slots (inspector.py), when asked for
    probs: list[float] = field(default_factory=list)  # p(token) of each new token, when the inspector is on


def inner_mask(q: int, *, causal_from: int, bidirectional: bool, device) -> "torch.Tensor":
    """Bool (q, q) pattern inside a window, True = attend: rows before `causal_from` (x0) see only themselves and
    earlier rows; with `bidirectional`, the rows from `causal_from` on (the masks) see those earlier rows and each
    other; without it the window is plain causal."""
    import torch

    inner = torch.ones(q, q, dtype=torch.bool, device=device).tril()
    if bidirectional:
        inner[causal_from:, causal_from:] = True
    return inner


def window_mask(clen: int, q: int, *, causal_from: int, bidirectional: bool, device) -> "torch.Tensor":
    """Bool (1, 1, q, clen + q) mask over a dynamic cache of `clen` tokens: every row sees the whole cache, and
    `inner_mask` inside the window."""
    import torch

    inner = inner_mask(q, causal_from=causal_from, bidirectional=bidirectional, device=device)
    mask = torch.cat([torch.ones(q, clen, dtype=torch.bool, device=device), inner], dim=1)
    return mask.view(1, 1, q, clen + q)


class _Windows:
    """The two window shapes of a decode (draft: [x0?] + B masks, bidirectional over the masks; verify: the B+1
    candidates, causal), their in-window patterns built once, and the mask-token ids kept on the device."""

    def __init__(self, block: int, mask_id: int, device) -> None:
        import torch

        self.block = block
        self.masks = torch.full((block,), int(mask_id), dtype=torch.long, device=device)
        self.first_draft = inner_mask(block, causal_from=0, bidirectional=True, device=device)
        self.draft = inner_mask(block + 1, causal_from=1, bidirectional=True, device=device)
        self.verify = inner_mask(block + 1, causal_from=block + 1, bidirectional=False, device=device)


def draft(model, prefix: Prefix, cache, x0, windows: _Windows):
    """DRAFT forward: window [x0?] + [M]*B at the positions of the tokens they stand for. Row i predicts the token at
    i+1, so with x0 row 0 (causal: it sees the cache and itself only) is the exact AR token a0 and row j is d_j;
    without x0 (round 0) a0 is the prefill's seed and d_j comes from row j-1. Returns the candidates [a0, d1..dB]
    and log p(a0) as device tensors. x0's key/values are exact (its row is causal), so they stay in the cache;
    the mask rows are cropped away. Also returns the window's logit rows (the inspector reads them)."""
    import torch

    clen = cache.get_seq_length()
    device = prefix.seed.device
    if x0 is None:
        window, inner = windows.masks, windows.first_draft
    else:
        window, inner = torch.cat([x0, windows.masks]), windows.draft
    logits = forward_logits(model, window.view(1, -1), text_positions(clen, len(window), prefix.delta, device), cache,
                            window_attention(model, cache, inner))
    rows = logits.argmax(-1)
    cache.crop(-windows.block)
    if x0 is None:
        return torch.cat([prefix.seed.argmax().view(1), rows]), top_logprob(prefix.seed).view(1), logits
    return rows, top_logprob(logits[0]).view(1), logits


def verify(model, prefix: Prefix, cache, candidates, windows: _Windows):
    """VERIFY forward: the candidates, causal, after x0 (already cached by the draft). Row i predicts candidate i+1;
    the last row is the bonus. Returns the argmax rows, their log-probabilities and the logits as device tensors."""
    clen = cache.get_seq_length()
    device = prefix.seed.device
    logits = forward_logits(model, candidates.view(1, -1), text_positions(clen, len(candidates), prefix.delta, device),
                            cache, window_attention(model, cache, windows.verify))
    return logits.argmax(-1), top_logprob(logits), logits


def accept(candidates: Sequence[int], verified: Sequence[int], bonus: int) -> tuple[int, list[int]]:
    """k = first i with candidates[i] != verified[i] (else all); new tokens = candidates[:k] + [verified[k]] or
    candidates + [bonus]."""
    k = next((i for i, (c, p) in enumerate(zip(candidates, verified)) if c != p), len(candidates))
    new = list(candidates[:k]) + [verified[k] if k < len(candidates) else bonus]
    return k, new


def truncate(new: list[int], produced: int, stop_ids: Sequence[int], max_new_tokens: int) -> tuple[list[int], str]:
    """Cut a round's new tokens at the first stop id (kept, as generate() keeps it) and at the token budget;
    returns them with the reason decoding ends ("" when it goes on)."""
    new = new[: max(0, max_new_tokens - produced)]
    at_stop = stop_index(new, stop_ids)
    if at_stop is not None:
        return new[: at_stop + 1], "stop"
    return new, "max_new_tokens" if produced + len(new) >= max_new_tokens else ""


def inspect_round(options: InspectOptions, dlogits, vlogits, seed, candidates: Sequence[int], k: int, lp_new
                  ) -> tuple[list[dict], list[float]]:
    """The inspector's slots of one round and its new tokens' probabilities (two small reads). `dlogits` None: round 0
    ended on the prefill's token (slot 0 = the seed); `seed`: the prefill's row in round 0, else None."""
    import torch

    slots = options.slots(k, min(len(candidates), slot_count(dlogits, vlogits, seed)))
    probs = torch.exp(lp_new).tolist()
    if not slots:
        return [], probs
    drafter, verifier = slot_rows(dlogits, vlogits, seed, slots)
    return inspect_slots(drafter, verifier, candidates, slots, k, options.top_k), probs


@timed("decoder")
def selfspec_decode(
    model,
    prefix: Prefix,
    *,
    mask_id: int,
    block_size: int,
    stop_ids: Sequence[int],
    max_new_tokens: int,
    on_round: Callable[[Round], None] | None = None,
    cancel: "CancelToken | None" = None,
    draft_hook: DraftHook | None = None,
    read_a0: bool | None = None,
    inspect: InspectOptions | None = None,
) -> Decoded:
    """Self-speculative greedy decoding from a prefilled prompt (its cache dynamic or static). Cancel is checked
    before each forward; a cancelled decode returns what the finished rounds committed.

    Host work per round: the candidates stay on the device and feed the verify directly; the round's tokens are
    read once. `read_a0` (default: on CPU, where forwards are synchronous and a read costs nothing) also reads a0
    after the draft, so that a verify is skipped when a0 is a stop id; on an accelerator that would cost a second
    sync every round to save one verify per region. A verify is always skipped when a0 reaches the budget, and
    round 0 needs no forward at all when the prefill's token already ends the decode.

    `inspect` (only when someone listens: it costs two small reads a round): each Round carries the inspector's
    slots (inspector.py) and its new tokens' probabilities, from the logits the round already has."""
    import torch

    cache, device = prefix.cache, prefix.seed.device
    read_a0 = device.type == "cpu" if read_a0 is None else read_a0
    stats = DecodeStats(mode="selfspec", block_size=block_size, prefill_ms=prefix.ms)
    windows = _Windows(block_size, mask_id, device)
    seed_token = int(prefix.seed.argmax())
    tokens: list[int] = []
    logprobs: list = []  # device tensors, read once at the end
    rounds: list[Round] = []
    x0 = None  # device (1,) tensor: the last committed token, not cached yet
    stopped = "" if max_new_tokens > 0 else "max_new_tokens"
    stats.started()
    with torch.no_grad():
        while not stopped:
            if cancel is not None and cancel.cancelled:
                stopped = "cancelled"
                break
            a0_ends = len(tokens) + 1 >= max_new_tokens  # a0 alone fills the budget
            t0 = time.perf_counter()
            host: list[int] | None = None  # the candidates, once read
            dlogits = vlogits = None
            if x0 is None and (a0_ends or seed_token in stop_ids):
                drafted, lp0, forwards, host = None, top_logprob(prefix.seed).view(1), 0, [seed_token]
            else:
                drafted, lp0, dlogits = draft(model, prefix, cache, x0, windows)
                if inspect is not None and getattr(cache, "runner", None) is not None:
                    dlogits = dlogits.clone()  # a compiled runner may reuse its output buffer for the verify
                forwards = 1
                if read_a0 or a0_ends or draft_hook is not None:
                    host = drafted.tolist()
            draft_ms = (time.perf_counter() - t0) * 1e3
            a0 = host[0] if host is not None else None
            if draft_hook is not None and drafted is not None:
                host = [int(t) for t in draft_hook(len(rounds), list(tokens), list(host))]
                drafted = torch.tensor(host, dtype=torch.long, device=device)
            if a0_ends or (a0 is not None and a0 in stop_ids):  # a0 ends the decode: nothing to verify
                candidates, verified, bonus, verify_ms = host[:1], [a0], None, 0.0  # one slot: a0 alone
                k, new = (1 if candidates[0] == a0 else 0), [a0]
                lp_round = lp0
            else:
                if cancel is not None and cancel.cancelled:
                    stopped = "cancelled"
                    break
                t1 = time.perf_counter()
                rows, vlp, vlogits = verify(model, prefix, cache, drafted, windows)
                forwards += 1
                if host is None:  # the round's one read: candidates and verdicts together
                    both = torch.cat([drafted, rows]).tolist()
                    host, checks = both[: block_size + 1], both[block_size + 1:]
                    a0 = host[0]
                else:
                    checks = rows.tolist()
                verify_ms = (time.perf_counter() - t1) * 1e3
                candidates, verified, bonus = host, [a0] + checks[:-1], checks[-1]
                k, new = accept(candidates, verified, bonus)
                cache.crop(-(len(candidates) - k))  # keep candidates[:k] after x0; the last new token is x0
                x0 = rows[k - 1:k] if k else drafted.new_tensor([a0])
                lp_round = torch.cat([lp0, vlp])
            new, stopped = truncate(new, len(tokens), stop_ids, max_new_tokens)
            logprobs.append(lp_round[: len(new)])
            inspected, probs = [], []
            if inspect is not None:
                inspected, probs = inspect_round(inspect, dlogits, vlogits, prefix.seed if not rounds else None,
                                                 candidates, k, lp_round[: len(new)])
            tokens.extend(new)
            # a stop token (or the budget) inside the accepted drafts: the slots after it were never output, so they
            # do not count as accepted (the rounds view greys them; the report and the map read these figures)
            stats.add_round(min(k, len(new)), draft_ms, verify_ms, forwards=forwards)
            rnd = Round(len(rounds), k, list(candidates), list(verified), bonus if k == len(candidates) else None,
                        new, draft_ms, verify_ms, cache.get_seq_length(), len(tokens), bool(stopped), forwards,
                        inspected, probs)
            rounds.append(rnd)
            if on_round:
                on_round(rnd)
    stats.finished(tokens, stop_ids)
    lps = torch.cat(logprobs).tolist() if logprobs else []
    return Decoded(tokens, stats, stopped, rounds, logprobs=lps)
