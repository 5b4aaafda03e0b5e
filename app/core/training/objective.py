"""GravityOCR's joint training objective: one forward over a clean stream and two complementary corrupted streams.

Layout of one training sequence (P prefix tokens, L response tokens, L a multiple of the block size B):

    [ image + prompt (P) | clean y_0..y_{L-1} | corrupted stream 1 | corrupted stream 2 ]

- The prefix is causal, as in the inference prefill, and visible to every later row.
- The clean stream is token-causal (plain next-token prediction); it never sees the corrupted streams.
- Corrupted stream s holds y with the positions `mask_s` replaced by the learned `<|mask|>` token; mask_1 draws
  t ~ U(0,1) per block and masks each token with probability t, mask_2 is its complement, so every response token
  is masked in exactly one stream. A corrupted row of block b sees the prefix, the CLEAN blocks 0..b-1 and its own
  block of its own stream bidirectionally — nothing else (not the clean block b, not the other stream).
- All three streams use the same positions: response index r sits at (N + r, N + r, N + r), N = max prefix
  position + 1, exactly the positions the decoders give response tokens.

Losses (token shift: the row at response index r predicts index r + 1; the last prefix row predicts y_0):
- L_AR: clean rows, targets y_0..y_n (the text and its FIRST EOS only; the other B-1 EOS get no AR loss).
- L_diff: each target y_j, j < n + B (text + all B EOS), is predicted by row j-1 of the stream in which y_j is
  masked (row -1 = the last prefix row). That row never sees y_j, and it is the row that plays the same role at
  inference: a mask row predicts the token after it, and the last row of a block drafts the next block's first token.
- L = (L_AR + λ·L_diff) / (1 + λ), λ = 1.

A fully masked block of a corrupted stream is, row for row, the inference draft window [x0 | M×B] with x0 = the last
clean token before the block (tests check both this and the clean stream against a plain causal forward).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any


def response_targets(texts_ids: list[list[int]], eos_id: int, block_size: int, *, length: int | None = None):
    """Targets padded with EOS: row i is text_i + B EOS (+ more EOS up to a common length L, a multiple of B).
    Returns (targets (b, L) long, n (b,) long = text lengths)."""
    import torch

    B = int(block_size)
    need = max(len(t) for t in texts_ids) + B
    L = length if length is not None else -(-need // B) * B
    if L < need or L % B:
        raise ValueError(f"length {L} must be a multiple of {B} and at least {need}")
    out = torch.full((len(texts_ids), L), eos_id, dtype=torch.long)
    for i, t in enumerate(texts_ids):
        out[i, : len(t)] = torch.tensor(t, dtype=torch.long)
    n = torch.tensor([len(t) for t in texts_ids], dtype=torch.long)
    return out, n


def complementary_masks(batch: int, length: int, block_size: int, *, generator=None, device=None):
    """Stream-1 mask (b, L) bool: per block t ~ U(0,1), each token masked with probability t. Stream 2 is ~mask."""
    import torch

    nblocks = length // block_size
    t = torch.rand(batch, nblocks, 1, generator=generator)
    u = torch.rand(batch, nblocks, block_size, generator=generator)
    return (u < t).reshape(batch, length).to(device)


def joint_attention_mask(prefix_len: int, length: int, block_size: int, device=None):
    """Bool (T, T), T = P + 3L, True = may attend. See the module docstring for the rules."""
    import torch

    P, L, B = prefix_len, length, block_size
    T = P + 3 * L
    allow = torch.zeros(T, T, dtype=torch.bool, device=device)
    allow[:P, :P] = torch.ones(P, P, dtype=torch.bool, device=device).tril()
    allow[P:, :P] = True
    allow[P:P + L, P:P + L] = torch.ones(L, L, dtype=torch.bool, device=device).tril()
    r = torch.arange(L, device=device)
    blk = r // B
    earlier_clean = blk[None, :] < blk[:, None]  # [row, col]: col's block is before row's block
    same_block = blk[None, :] == blk[:, None]
    for s in (1, 2):
        rows = slice(P + s * L, P + (s + 1) * L)
        allow[rows, P:P + L] = earlier_clean
        allow[rows, rows] = same_block
    return allow


@lru_cache(maxsize=256)
def _cached_mask(prefix_len: int, length: int, block_size: int, device: str):
    return joint_attention_mask(prefix_len, length, block_size, device=device)


def joint_positions(prefix_pos, length: int, start=None):
    """(3, b, P + 3L): prefix M-RoPE positions, then N + r on all three axes for each stream (N = `start`, a
    per-row tensor or an int, when given; else the max prefix position + 1)."""
    import torch

    if start is None:
        N = prefix_pos.amax(dim=(0, 2)) + 1  # (b,)
    else:
        N = torch.as_tensor(start, device=prefix_pos.device).expand(prefix_pos.shape[1])
    r = torch.arange(length, device=prefix_pos.device)
    resp = (N[:, None] + r[None, :])[None].expand(3, -1, -1)
    return torch.cat([prefix_pos, resp, resp, resp], dim=2)


@dataclass
class JointOutput:
    hidden: Any  # (b, P + 3L, H) final-norm hidden states
    prefix_len: int
    length: int
    image_features: Any  # (sum image tokens, H)


def joint_forward_embeds(model, prefix_embeds, prefix_pos, targets, mask1, *, mask_id: int, block_size: int,
                         prefix_valid=None, image_features=None, response_start=None) -> JointOutput:
    """One forward over [prefix | clean | corrupted 1 | corrupted 2] with the joint attention mask, from ready prefix embeddings (b, P, H) and their positions (3, b, P). `prefix_valid` (b, P)
    bool marks real prefix tokens: rows of different prefix lengths are left-padded, padding is attended by no row
    (a padding row sees only itself) and should carry position 0, so each row's response starts at its own N.
    `response_start` sets N (see `joint_positions`)."""
    import torch

    b, L = targets.shape
    P = prefix_embeds.shape[1]
    c1 = torch.where(mask1, torch.full_like(targets, mask_id), targets)
    c2 = torch.where(~mask1, torch.full_like(targets, mask_id), targets)
    resp_embeds = model.get_input_embeddings()(torch.cat([targets, c1, c2], dim=1))
    embeds = torch.cat([prefix_embeds.to(resp_embeds.dtype), resp_embeds], dim=1)
    pos = joint_positions(prefix_pos, L, response_start)
    allow = _cached_mask(P, L, block_size, str(embeds.device))
    attn = allow[None, None].expand(b, 1, -1, -1)
    if prefix_valid is not None:
        T = P + 3 * L
        keys = torch.cat([prefix_valid.to(embeds.device),
                          torch.ones(b, 3 * L, dtype=torch.bool, device=embeds.device)], dim=1)
        attn = attn & keys[:, None, None, :]
        eye = torch.zeros(T, T, dtype=torch.bool, device=embeds.device)
        eye[:P, :P] = torch.eye(P, dtype=torch.bool, device=embeds.device)
        attn = attn | (eye[None, None] & ~keys[:, None, :, None])
    if getattr(model.config.text_config, "_attn_implementation", "sdpa") == "eager":
        attn = torch.zeros(attn.shape, dtype=embeds.dtype, device=embeds.device).masked_fill(
            ~attn, torch.finfo(embeds.dtype).min)  # eager needs an additive mask (a bool one masks nothing)
    out = model.model.language_model(inputs_embeds=embeds, position_ids=pos, attention_mask=attn, use_cache=False)
    return JointOutput(out.last_hidden_state, P, L, image_features)


def clean_logits(model, out: JointOutput):
    """(b, L, V): the clean stream's predictions of y_0..y_{L-1} (rows P-1 .. P+L-2)."""
    P, L = out.prefix_len, out.length
    return model.lm_head(out.hidden[:, P - 1:P + L - 1])


