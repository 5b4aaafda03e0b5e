"""Greedy autoregressive decoding of GlmOcrForConditionalGeneration by hand, plus the pieces every GLM-OCR decoder
shares: the prefill, M-RoPE text positions, the cache and the forward call (docs/architecture.md, The self-speculative
round).

Why by hand and not `model.generate`: every forward must be observable (one event per committed token) and
cancellable, and the self-speculative decoder (selfspec.py) reuses exactly this prefill and these positions so that
both decoders agree with `generate(do_sample=False)` token for token.

What must never live here: prompts, tokenizers' text handling, events or Qt (app.core.decoding.round_events turns
tokens into events).
"""
from __future__ import annotations

import functools
import inspect
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from app.core.base.stages import timed
from app.core.decoding.stats import DecodeStats

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from app.core.base.cancel import CancelToken


@dataclass
class Prefix:
    """The state after the prompt went through the model: its KV cache, the last logit row (`seed`, which predicts
    response token 0) and the M-RoPE offset δ (a token at absolute index i sits at position i + δ)."""

    cache: Any
    seed: "torch.Tensor"  # (vocab,)
    prompt_len: int
    delta: int
    ms: float  # vision encoding + prompt forward


@dataclass
class Decoded:
    tokens: list[int]  # the response, including the stop token when one was produced (as generate() returns it)
    stats: DecodeStats
    stopped: str = ""  # "stop" | "max_new_tokens" | "cancelled"
    rounds: list[Any] = field(default_factory=list)  # self-spec Round records (empty for AR)
    logprobs: list[float] = field(default_factory=list)  # log p(token | prefix) of each token, same length

    @property
    def cancelled(self) -> bool:
        return self.stopped == "cancelled"


def cache_kwarg(model) -> str:
    """The keyword the model's forward takes the cache under: transformers ≥ 5.24 renamed `past_key_values` to
    `cache` (the old name still works with a warning). Read once per model class, not at every forward."""
    return _cache_kwarg_of(type(model))


@functools.cache
def _cache_kwarg_of(model_class: type) -> str:
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def new_cache(model):
    from transformers import DynamicCache

    return DynamicCache(config=model.config.get_text_config())


def top_logprob(logits: "torch.Tensor") -> "torch.Tensor":
    """log p of each row's argmax (greedy decoders commit exactly these tokens), in fp32, on the logits' device."""
    rows = logits.float()
    return rows.max(-1).values - rows.logsumexp(-1)


def window_attention(model, cache, inner: "torch.Tensor") -> "torch.Tensor | None":
    """The 4-D mask of a q-token window whose pattern inside the window is `inner` (q, q bool, True = attend) over
    `cache`: every cached token visible; with a static cache the buffer's stale tail hidden. Eager attention gets an
    additive float mask (it silently ignores a bool one)."""
    import torch

    from app.core.decoding.static_cache import StaticKVCache

    if isinstance(cache, StaticKVCache):
        mask = cache.key_mask(inner)
    else:
        q, clen = inner.shape[0], cache.get_seq_length()
        mask = torch.cat([torch.ones(q, clen, dtype=torch.bool, device=inner.device), inner], 1).view(1, 1, q, clen + q)
    return for_attention(mask, model)


def for_attention(mask: "torch.Tensor", model) -> "torch.Tensor":
    """sdpa takes the bool mask as is; eager silently ignores a bool mask, so give it an additive float one."""
    import torch

    if getattr(model.config, "_attn_implementation", "sdpa") == "eager":
        dtype = model.dtype
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, torch.finfo(dtype).min)
    return mask


def text_positions(start: int, count: int, delta: int, device) -> "torch.Tensor":
    """(3, 1, count) M-RoPE positions for text tokens at absolute indices start..start+count-1."""
    import torch

    pos = torch.arange(start + delta, start + delta + count, device=device)
    return pos.view(1, 1, -1).expand(3, 1, -1)


def forward_logits(model, input_ids, positions, cache, attention_mask=None, keep: int = 0) -> "torch.Tensor":
    """One text forward that appends to `cache`; returns (q, vocab) logits of the last `keep` rows (0 = all). A
    static cache runs the text decoder alone, eager or compiled (static_cache.py)."""
    from app.core.decoding.static_cache import StaticKVCache

    if isinstance(cache, StaticKVCache):
        cache.prepare(input_ids.shape[1])
        logits = cache.runner(model, input_ids, positions, attention_mask, cache)[0]
        return logits[-keep:] if keep else logits
    out = model(
        input_ids=input_ids,
        position_ids=positions,
        attention_mask=attention_mask,
        use_cache=True,
        logits_to_keep=keep,
        **{cache_kwarg(model): cache},
    )
    return out.logits[0]


