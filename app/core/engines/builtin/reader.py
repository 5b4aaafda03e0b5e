"""The built-in reader: a small `GlmOcrForConditionalGeneration` whose text decoder reads RapidOCR's recogniser
output as a discrete prefix and writes the line's text (docs/built-in-model.md).

Sequence of one line: `[prefix tokens][SEP] text [EOS]`. Prefix token i stands for the recogniser's i-th collapsed
CTC character and is embedded as the SUM of four rows of the model's own embedding table:

    E[char] + E[<|confK|>] + E[<|alt:c2|> or <|alt:unk|>] + E[<|altJ|>]

(the character, its confidence bin, its best alternative character and that alternative's probability bin, alt0 =
none), then `<|assistant|>` (SEP) as a plain token. That is the first version (a 300-character vocabulary). The
second version's vocabulary holds every character the recogniser writes (vocab.build_reader_tokenizer_v2) and its
prefix token i is E[char] + E[<|confK|>] + Σ_k λ_k·E[alt_k] ⊙ (1 + E[<|altK·bJ|>]) + E[<|altK·bJ|>] over the
recogniser's two best alternatives (their own character rows, gated per slot and probability bin); `PrefixCodec`
tells the versions apart by the tokenizer. Text tokens are plain rows of the same table, so the decoders
of the app (autoregressive.py, selfspec.py) run the checkpoint unchanged after `prefill` has put the prefix into the
KV cache.

Positions (all three M-RoPE rows alike) are ALIGNED: recognised character i sits at position i + 1, SEP at 0, and
response token r at r + 1, the position of the recogniser's character it most likely equals: every row then finds
the character it has to write next one position ahead (relative +1), so copying needs no learned alignment. In the
decoders' terms a token at absolute index i sits at i + δ with δ = 1 − P (P = prefix length with SEP).
The vision tower of the class is present (the class needs one) but minimal and unused.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from app.core.base.stages import timed
from app.core.checkpoints.glm_processor import EOS_TOKEN, MASK_TOKEN, SPECIAL_TOKENS, STOP_TOKENS, config_token_ids, mrope_section
from app.core.rapid.recogniser import Reading, alt_bin, conf_bin
from app.core.engines.builtin.vocab import (
    ALT_BIN_TOKENS, ALT_SCALE, ALT_SLOTS, ALT_UNK_TOKEN, CONF_TOKENS, GATE_TOKENS, SEP_TOKEN, UNK_TOKEN, alt_token,
    build_reader_tokenizer, build_reader_tokenizer_v2, gate_token,
)

if TYPE_CHECKING:  # pragma: no cover
    import torch

KIND = "recogniser-prefix"
PRESETS: dict[str, dict[str, Any]] = {
    "small": dict(hidden=192, layers=4, heads=4, kv_heads=2, intermediate=576),  # ~1.8M parameters
    "test": dict(hidden=64, layers=2, heads=2, kv_heads=1, intermediate=128),
}
MAX_PREFIX = 160  # recognised characters kept per line (a longer reading is cut; lines are ~100 chars at most)


class PrefixCodec:
    """Readings → prefix id rows for one tokenizer. First version (P, 4): char, confidence bin, alternative row,
    alternative bin. Second version (P, 6), when the tokenizer has the gate rows: char, confidence bin, then per
    alternative slot its character row and its gate row (-1, -1 when there is none); see `prefix_embeddings`."""

    def __init__(self, tokenizer) -> None:
        vocab = tokenizer.get_vocab()
        self.char = {tok: i for tok, i in vocab.items() if len(tok) == 1}
        self.unk = vocab[UNK_TOKEN]
        self.conf = [vocab[t] for t in CONF_TOKENS]
        self.version = 2 if GATE_TOKENS[0] in vocab else 1
        self.width = 6 if self.version == 2 else 4
        if self.version == 2:
            self.gates = [[-1] + [vocab[gate_token(k, j)] for j in (1, 2, 3)] for k in range(ALT_SLOTS)]
        else:
            self.alt_bins = [vocab[t] for t in ALT_BIN_TOKENS]
            self.alt_unk = vocab[ALT_UNK_TOKEN]
            self.alt = {ch: vocab[alt_token(ch)] for ch in self.char if alt_token(ch) in vocab}
        self.sep = vocab[SEP_TOKEN]
        self.eos = vocab[EOS_TOKEN]
        self.mask = vocab[MASK_TOKEN]

    def alt_cols(self, ch: str, bin_: int, slot: int = 0) -> tuple[int, int]:
        """The two prefix columns saying "alternative `ch` with probability bin `bin_`" (0 = none) in `slot`."""
        if self.version == 2:
            if not bin_ or ch not in self.char:
                return -1, -1
            return self.char[ch], self.gates[slot][bin_]
        return (self.alt.get(ch, self.alt_unk) if bin_ else self.alt_unk), self.alt_bins[bin_]

    def rows(self, reading: Reading) -> list[tuple[int, ...]]:
        if self.version == 2:
            out2 = []
            n = len(reading.chars)
            a2 = reading.alts2 if len(reading.alts2) == n else [""] * n
            q2 = reading.alt_p2 if len(reading.alt_p2) == n else [0.0] * n
            for c, p, a, q, b, r in list(zip(reading.chars, reading.conf, reading.alts, reading.alt_p, a2, q2))[
                    :MAX_PREFIX]:
                out2.append((self.char.get(c, self.unk), self.conf[conf_bin(p)],
                             *self.alt_cols(a, alt_bin(q) if a else 0, 0),
                             *self.alt_cols(b, alt_bin(r) if b else 0, 1)))
            return out2
        out = []
        for c, p, a, q in list(zip(reading.chars, reading.conf, reading.alts, reading.alt_p))[:MAX_PREFIX]:
            b = alt_bin(q) if a else 0
            out.append((self.char.get(c, self.unk), self.conf[conf_bin(p)],
                        self.alt.get(a, self.alt_unk) if b else self.alt_unk, self.alt_bins[b]))
        return out

    def encode_text(self, text: str) -> list[int]:
        return [self.char.get(ch, self.unk) for ch in text]


def build_reader(preset: str = "small", *, seed: int = 0, version: int = 1, tokenizer=None):
    """A freshly initialised reader (model, tokenizer); the mask row is drawn from the embedding's statistics.
    `version` 2: every character the recogniser writes, top-3 evidence (vocab.build_reader_tokenizer_v2)."""
    import torch
    from transformers import GenerationConfig, GlmOcrConfig, GlmOcrForConditionalGeneration

    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    p = PRESETS[preset]
    tok = tokenizer or (build_reader_tokenizer_v2() if version == 2 else build_reader_tokenizer())
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    config = GlmOcrConfig(
        text_config=dict(
            vocab_size=len(tok), hidden_size=p["hidden"], intermediate_size=p["intermediate"],
            num_hidden_layers=p["layers"], num_attention_heads=p["heads"], num_key_value_heads=p["kv_heads"],
            max_position_embeddings=1024, initializer_range=0.02,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                             "mrope_section": mrope_section(p["hidden"] // p["heads"]), "partial_rotary_factor": 1.0},
            pad_token_id=ids[EOS_TOKEN],
        ),
        # the class needs a vision tower; the reader never calls it (its image side is the ONNX recogniser)
        vision_config=dict(depth=1, hidden_size=16, num_heads=1, intermediate_size=16, out_hidden_size=p["hidden"],
                           patch_size=8, temporal_patch_size=2, spatial_merge_size=2, image_size=32),
        **config_token_ids(ids),
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = GlmOcrForConditionalGeneration(config)
    with torch.no_grad():
        emb = model.get_input_embeddings().weight
        m = ids[MASK_TOKEN]
        others = torch.cat([emb[:m], emb[m + 1:]])
        emb[m] = torch.randn(emb.shape[1]) * others.std() + others.mean()
    model.generation_config = GenerationConfig(
        eos_token_id=[ids[t] for t in STOP_TOKENS], pad_token_id=ids[EOS_TOKEN], do_sample=False)
    return model, tok


def prefix_embeddings(model, rows: "torch.Tensor", sep: int) -> "torch.Tensor":
    """(b, P+1, H): the prefix rows (b, P, 4 or 6) embedded, then SEP. Rows of all -1 are padding (zero vectors).
    Four columns (first version): the sum of the four rows. Six (second version): E[c] + E[conf] + per alternative
    slot k, when present, λ_k·E[a_k] ⊙ (1 + E[gate_k]) + E[gate_k] (vocab.ALT_SCALE)."""
    import torch

    emb = model.get_input_embeddings()
    valid = rows[..., 0] >= 0
    if rows.shape[-1] == 6:
        x = emb(rows.clamp(min=0))
        e = x[:, :, 0] + x[:, :, 1]
        for k in range(ALT_SLOTS):
            a, g = x[:, :, 2 + 2 * k], x[:, :, 3 + 2 * k]
            present = (rows[..., 2 + 2 * k] >= 0)[..., None].to(x.dtype)
            e = e + present * (ALT_SCALE[k] * a * (1 + g) + g)
        e = e * valid[..., None].to(emb.weight.dtype)
    else:
        e = emb(rows.clamp(min=0)).sum(dim=2) * valid[..., None].to(emb.weight.dtype)
    sep_e = emb(torch.full(rows.shape[:1], sep, dtype=torch.long, device=rows.device))[:, None]
    return torch.cat([e, sep_e], dim=1)


@timed("decoder")
def prefill(model, codec: PrefixCodec, reading: Reading):
    """The app decoders' `Prefix` for one line: its prefix run causally into a fresh KV cache (δ = 0)."""
    import torch

    from app.core.decoding.autoregressive import Prefix, _sync, cache_kwarg, new_cache

    t0 = time.perf_counter()
    device = model.device
    rows = codec.rows(reading)
    with torch.no_grad():
        r = torch.tensor(rows, dtype=torch.long, device=device).view(1, len(rows), codec.width)
        embeds = prefix_embeddings(model, r, codec.sep).to(model.dtype)
        P = embeds.shape[1]
        pos = prefix_positions(torch.ones(1, P, dtype=torch.bool, device=device)).expand(3, 1, P)
        cache = new_cache(model)
        out = model(inputs_embeds=embeds, position_ids=pos, use_cache=True, logits_to_keep=1,
                    **{cache_kwarg(model): cache})
    seed = out.logits[0, -1]
    _sync(seed)
    return Prefix(cache, seed, P, 1 - P, (time.perf_counter() - t0) * 1e3)


