"""Greedy AR decoding of several regions in one forward per step: a padded batch over a static KV cache with a write
position per row (static_cache.py).

Each region is prefilled on its own (its image and prompt length are its own), copied into its row of the cache,
and then every step feeds one token per row at that row's own M-RoPE position; row r attends to its own cached
tokens only (the rest of its buffer is masked). A row that has finished (stop id or budget) rides along until the
batch ends and its outputs are ignored. The tokens equal decoding each region alone (fp32; tests).

What must never live here: prompts, text, events or Qt (the engine frames regions; glmocr.py).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Sequence

from app.core.decoding.autoregressive import Decoded, Prefix, top_logprob
from app.core.decoding.stats import DecodeStats

if TYPE_CHECKING:  # pragma: no cover
    from app.core.engines import CancelToken

# on_token(row, step, token, ms, cache_len): row r committed its token number `step`
BatchTokenCallback = Callable[[int, int, int, float, int], None]


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

    from app.core.decoding.static_cache import StaticKVCache, static_capacity

    rows = len(prefixes)
    device = prefixes[0].seed.device
    stops = set(int(t) for t in stop_ids)
    stats = [DecodeStats(mode="ar", prefill_ms=p.ms) for p in prefixes]
    tokens: list[list[int]] = [[] for _ in prefixes]
    stopped = ["" if b > 0 else "max_new_tokens" for b in budgets]
    first = prefixes[0].cache
    cache = StaticKVCache(model.config.get_text_config(), rows=rows,
                          capacity=static_capacity([p.cache.get_seq_length() for p in prefixes], max(budgets)),
                          dtype=first.layers[0].keys.dtype, device=device)
    if runner is not None:
        cache.runner = runner
    for row, prefix in enumerate(prefixes):
        cache.load_row(row, prefix.cache)
        prefix.cache = None  # the row holds it now; the dynamic copy can go
    deltas = torch.tensor([p.delta for p in prefixes], dtype=torch.long, device=device)
    seeds = torch.stack([p.seed for p in prefixes])
    last = seeds.argmax(-1)  # (rows,)
    logprobs = [top_logprob(seeds)]  # (rows,) per step
    eager = getattr(model.config, "_attn_implementation", "sdpa") == "eager"
    for s in stats:
        s.started()
    _commit(last.tolist(), tokens, stopped, stats, stops, budgets, on_token, 0.0, cache.lengths)
    with torch.no_grad():
        while not all(stopped):
            if cancel is not None and cancel.cancelled:
                stopped = [s or "cancelled" for s in stopped]
                break
            t0 = time.perf_counter()
            lengths = cache.row_lengths
            mask = cache.step_mask(lengths)
            if eager:
                dtype = model.dtype
                mask = torch.zeros(mask.shape, dtype=dtype, device=device).masked_fill(~mask, torch.finfo(dtype).min)
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
