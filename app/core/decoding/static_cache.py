"""A preallocated KV cache for the GLM-OCR decoders (AR, self-spec, batched AR): one (rows, kv_heads, capacity,
head_dim) buffer per layer and a write position per row.

Why not transformers' DynamicCache: it concatenates the whole cache on every forward and its shapes change at every
step. Here a forward writes its q new keys/values in place at each row's write position and attention always sees
the whole buffer; entries at or after a row's length are stale (a rejected draft, a finished row) and the 4-D mask
the decoder passes hides them until they are overwritten. Rolling back rejected drafts is moving the write position
(`crop`), never copying. Fixed shapes (q = 1 or B+1 over `capacity` keys) are what torch.compile and CUDA graphs
need.

The model calls `update(key, value, layer_idx)` once per layer and forward; the position advances after the last
layer, so a decoder uses this cache exactly like a DynamicCache (`get_seq_length`, `crop(-n)`), plus `key_mask`
for the mask over the whole buffer.

What must never live here: decoding rules (selfspec.py, autoregressive.py, batch.py), events, text.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import torch

CACHE_MODES = ("auto", "dynamic", "static")


def resolve_cache_mode(mode: str, device: Any) -> str:
    """`auto`: static on CUDA, where per-forward launches and copies dominate (no concatenation of the whole cache,
    fixed shapes for compile/CUDA graphs; not measured yet: no GPU in the session that wrote this, see
    `bench gpu`); dynamic on CPU/MPS, where `bench paths` measured the two within noise of each other (eager), and
    where compiling costs about a minute per shape before it pays (docs/benchmarks.md, Decoder performance)."""
    if mode not in CACHE_MODES:
        raise ValueError(f"cache must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
    if mode != "auto":
        return mode
    return "static" if str(device).startswith("cuda") else "dynamic"


class StaticKVCache:
    """KV buffers of `capacity` positions for `rows` sequences; `lengths[r]` = cached tokens of row r."""

    is_compileable = True

    def __init__(self, text_config, *, rows: int, capacity: int, dtype, device) -> None:
        import torch

        heads = text_config.num_key_value_heads
        head_dim = getattr(text_config, "head_dim", None) or text_config.hidden_size // text_config.num_attention_heads
        self.layers = text_config.num_hidden_layers
        self.capacity = int(capacity)
        shape = (rows, heads, self.capacity, head_dim)
        self.keys = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.layers)]
        self.values = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.layers)]
        self.lengths = [0] * rows
        self.device = self.keys[0].device
        self._lengths_dev = torch.zeros(rows, dtype=torch.long, device=self.device)  # the same, for row writes
        self._index: "torch.Tensor | None" = None  # (rows, heads, q, head_dim) write positions of this forward
        self.runner = eager_logits  # how a forward over this cache runs: eager, or a compiled `text_logits`

    # --- the cache protocol the model uses ---------------------------------------------------------------------

    def prepare(self, q: int) -> None:
        """Before a forward of q tokens a row: where each row writes them (a device index tensor, so the forward
        itself reads no host integer: what torch.compile and CUDA graphs need), and the rows' new lengths."""
        import torch

        if max(self.lengths) + q > self.capacity:
            raise RuntimeError(f"static KV cache full: {max(self.lengths)} + {q} > {self.capacity} positions")
        pos = self._lengths_dev.view(-1, 1) + torch.arange(q, device=self.device).view(1, -1)  # (rows, q)
        rows, heads, _, head_dim = self.keys[0].shape
        self._index = pos.view(rows, 1, q, 1).expand(rows, heads, q, head_dim)
        self.lengths = [n + q for n in self.lengths]
        self._lengths_dev += q

    def update(self, key: "torch.Tensor", value: "torch.Tensor", layer_idx: int, *args, **kwargs):
        """Called by every attention layer of the forward: write in place at the prepared positions and hand the
        whole buffer to attention (the mask hides what is not the row's)."""
        self.keys[layer_idx].scatter_(2, self._index, key)
        self.values[layer_idx].scatter_(2, self._index, value)
        return self.keys[layer_idx], self.values[layer_idx]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return max(self.lengths)

    def crop(self, n: int) -> None:
        """DynamicCache's semantics: crop(-n) drops the last n tokens of every row (only the write position moves;
        the stale entries are masked, then overwritten)."""
        if n > 0:
            raise ValueError("crop takes a non-positive count (-n drops n tokens)")
        self.crop_rows([-n] * len(self.lengths))

    def crop_rows(self, drop: Sequence[int]) -> None:
        """Drop drop[r] tokens from row r (the rows of a batch accept different numbers of drafts; a finished row
        drops whatever it is still fed)."""
        import torch

        self.lengths = [max(0, length - int(d)) for length, d in zip(self.lengths, drop)]
        if len(self.lengths) > 1:
            self._lengths_dev.copy_(torch.as_tensor(self.lengths))
        else:
            self._lengths_dev.fill_(self.lengths[0])

    @property
    def row_lengths(self) -> "torch.Tensor":
        """The rows' lengths as a device tensor (no host copy in the step loop)."""
        return self._lengths_dev

    # --- filling and masks -----------------------------------------------------------------------------------

    def use(self, runner) -> None:
        """Run forwards over this cache with `runner` (a compiled `text_logits`; None keeps eager). On CUDA the
        buffers are marked as keeping their addresses, so CUDA graphs update them in place instead of copying."""
        import torch

        if runner is None:
            return
        self.runner = runner
        if self.device.type == "cuda":
            for t in self.keys + self.values:
                torch._dynamo.mark_static_address(t)

    def load_row(self, row: int, dynamic) -> None:
        """Copy a prefilled DynamicCache (batch 1) into row `row`, from position 0."""
        n = dynamic.get_seq_length()
        for layer in range(self.layers):
            src = dynamic.layers[layer]
            self.keys[layer][row, :, :n] = src.keys[0]
            self.values[layer][row, :, :n] = src.values[0]
        self.lengths[row] = n
        self._lengths_dev[row] = n

    def key_mask(self, window: "torch.Tensor") -> "torch.Tensor":
        """Bool (1, 1, q, capacity) mask for a one-row forward of q tokens: the cache is visible, `window` (q, q) is
        the pattern inside the new tokens, every other position (stale or empty) is hidden."""
        import torch

        q = window.shape[0]
        clen = self.lengths[0]
        mask = torch.zeros(q, self.capacity, dtype=torch.bool, device=self.device)
        mask[:, :clen] = True
        mask[:, clen:clen + q] = window
        return mask.view(1, 1, q, self.capacity)

    def window_masks(self, inner: "torch.Tensor") -> "torch.Tensor":
        """Bool (rows, 1, q, capacity) mask for a q-token window in every row, each at its own write position: the
        row's cache visible, `inner` (q, q) inside the window, the rest hidden."""
        import torch

        q = inner.shape[0]
        rel = torch.arange(self.capacity, device=self.device).view(1, 1, -1) - self._lengths_dev.view(-1, 1, 1)
        inside = inner[torch.arange(q, device=self.device).view(1, q, 1), rel.clamp(0, q - 1)]  # (rows, q, cap)
        mask = (rel < 0) | ((rel < q) & inside)
        return mask.unsqueeze(1)

    def step_mask(self, lengths: "torch.Tensor") -> "torch.Tensor":
        """Bool (rows, 1, 1, capacity) mask for a one-token step of every row: row r sees its `lengths[r]` cached
        tokens and the one it is writing."""
        import torch

        keys = torch.arange(self.capacity, device=self.device).view(1, -1)
        return (keys <= lengths.view(-1, 1)).view(-1, 1, 1, self.capacity)