RESPONSE_START = 1  # the position of response token 0 (see the module docstring)


def prefix_positions(valid: "torch.Tensor") -> "torch.Tensor":
    """(1, b, P) aligned positions for left-padded prefixes (valid (b, P) bool, SEP last): character i of a row at
    i + 1, SEP at 0, padding at 0."""
    import torch

    b, P = valid.shape
    n = valid.sum(1, keepdim=True)  # real tokens incl. SEP
    idx = torch.arange(P, device=valid.device)[None] - (P - n)  # 0.. for real tokens
    pos = torch.where(valid, idx + 1, torch.zeros_like(idx))
    pos[:, -1] = 0  # SEP
    return pos[None]


class one_thread:
    """Run the decoder's forwards on one torch thread (restored afterwards). Its matmuls are far too small for
    intra-op parallelism to pay, and on a busy machine two spinning OpenMP threads make a forward 10-50x slower."""

    def __enter__(self):
        import torch

        self.before = torch.get_num_threads()
        if self.before != 1:
            torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        import torch

        if self.before != 1:
            torch.set_num_threads(self.before)
        return False


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def save_reader(model, tokenizer, out_dir: str | Path, *, block_size: int, extra: dict | None = None,
                card: str | None = None) -> Path:
    """Write the checkpoint folder: config.json, model.safetensors, generation_config.json, tokenizer files,
    block_diffusion.json (bd_size, mask_id, kind, recogniser) and MODEL_CARD.md."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    from app.core.rapid.recogniser import REC_MODEL

    bd = {"bd_size": int(block_size), "mask_id": int(tokenizer.convert_tokens_to_ids(MASK_TOKEN)),
          "ar_loss_weight": 1.0, "mask_schedule": "uniform", "kind": KIND, "recogniser": REC_MODEL,
          "sep_token": SEP_TOKEN, **(extra or {})}
    (out / "block_diffusion.json").write_text(json.dumps(bd, indent=2), encoding="utf-8")
    if card is not None:
        (out / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    return out


def load_reader(folder: str | Path, *, device: str = "cpu", dtype=None):
    """(model, tokenizer, block_diffusion dict) from a checkpoint folder; safetensors only, no remote code."""
    import torch
    from transformers import GlmOcrForConditionalGeneration, PreTrainedTokenizerFast

    folder = Path(folder)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # noqa: BLE001 - cosmetic
        pass
    model = GlmOcrForConditionalGeneration.from_pretrained(
        folder, dtype=dtype or torch.float32, use_safetensors=True, local_files_only=True, trust_remote_code=False,
        attn_implementation="sdpa")
    model.to(device).eval()
    tok = PreTrainedTokenizerFast.from_pretrained(folder, local_files_only=True)
    bd = json.loads((folder / "block_diffusion.json").read_text(encoding="utf-8"))
    return model, tok, bd


def is_reader_checkpoint(folder: str | Path) -> bool:
    f = Path(folder) / "block_diffusion.json"
    try:
        return json.loads(f.read_text(encoding="utf-8")).get("kind") == KIND
    except (OSError, ValueError):
        return False


def decode_text(tokenizer, tokens: Sequence[int], stop_ids: Sequence[int]) -> str:
    body = [t for t in tokens if t not in set(stop_ids)]
    return tokenizer.decode(body, skip_special_tokens=True)
