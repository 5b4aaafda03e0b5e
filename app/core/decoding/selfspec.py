"""GravityOCR's self-speculative decoding (DESIGN §3): each round drafts B tokens with the learned mask row in one
bidirectional forward, verifies them with one causal forward of the same model, and keeps the longest prefix on
which the two agree plus the verifier's next token. Greedy only; the output equals `model.generate(do_sample=False)`
token for token in fp32 for any weights.

Notation: `clen` cached tokens; `x0` the last committed token whose KV is not cached yet (none in round 0); M the
mask id; B the block size; a token at absolute index i sits at M-RoPE position i + δ.

What must never live here: prompts, text, events or Qt (glmocr_engine.py turns Round records into events).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from app.core.decoding.autoregressive import Decoded, Prefix, _sync, forward_logits, stop_index, text_positions
from app.core.decoding.stats import DecodeStats

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from app.core.engines import CancelToken

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


def window_mask(clen: int, q: int, *, causal_from: int, bidirectional: bool, device) -> "torch.Tensor":
    """Bool (1, 1, q, clen + q) mask, True = attend. Every row sees the whole cache. Inside the window, rows before
    `causal_from` (x0) see only themselves and earlier rows; with `bidirectional`, the rows from `causal_from` on (the
    masks) see those earlier rows and each other; without it the window is plain causal."""
    import torch

    inner = torch.ones(q, q, dtype=torch.bool, device=device).tril()
    if bidirectional:
        inner[causal_from:, causal_from:] = True
    mask = torch.cat([torch.ones(q, clen, dtype=torch.bool, device=device), inner], dim=1)
    return mask.view(1, 1, q, clen + q)


def for_attention(mask: "torch.Tensor", model) -> "torch.Tensor":
    """sdpa takes the bool mask as is; eager silently ignores a bool mask, so give it an additive float one."""
    import torch

    if getattr(model.config, "_attn_implementation", "sdpa") == "eager":
        dtype = model.dtype
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, torch.finfo(dtype).min)
    return mask


def draft(model, prefix: Prefix, cache, x0: int | None, seed_token: int, mask_id: int, block: int):
    """DRAFT forward: window [x0?] + [M]*B at the positions of the tokens they stand for; returns the candidates
    [a0, d1..dB] and crops the cache back (draft states are never kept). Row i predicts the token at i+1."""
    import torch

    clen = cache.get_seq_length()
    device = prefix.seed.device
    window = ([x0] if x0 is not None else []) + [mask_id] * block
    lead = len(window) - block  # 1 when x0 leads the window, else 0
    mask = window_mask(clen, len(window), causal_from=lead, bidirectional=True, device=device)
    logits = forward_logits(model, torch.tensor([window], device=device),
                            text_positions(clen, len(window), prefix.delta, device), cache, for_attention(mask, model))
    rows = logits.argmax(-1).tolist()
    cache.crop(-len(window))
    # With x0: row 0 (causal) is a0, row j is d_j. Without: a0 comes from the prefill's seed, d_j from row j-1.
    return rows if lead else [seed_token] + rows


def verify(model, prefix: Prefix, cache, x0: int | None, candidates: Sequence[int]):
    """VERIFY forward: window [x0?] + candidates, causal. Returns (verified, bonus): verified[i] = argmax of the row
    predicting candidates[i] (the prefill's seed for candidates[0] in round 0), bonus = argmax of the last row."""
    import torch

    clen = cache.get_seq_length()
    device = prefix.seed.device
    window = ([x0] if x0 is not None else []) + list(candidates)
    mask = window_mask(clen, len(window), causal_from=len(window), bidirectional=False, device=device)
    logits = forward_logits(model, torch.tensor([window], device=device),
                            text_positions(clen, len(window), prefix.delta, device), cache, for_attention(mask, model))
    rows = logits.argmax(-1).tolist()
    if x0 is None:
        rows = [int(prefix.seed.argmax())] + rows
    return rows[:-1], rows[-1]


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
) -> Decoded:
    """Self-speculative greedy decoding from a prefilled prompt. Cancel is checked before each forward; a cancelled
    decode returns what the finished rounds committed."""
    import torch

    cache = prefix.cache
    stats = DecodeStats(mode="selfspec", block_size=block_size, prefill_ms=prefix.ms)
    seed_token = int(prefix.seed.argmax())
    tokens: list[int] = []
    rounds: list[Round] = []
    x0: int | None = None
    stopped = "" if max_new_tokens > 0 else "max_new_tokens"
    stats.started()
    with torch.no_grad():
        while not stopped:
            if cancel is not None and cancel.cancelled:
                stopped = "cancelled"
                break
            t0 = time.perf_counter()
            candidates = draft(model, prefix, cache, x0, seed_token, mask_id, block_size)
            draft_ms = (time.perf_counter() - t0) * 1e3
            if draft_hook is not None:
                candidates = [int(t) for t in draft_hook(len(rounds), list(tokens), list(candidates))]
            if cancel is not None and cancel.cancelled:
                stopped = "cancelled"
                break
            t1 = time.perf_counter()
            verified, bonus = verify(model, prefix, cache, x0, candidates)
            verify_ms = (time.perf_counter() - t1) * 1e3
            k, new = accept(candidates, verified, bonus)
            cache.crop(-(len(candidates) - k))  # keep x0 and candidates[:k]; the last new token becomes x0
            x0 = new[-1]
            new, stopped = truncate(new, len(tokens), stop_ids, max_new_tokens)
            tokens.extend(new)
            stats.add_round(k, draft_ms, verify_ms)
            rnd = Round(len(rounds), k, list(candidates), list(verified), bonus if k == len(candidates) else None,
                        new, draft_ms, verify_ms, cache.get_seq_length(), len(tokens), bool(stopped))
            rounds.append(rnd)
            if on_round:
                on_round(rnd)
    stats.finished(tokens, stop_ids)
    return Decoded(tokens, stats, stopped, rounds)
