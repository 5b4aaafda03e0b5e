"""R-SWA decoding (docs/architecture.md, The R-SWA window): greedy decoding with transformers' native
`UnlimitedOcrForConditionalGeneration`, its reference-sliding-window KV cache, a window observer that reads the real
cache, and the windowed no-repeat n-gram blocker that reports when it intervenes.

Window semantics (verified against an explicit mask in tests/test_rswa.py): output token j sits at absolute
position P + j (P = prefix length: BOS, image tokens of every page, prompt). Output 0 comes from the prefill. Decode
step c feeds output c-1 and predicts output c; its query sees the whole prefix plus outputs [max(0, c-W), c-1]
(W = `sliding_window`, the fed token included). Output c-W-1 leaves the window at step c. The dynamic cache then
holds P + min(c, W-1) positions, the static one P + W pre-allocated slots; full attention would hold P + c.

The observer shadows `update` of ONE cache-layer instance (an instance attribute, so nothing global changes; never
subclass the layer class: that re-registers the layer type for the whole process) and reads integers and tensor
shapes only: no tensor is copied.

What must never live here: events, Qt, page images (see app/core/engines/unlimited.py for the document engine).
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import torch

from app.core.decoding.autoregressive import cache_kwarg

REFERENCE_LAYER = "reference_sliding_attention"


# --- sizes --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KVGeometry:
    """What one cached position costs: 2 (K and V) × layers × kv_heads × head_dim × dtype bytes."""

    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int

    @property
    def bytes_per_position(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes

    @classmethod
    def of(cls, model, dtype: torch.dtype | None = None) -> "KVGeometry":
        cfg = model.config.get_text_config()
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        dtype = dtype or next(model.parameters()).dtype
        return cls(cfg.num_hidden_layers, cfg.num_key_value_heads or cfg.num_attention_heads, head_dim,
                   torch.empty((), dtype=dtype).element_size())


# The released checkpoint (DeepSeek-OCR decoder): 12 layers, MHA 10 × 128, bf16 → 61,440 bytes per position.
REAL_GEOMETRY = KVGeometry(layers=12, kv_heads=10, head_dim=128, dtype_bytes=2)


# --- the window observer -----------------------------------------------------------------------------------------


@dataclass
class WindowState:
    """The window after one cache update, read from the live cache layer (integers only)."""

    kind: str  # "prefill" | "decode" | "full" (a full-attention cache: nothing is ever evicted)
    prefix_len: int  # P
    step: int  # 0 for the prefill (predicts output 0); c for the decode step that feeds output c-1
    attended: tuple[int, int]  # half-open range of output indices the query saw (fed token included)
    evicted: int | None  # output index that left the window at this step
    stored: tuple[int, int]  # half-open range of output indices physically held after the update
    cache_positions: int  # positions allocated per layer after the update (prefix + window slots)
    full_positions: int  # what full attention would hold after the update (P + c)


class WindowObserver:
    """Shadows `update` of one cache-layer instance and keeps the latest `WindowState`.

    Works with the dynamic and the static reference-sliding layers and, for comparison, with a plain full-attention
    `DynamicLayer` (kind "full")."""

    def __init__(self, cache, layer_index: int = 0) -> None:
        self.layer = cache.layers[layer_index]
        self.state: WindowState | None = None
        self.updates = 0
        self._attached = False

    def attach(self) -> "WindowObserver":
        if self._attached:
            return self
        original = self.layer.update  # the bound method of this instance

        def update(key_states, value_states, *args, **kwargs):
            out = original(key_states, value_states, *args, **kwargs)
            self.updates += 1
            self.state = self._read(int(key_states.shape[-2]))
            return out

        self.layer.update = update  # instance attribute: the class (and every other cache) is untouched
        self._attached = True
        return self

    def detach(self) -> None:
        if self._attached:
            del self.layer.update
            self._attached = False

    def __enter__(self) -> "WindowObserver":
        return self.attach()

    def __exit__(self, *exc) -> None:
        self.detach()

    def _read(self, new_tokens: int) -> WindowState:
        layer = self.layer
        if getattr(layer, "_layer_type", None) != REFERENCE_LAYER:  # full attention: everything stays
            held = _rows(getattr(layer, "keys", None))
            if self.state is None:
                prefix = held
            else:
                prefix = self.state.prefix_len
            c = held - prefix
            return WindowState("full" if c else "prefill", prefix, c, (0, max(0, c)), None, (0, max(0, c)), held, held)
        prefix = int(layer.prefill_length or layer.prefill_cumulative_length)
        # the sliding part counts the fed output tokens; this update fed output c-1, so it is decode step c
        c = int(layer.cumulative_length_int if hasattr(layer, "cumulative_length_int") else layer.cumulative_length)
        if c == 0:  # still (or just done) prefilling
            allocated = self._allocated(layer, prefix)
            return WindowState("prefill", prefix, 0, (0, 0), None, (0, 0), allocated, prefix)
        w = int(layer.sliding_window)
        attended = (max(0, c - w), c)
        evicted = c - w - 1 if c - w - 1 >= 0 and new_tokens == 1 else None
        if hasattr(layer, "all_keys"):  # static: W slots, the fed token kept until the next step rolls it out
            stored = (max(0, c - w), c)
        else:  # dynamic: the last W-1 fed tokens stay
            stored = (c - _rows(layer.keys), c)
        return WindowState("decode", prefix, c, attended, evicted, stored, self._allocated(layer, prefix), prefix + c)

    @staticmethod
    def _allocated(layer, prefix: int) -> int:
        if getattr(layer, "all_keys", None) is not None:  # static: one buffer [prefix | W slots]
            return int(layer.all_keys.shape[-2])
        return prefix + _rows(getattr(layer, "keys", None))


def _rows(states) -> int:
    """Cached positions in a (batch, heads, positions, dim) tensor; 0 for a layer's empty placeholder."""
    return int(states.shape[-2]) if states is not None and states.dim() >= 2 else 0