CAPACITY_STEP = 256  # capacities are rounded up to this, so a compiled forward sees few distinct shapes


def static_capacity(prompt_lens: Sequence[int], budget: int, block_size: int = 0) -> int:
    """Positions a static cache needs: the longest prompt, the budget and one self-spec window of slack, rounded up
    to a multiple of CAPACITY_STEP."""
    need = int(max(prompt_lens)) + int(budget) + int(block_size) + 2
    return -(-need // CAPACITY_STEP) * CAPACITY_STEP


def text_logits(model, input_ids, position_ids, attention_mask, cache) -> "torch.Tensor":
    """The text decoder and the LM head over a static cache, nothing else (no vision, no position bookkeeping):
    (rows, q, vocab) logits. This is the function `compiled_logits` compiles."""
    text = model.model.language_model
    out = text(input_ids=input_ids, position_ids=position_ids, attention_mask=attention_mask, use_cache=True,
               **{_cache_name(type(text)): cache})
    return model.lm_head(out.last_hidden_state)


def eager_logits(model, input_ids, position_ids, attention_mask, cache) -> "torch.Tensor":
    return text_logits(model, input_ids, position_ids, attention_mask, cache)


def compiled_logits(device, backend: str = "inductor") -> Any:
    """`text_logits` through torch.compile: on CUDA with mode "reduce-overhead" (CUDA graphs: one launch a forward),
    elsewhere the default inductor mode. Shapes are fixed per (rows, q, capacity), so a decode compiles a few
    graphs once (q = 1 for AR; B and B+1 for self-spec) and replays them. `backend` "aot_eager" traces and
    functionalises the same graph without generating code (the tests' fast check of the captured in-place writes)."""
    import torch

    mode = "reduce-overhead" if str(device).startswith("cuda") and backend == "inductor" else None
    return torch.compile(text_logits, mode=mode, dynamic=False, backend=backend)


def _cache_name(text_model_class: type) -> str:
    import inspect

    return "cache" if "cache" in inspect.signature(text_model_class.forward).parameters else "past_key_values"


def to_static(model, prefix, *, budget: int, block_size: int = 0, runner=None):
    """The same prefix (a decoder `Prefix`) with its prefilled DynamicCache copied into a one-row static cache big
    enough for `budget` new tokens and one self-spec window."""
    import dataclasses

    dynamic = prefix.cache
    cache = StaticKVCache(model.config.get_text_config(), rows=1,
                          capacity=static_capacity([dynamic.get_seq_length()], budget, block_size),
                          dtype=dynamic.layers[0].keys.dtype, device=dynamic.layers[0].keys.device)
    cache.load_row(0, dynamic)
    cache.use(runner)
    return dataclasses.replace(prefix, cache=cache)
