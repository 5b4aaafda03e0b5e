"""Several regions decoded in one forward per step: a padded batch over a static KV cache with a write position per
row (static_cache.py), greedy AR (`batch_ar_decode`) or self-speculative in lockstep rounds (`batch_selfspec_decode`).

Each region is prefilled on its own (its image and prompt length are its own), copied into its row of the cache,
and then every step feeds one token per row at that row's own M-RoPE position; row r attends to its own cached
tokens only (the rest of its buffer is masked). A row that has finished (stop id or budget) rides along until the
batch ends and its outputs are ignored. The tokens equal decoding each region alone (fp32; tests).

What must never live here: prompts, text, events or Qt (the engine frames regions: app.core.engines.glm_engine).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Sequence

from app.core.decoding.autoregressive import Decoded, Prefix, for_attention, top_logprob
from app.core.decoding.selfspec import Round
from app.core.decoding.stats import DecodeStats

if TYPE_CHECKING:  # pragma: no cover
    from app.core.base.cancel import CancelToken

# on_token(row, step, token, ms, cache_len): row r committed its token number `step`
BatchTokenCallback = Callable[[int, int, int, float, int], None]



def _cancel_rows(cancel: "CancelToken | None", stopped: list[str]) -> bool:
    """When `cancel` is set: every row still running is marked "cancelled" (in place) and True (the loop ends
    between two forwards)."""
    if cancel is None or not cancel.cancelled:
        return False
    stopped[:] = [s or "cancelled" for s in stopped]
    return True

def batch_ar_decode(
    model,
    prefixes: Sequence[Prefix],
    *,
    stop_ids: Sequence[int],
    budgets: Sequence[int],
    on_token: BatchTokenCallback | None = None,
    cancel: "CancelToken | None" = None,
    runner=None,
) -> list[Decoded]:
    """Greedy AR of len(prefixes) prefilled prompts together; one Decoded per prompt, in order. Cancel is checked
    before every forward. One read of the batch's new tokens per step; none the other way. `runner`: a compiled
    forward (static_cache.compiled_logits), else eager."""
    import torch

    rows = len(prefixes)
    stops = set(int(t) for t in stop_ids)
    stats = [DecodeStats(mode="ar", prefill_ms=p.ms) for p in prefixes]
    tokens: list[list[int]] = [[] for _ in prefixes]
    stopped = ["" if b > 0 else "max_new_tokens" for b in budgets]
    cache, deltas = _batch_cache(model, prefixes, max(budgets), 0, runner)
    seeds = torch.stack([p.seed for p in prefixes])
    last = seeds.argmax(-1)  # (rows,)
    logprobs = [top_logprob(seeds)]  # (rows,) per step
    for s in stats:
        s.started()
    _commit(last.tolist(), tokens, stopped, stats, stops, budgets, on_token, 0.0, cache.lengths)
    with torch.no_grad():
        while not all(stopped):
            if _cancel_rows(cancel, stopped):
                break
            t0 = time.perf_counter()
            lengths = cache.row_lengths
            mask = cache.step_mask(lengths)
            mask = for_attention(mask, model)
            positions = (lengths + deltas).view(1, rows, 1).expand(3, rows, 1)
            cache.prepare(1)
            step_logits = cache.runner(model, last.view(rows, 1), positions, mask, cache)[:, -1]
            last = step_logits.argmax(-1)
            logprobs.append(top_logprob(step_logits))
            ms = (time.perf_counter() - t0) * 1e3
            _commit(last.tolist(), tokens, stopped, stats, stops, budgets, on_token, ms, cache.lengths)
    table = torch.stack(logprobs, 1).tolist() if tokens else []  # (rows, steps)
    results = []
    for row, (toks, s) in enumerate(zip(tokens, stats)):
        if stopped[row] == "cancelled" or not toks:
            s.finished(toks, stops)
        results.append(Decoded(toks, s, stopped[row], logprobs=table[row][: len(toks)]))
    return results


def _commit(new: list[int], tokens, stopped, stats, stops, budgets, on_token, ms: float, lengths) -> None:
    """Append each live row's token, count its forward, and mark the rows this step finished."""
    for row, token in enumerate(new):
        if stopped[row]:
            continue
        tokens[row].append(token)
        if ms:
            stats[row].add_step(ms)
        if on_token:
            on_token(row, len(tokens[row]) - 1, token, ms, lengths[row])
        if token in stops:
            stopped[row] = "stop"
        elif len(tokens[row]) >= budgets[row]:
            stopped[row] = "max_new_tokens"
        if stopped[row]:
            stats[row].finished(tokens[row], stops)  # the row's decode time ends with its last token