def stream_logits(model, out: JointOutput, stream: int):
    """(b, L, V): corrupted stream `stream`'s predictions of y_0..y_{L-1} (row j-1 predicts y_j; row -1 = prefix)."""
    import torch

    P, L = out.prefix_len, out.length
    start = P + stream * L
    rows = torch.cat([out.hidden[:, P - 1:P], out.hidden[:, start:start + L - 1]], dim=1)
    return model.lm_head(rows)


def loss_weights(n, length: int, block_size: int, device=None):
    """(ar, diff) bool weights (b, L): AR on y_0..y_n (first EOS only), diffusion on y_0..y_{n+B-1}."""
    import torch

    r = torch.arange(length, device=device)[None, :]
    n = n.to(device)[:, None]
    return r <= n, r < n + block_size


def _head(model, h, classes):
    """Logits of hidden rows `h`: over the whole vocabulary, or over `classes` (a sampled softmax)."""
    if classes is None:
        return model.lm_head(h)
    return h @ model.lm_head.weight[classes].T


def joint_loss(model, out: JointOutput, targets, n, mask1, *, block_size: int, lam: float = 1.0,
               classes=None) -> tuple[Any, dict]:
    """(L_AR + λ·L_diff) / (1 + λ), with the EOS rules; returns (loss, {"ar": ..., "diff": ...} detached 0-d
    tensors). Token means are computed with weights, not boolean indexing, so a GPU step never syncs.
    `classes` (sorted 1-D ids holding every target): the softmax runs over these rows only (a sampled softmax for
    a large vocabulary; the targets are remapped into it)."""
    import torch
    import torch.nn.functional as F

    P, L = out.prefix_len, out.length
    if classes is not None:
        targets = torch.searchsorted(classes, targets)
    ar_w, diff_w = loss_weights(n, L, block_size, device=targets.device)
    ar_w, diff_w = ar_w.float(), diff_w.float()
    ar_ce = F.cross_entropy(_head(model, out.hidden[:, P - 1:P + L - 1], classes).float().transpose(1, 2), targets,
                            reduction="none")
    l_ar = (ar_ce * ar_w).sum() / ar_w.sum()
    # The predicting row of y_j lives in the stream where y_j is masked.
    h1 = torch.cat([out.hidden[:, P - 1:P], out.hidden[:, P + L:P + 2 * L - 1]], dim=1)
    h2 = torch.cat([out.hidden[:, P - 1:P], out.hidden[:, P + 2 * L:P + 3 * L - 1]], dim=1)
    h = torch.where(mask1[..., None], h1, h2)
    diff_ce = F.cross_entropy(_head(model, h, classes).float().transpose(1, 2), targets, reduction="none")
    l_diff = (diff_ce * diff_w).sum() / diff_w.sum()
    loss = (l_ar + lam * l_diff) / (1.0 + lam)
    return loss, {"ar": l_ar.detach(), "diff": l_diff.detach()}