# --- the n-gram blocker ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ban:
    token: int
    ngram_start: int  # absolute index (prompt + output) where the earlier occurrence of the n-gram began


class NgramBlocker:
    """Bans any token that would complete an n-gram already present among the last `window` tokens of
    prompt + output, exactly like transformers' `UnlimitedOcrSlidingWindowNoRepeatNgramLogitsProcessor` (and the
    authors' SGLang processor), and says which n-gram caused each ban."""

    def __init__(self, ngram_size: int, window: int) -> None:
        if ngram_size < 1 or window < 1:
            raise ValueError("ngram_size and window must be positive")
        self.n = int(ngram_size)
        self.window = int(window)

    def banned(self, ids: Sequence[int]) -> list[Ban]:
        """Tokens banned for the next position given all ids so far (prompt + output)."""
        n = self.n
        start = max(0, len(ids) - self.window)
        win = ids[start:]
        if len(win) < n:  # no n-gram is complete yet
            return []
        if n == 1:
            return [Ban(t, start + i) for i, t in enumerate(dict.fromkeys(win))]
        t = torch.as_tensor(list(win), dtype=torch.long)
        suffix = t[len(win) - (n - 1):]
        grams = t[:-1].unfold(0, n - 1, 1)  # every (n-1)-gram that is followed by a token inside the window
        hits = torch.nonzero((grams == suffix).all(dim=1)).flatten().tolist()
        bans: dict[int, int] = {}
        for i in hits:
            bans.setdefault(int(win[i + n - 1]), start + i)
        return [Ban(tok, s) for tok, s in bans.items()]


# --- decoding ----------------------------------------------------------------------------------------------------


def make_cache(model, kind: str, max_len: int):
    """A cache built from the model's text config (a bare `DynamicCache()` would silently give full attention).
    `kind`: "dynamic" or "static" (pre-allocates prefix + W slots for R-SWA layers, `max_len` for full ones)."""
    from transformers import DynamicCache, StaticCache

    text_cfg = model.config.get_text_config()
    if kind == "dynamic":
        return DynamicCache(config=text_cfg)
    if kind == "static":
        return StaticCache(config=text_cfg, max_cache_len=int(max_len))
    raise ValueError(f"cache kind must be 'dynamic' or 'static', not {kind!r}")


def full_attention_twin(model):
    """The same weights with every decoder layer on full causal attention (for benchmarks and comparisons)."""
    cfg = copy.deepcopy(model.config)
    text_cfg = cfg.get_text_config()
    text_cfg.layer_types = ["full_attention"] * text_cfg.num_hidden_layers
    param = next(model.parameters())
    twin = type(model)._from_config(cfg, dtype=param.dtype, attn_implementation=model.config._attn_implementation)
    twin.load_state_dict(model.state_dict())
    return twin.to(param.device).eval()