def _batch_cache(model, prefixes: Sequence[Prefix], budget: int, block: int, runner):
    """A static cache with one row per prefilled prompt (each copied from its DynamicCache, which is dropped) and
    the rows' M-RoPE offsets."""
    import torch

    from app.core.decoding.static_cache import StaticKVCache, static_capacity

    first = prefixes[0].cache
    cache = StaticKVCache(model.config.get_text_config(), rows=len(prefixes),
                          capacity=static_capacity([p.cache.get_seq_length() for p in prefixes], budget, block),
                          dtype=first.layers[0].keys.dtype, device=prefixes[0].seed.device)
    cache.use(runner)
    for row, prefix in enumerate(prefixes):
        cache.load_row(row, prefix.cache)
        prefix.cache = None  # the row holds it now; the dynamic copy can go
    return cache, torch.tensor([p.delta for p in prefixes], dtype=torch.long, device=cache.device)


# on_round(row, Round): row r finished a round (its record numbered in its own decode)
BatchRoundCallback = Callable[[int, Round], None]


def batch_selfspec_decode(
    model,
    prefixes: Sequence[Prefix],
    *,
    mask_id: int,
    block_size: int,
    stop_ids: Sequence[int],
    budgets: Sequence[int],
    on_round: BatchRoundCallback | None = None,
    cancel: "CancelToken | None" = None,
    runner=None,
    draft_hook: Callable[[int, int, list[int], list[int]], list[int]] | None = None,
    inspect=None,
) -> list[Decoded]:
    """Self-speculative decoding of several prompts in lockstep rounds: one draft forward and one verify forward for
    all rows, each row accepting its own k. Exact for the same reason batched AR is: row r attends only to its own
    cache and window (the mask is per row), and rolling back is moving row r's write position by its own count.
    Every row's draft and verify windows have the same shape, so the rows stay in step; a finished row rides along
    and is rolled back entirely every round. One read of all rows' candidates and verdicts per round.
    `draft_hook(row, round, output, candidates) -> candidates` lets tests feed oracle drafts row by row.
    `inspect` (InspectOptions, when someone listens): each Round carries the reject inspector's slots."""
    import torch

    from app.core.decoding.selfspec import accept, inner_mask, inspect_round, truncate

    rows, block = len(prefixes), block_size
    stops = set(int(t) for t in stop_ids)
    stats = [DecodeStats(mode="selfspec", block_size=block, prefill_ms=p.ms) for p in prefixes]
    tokens: list[list[int]] = [[] for _ in prefixes]
    records: list[list[Round]] = [[] for _ in prefixes]
    logprobs: list[list] = [[] for _ in prefixes]
    stopped = ["" if b > 0 else "max_new_tokens" for b in budgets]
    seeds = torch.stack([p.seed for p in prefixes])
    cache, deltas = _batch_cache(model, prefixes, max(budgets), block, runner)
    device = cache.device
    masks = torch.full((rows, block), int(mask_id), dtype=torch.long, device=device)
    patterns = {False: inner_mask(block, causal_from=0, bidirectional=True, device=device),
                True: inner_mask(block + 1, causal_from=1, bidirectional=True, device=device)}
    causal = inner_mask(block + 1, causal_from=block + 1, bidirectional=False, device=device)

    def forward(window, inner):
        q = window.shape[1]
        lengths = cache.row_lengths
        positions = ((lengths + deltas).view(-1, 1) + torch.arange(q, device=device)).unsqueeze(0).expand(3, -1, -1)
        mask = for_attention(cache.window_masks(inner), model)
        cache.prepare(q)
        return cache.runner(model, window, positions, mask, cache)

    x0 = None  # (rows, 1): each row's last committed token, not cached yet
    for s in stats:
        s.started()
    with torch.no_grad():
        while not all(stopped):
            if _cancel_rows(cancel, stopped):
                break
            t0 = time.perf_counter()
            lead = x0 is not None
            logits = forward(torch.cat([x0, masks], 1) if lead else masks, patterns[lead])
            if inspect is not None:  # a compiled runner may reuse its output buffer for the verify
                logits = logits.clone()
            if lead:
                candidates, lp0 = logits.argmax(-1), top_logprob(logits[:, 0])
            else:
                candidates, lp0 = torch.cat([seeds.argmax(-1, keepdim=True), logits.argmax(-1)], 1), top_logprob(seeds)
            cache.crop_rows([block] * rows)  # the masks go; x0 (causal, exact) stays
            a0 = candidates[:, 0].tolist() if draft_hook is not None else None
            if draft_hook is not None:
                drafted = candidates.tolist()
                candidates = torch.tensor([drafted[r] if stopped[r] else draft_hook(r, len(records[r]), list(tokens[r]),
                                                                                    drafted[r]) for r in range(rows)],
                                          dtype=torch.long, device=device)
            draft_ms = (time.perf_counter() - t0) * 1e3
            if _cancel_rows(cancel, stopped):
                break
            t1 = time.perf_counter()
            vlogits = forward(candidates, causal)
            checks, vlp = vlogits.argmax(-1), top_logprob(vlogits)
            host = torch.cat([candidates, checks], 1).tolist()  # the round's one read
            verify_ms = (time.perf_counter() - t1) * 1e3
            drop, following = [], []
            for r in range(rows):
                if stopped[r]:  # roll the whole round back (x0's slot included)
                    drop.append(block + 1 + int(lead))
                    following.append(0)
                    continue
                cands, verdicts = host[r][: block + 1], host[r][block + 1:]
                first = a0[r] if a0 is not None else cands[0]  # the model's own a0 (exact), whatever was drafted
                k, new = accept(cands, [first] + verdicts[:-1], verdicts[-1])
                drop.append(block + 1 - k)
                following.append(new[-1])
                new, stopped[r] = truncate(new, len(tokens[r]), stop_ids, budgets[r])
                logprobs[r].append(torch.cat([lp0[r:r + 1], vlp[r]])[: len(new)])
                inspected, probs = ([], []) if inspect is None else inspect_round(
                    inspect, logits[r], vlogits[r], None if lead else seeds[r], cands, k, logprobs[r][-1])
                tokens[r].extend(new)
                stats[r].add_round(min(k, len(new)), draft_ms, verify_ms)  # slots past a stop: never output
                rnd = Round(len(records[r]), k, cands, [first] + verdicts[:-1],
                            verdicts[-1] if k == len(cands) else None, new, draft_ms, verify_ms,
                            cache.lengths[r] - (block + 1 - k), len(tokens[r]), bool(stopped[r]),
                            inspected=inspected, probs=probs)
                records[r].append(rnd)
                if on_round:
                    on_round(r, rnd)
                if stopped[r]:
                    stats[r].finished(tokens[r], stops)
            cache.crop_rows(drop)
            x0 = torch.tensor(following, dtype=torch.long, device=device).view(rows, 1)
    results = []
    for r in range(rows):
        if stopped[r] == "cancelled" or not tokens[r]:
            stats[r].finished(tokens[r], stops)
        lps = torch.cat(logprobs[r]).tolist() if logprobs[r] else []
        results.append(Decoded(tokens[r], stats[r], stopped[r], records[r], logprobs=lps))
    return results