def prefill(model, inputs: dict) -> Prefix:
    """Run the prompt (image included) causally with explicit M-RoPE positions from get_rope_index."""
    import torch

    t0 = time.perf_counter()
    input_ids = inputs["input_ids"]
    with torch.no_grad():
        positions, deltas = model.model.get_rope_index(
            input_ids,
            mm_token_type_ids=inputs.get("mm_token_type_ids"),
            image_grid_thw=inputs.get("image_grid_thw"),
            attention_mask=inputs.get("attention_mask"),
        )
        cache = new_cache(model)
        out = model(
            input_ids=input_ids,
            attention_mask=inputs.get("attention_mask"),
            position_ids=positions,
            pixel_values=inputs.get("pixel_values"),
            image_grid_thw=inputs.get("image_grid_thw"),
            mm_token_type_ids=inputs.get("mm_token_type_ids"),
            use_cache=True,
            logits_to_keep=1,
            **{cache_kwarg(model): cache},
        )
    seed = out.logits[0, -1]
    _sync(seed)
    return Prefix(cache, seed, int(input_ids.shape[1]), int(deltas.reshape(-1)[0]), (time.perf_counter() - t0) * 1e3)


def stop_index(tokens: Sequence[int], stop_ids: Sequence[int]) -> int | None:
    """Index of the first stop id in `tokens`, or None."""
    stops = set(stop_ids)
    return next((i for i, t in enumerate(tokens) if t in stops), None)


def _sync(tensor) -> None:
    """Make wall times honest on asynchronous devices."""
    if tensor.device.type == "cuda":
        import torch

        torch.cuda.synchronize(tensor.device)


@timed("decoder")
def ar_decode(
    model,
    prefix: Prefix,
    *,
    stop_ids: Sequence[int],
    max_new_tokens: int,
    on_token: Callable[[int, int, float, int], None] | None = None,
    cancel: "CancelToken | None" = None,
) -> Decoded:
    """Greedy AR from a prefilled prompt (its cache dynamic or static). `on_token(step, token, ms, cache_len)` is
    called after each committed token (ms = the forward that produced it; 0 for token 0, which comes from the
    prefill). Cancel is checked before every forward. The next input stays on the device: one read per token (the
    stop check), none the other way; the log-probabilities are read once at the end."""
    import torch

    from app.core.decoding.static_cache import StaticKVCache

    stats = DecodeStats(mode="ar", prefill_ms=prefix.ms)
    if max_new_tokens <= 0:
        return Decoded([], stats, "max_new_tokens")
    cache, device = prefix.cache, prefix.seed.device
    static = isinstance(cache, StaticKVCache)
    one = torch.ones(1, 1, dtype=torch.bool, device=device)
    last = prefix.seed.argmax().view(1, 1)
    logprobs = [top_logprob(prefix.seed)]
    tokens = [int(last)]  # token 0 comes from the prefill
    stats.started()
    if on_token:
        on_token(0, tokens[0], 0.0, cache.get_seq_length())
    stopped = "stop" if tokens[0] in stop_ids else ""
    with torch.no_grad():
        while not stopped:
            if len(tokens) >= max_new_tokens:
                stopped = "max_new_tokens"
                break
            if cancel is not None and cancel.cancelled:
                stopped = "cancelled"
                break
            t0 = time.perf_counter()
            clen = cache.get_seq_length()  # == prompt_len + len(tokens) - 1: the last token is not cached yet
            mask = window_attention(model, cache, one) if static else None
            logits = forward_logits(model, last, text_positions(clen, 1, prefix.delta, device), cache, mask, keep=1)
            last = logits[-1].argmax().view(1, 1)
            logprobs.append(top_logprob(logits[-1]))
            token = int(last)
            ms = (time.perf_counter() - t0) * 1e3
            tokens.append(token)
            stats.add_step(ms)
            if on_token:
                on_token(len(tokens) - 1, token, ms, cache.get_seq_length())
            if token in stop_ids:
                stopped = "stop"
    stats.finished(tokens, stop_ids)
    return Decoded(tokens, stats, stopped, logprobs=torch.stack(logprobs).tolist())