@dataclass
class Step:
    """One produced output token."""

    index: int  # output index (0 = from the prefill)
    token: int
    window: WindowState | None
    bans: list[Ban] = field(default_factory=list)  # bans that changed the greedy choice at this step
    ms: float = 0.0
    logits: torch.Tensor | None = None  # the step's last-row logits before the blocker (keep_logits=True only)


class RswaDecoder:
    """Greedy decoding over a pinned prefix with the model's own R-SWA cache.

    `steps(prefix_embeds)` is a generator: it prefills, then yields one `Step` per output token, so the caller can
    emit events and check Cancel between two forwards. It stops after an EOS id (yielded, then stop), after
    `max_new_tokens`, or when the caller stops iterating."""

    def __init__(
        self,
        model,
        *,
        cache: str = "static",
        eos_ids: Sequence[int] = (),
        max_new_tokens: int = 4096,
        ngram_size: int = 0,
        ngram_window: int = 128,
        prefill_chunk: int = 0,
        keep_logits: bool = False,
    ) -> None:
        self.model = model
        self.cache_kind = cache
        self.eos_ids = set(int(i) for i in eos_ids)
        self.max_new_tokens = int(max_new_tokens)
        self.blocker = NgramBlocker(ngram_size, ngram_window) if ngram_size else None
        self.prefill_chunk = int(prefill_chunk)
        self.keep_logits = keep_logits
        self.cache = None
        self.observer: WindowObserver | None = None
        self._cache_kw = cache_kwarg(model)
        text_cfg = model.config.get_text_config()
        self.window = int(text_cfg.sliding_window)
        self.is_rswa = REFERENCE_LAYER in (text_cfg.layer_types or [])

    @torch.inference_mode()
    def steps(self, prefix_embeds: torch.Tensor, prefix_ids: Sequence[int] | None = None,
              should_stop: Callable[[], bool] | None = None) -> Iterator[Step]:
        """`prefix_embeds`: (1, P, hidden) input embeddings of the whole prefix (image features already in place).
        `prefix_ids`: the prefix token ids (what the n-gram blocker looks back over; image placeholders included).
        `should_stop` is asked between prefill chunks (a long chunked prefill can be cancelled, too); between decode
        steps the caller simply stops iterating."""
        model = self.model
        device = prefix_embeds.device
        P = int(prefix_embeds.shape[1])
        self.cache = make_cache(model, self.cache_kind, P + self.window + (self.max_new_tokens if not self.is_rswa else 0))
        self.observer = WindowObserver(self.cache).attach()
        ids: list[int] = list(prefix_ids) if prefix_ids is not None else []
        try:
            t0 = time.perf_counter()
            chunk = self.prefill_chunk if 0 < self.prefill_chunk < P else P
            if chunk < P:  # declare the prefill length up front so later chunks are not taken for decode steps
                for layer in self.cache.layers:
                    if getattr(layer, "_layer_type", None) == REFERENCE_LAYER:
                        layer.set_prefill_length(P)
            logits = None
            for s in range(0, P, chunk):
                if s and should_stop is not None and should_stop():
                    return
                e = min(P, s + chunk)
                out = model(inputs_embeds=prefix_embeds[:, s:e], position_ids=torch.arange(s, e, device=device)[None],
                            use_cache=True, logits_to_keep=1, **{self._cache_kw: self.cache})
                logits = out.logits[:, -1]
            for index in range(self.max_new_tokens):
                if index > 0:
                    t0 = time.perf_counter()
                    fed = torch.tensor([[ids[-1]]], device=device)
                    pos = torch.tensor([[P + index - 1]], device=device)
                    out = model(input_ids=fed, position_ids=pos, use_cache=True, logits_to_keep=1,
                                **{self._cache_kw: self.cache})
                    logits = out.logits[:, -1]
                row = logits[0].float()
                token = int(torch.argmax(row))
                bans: list[Ban] = []
                if self.blocker is not None:
                    banned = self.blocker.banned(ids)
                    if banned and any(b.token == token for b in banned):
                        bans = [b for b in banned if b.token == token]
                        masked = row.clone()
                        masked[[b.token for b in banned]] = float("-inf")
                        token = int(torch.argmax(masked))
                ids.append(token)
                ms = (time.perf_counter() - t0) * 1000.0
                yield Step(index, token, self.observer.state, bans, ms, row.clone() if self.keep_logits else None)
                if token in self.eos_ids:
                    return
        finally:
            self.observer.detach()

    def release(self) -> None:
        """Drop the cache (the memory it holds)."""
        self.cache = None
        self.observer = None
