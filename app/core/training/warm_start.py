"""Warm-starting the built-in reader's second version (every recogniser character, top-3 evidence) from a trained
first-version checkpoint, and the sampled softmax that keeps a step affordable over an 18,738-row vocabulary.

- The transformer (layers, norms, the unused vision stub) is copied tensor for tensor (same preset).
- Embedding rows are mapped by token: every character and special token the old vocabulary had keeps its row; the
  new alternative gates start from the old alternative-bin rows of the same bin; every new character starts at the
  mean of the old character rows plus Gaussian noise of `noise` × their per-dimension spread (distinct rows, so
  copying a new character works from the start: the decoder's copy path is the tied embedding itself).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable


def warm_start(model, tokenizer, folder: str | Path, *, seed: int = 0, noise: float = 0.7,
               log: Callable[[str], None] = print) -> dict[str, int]:
    """Copy what fits from the checkpoint in `folder` into `model` (in place); returns counts of what was done."""
    import torch

    from app.core.engines.builtin.reader import load_reader

    old_model, old_tok, _ = load_reader(folder)
    old_sd, new_sd = old_model.state_dict(), model.state_dict()
    tensors = 0
    with torch.no_grad():
        for key, value in new_sd.items():
            if "embed_tokens" in key or key.startswith("lm_head") or key not in old_sd:
                continue
            if old_sd[key].shape == value.shape:
                value.copy_(old_sd[key])
                tensors += 1
        e_old = old_model.get_input_embeddings().weight
        e_new = model.get_input_embeddings().weight
        old_vocab = old_tok.get_vocab()
        old_chars = torch.tensor([i for t, i in old_vocab.items() if len(t) == 1])
        mean, spread = e_old[old_chars].mean(0), e_old[old_chars].std(0)
        g = torch.Generator().manual_seed(seed)
        kept = gates = fresh = 0
        # a first-version row without an alternative was E[c] + E[conf] + E[<|alt:unk|>] + E[<|alt0|>]; the second
        # version adds nothing for a missing alternative, so those two rows are folded into the confidence rows
        # and taken out of the gates: a line without alternatives reads exactly as the old model read it
        none = (e_old[old_vocab["<|alt:unk|>"]] + e_old[old_vocab["<|alt0|>"]]
                if "<|alt:unk|>" in old_vocab and "<|alt0|>" in old_vocab else torch.zeros(e_old.shape[1]))
        for token, i in tokenizer.get_vocab().items():
            m = re.fullmatch(r"<\|alt(\d)b(\d)\|>", token)
            if token in old_vocab:
                e_new[i] = e_old[old_vocab[token]] + (none if re.fullmatch(r"<\|conf\d\|>", token) else 0)
                kept += 1
            elif m and f"<|alt{m.group(2)}|>" in old_vocab:
                e_new[i] = (e_old[old_vocab[f"<|alt{m.group(2)}|>"]] - none) * (0.5 if m.group(1) == "2" else 1.0)
                gates += 1
            else:
                e_new[i] = fresh_row(e_old[old_chars], mean, spread, g, noise)
                fresh += 1
    out = {"tensors": tensors, "rows_kept": kept, "gate_rows": gates, "rows_new": fresh}
    log(f"warm start from {folder}: {out}")
    return out


def fresh_row(old_rows, mean, spread, g, noise: float):
    """A new character's row: the mean of the old character rows plus a random combination of them (weights
    N(0, 1/n)), so it lives in the space the old model learnt to copy from, plus a little noise (0.1 × the spread).
    (Tried on the shipped model before training: plain noise around the mean copies no Chinese character of a test
    line; this copies some. SCRIPTORIUM_WARM_MODE=noise / combo select the others.)"""
    import os

    import torch

    mode = os.environ.get("SCRIPTORIUM_WARM_MODE", "combo+mean")
    if mode == "noise":
        return mean + noise * spread * torch.randn(old_rows.shape[1], generator=g)
    w = torch.randn(old_rows.shape[0], generator=g) / old_rows.shape[0] ** 0.5
    row = w @ (old_rows - mean)
    if mode == "combo+mean":
        row = row + mean
    return row + 0.1 * spread * torch.randn(old_rows.shape[1], generator=g)


def fixed_classes(tokenizer, first_chars: int):
    """Ids always in the sampled softmax: the first `first_chars` characters (the Latin charset) and every special
    token (so the decoder keeps its EOS and never learns to write a prefix-only row)."""
    import torch

    vocab = tokenizer.get_vocab()
    return torch.tensor(sorted(i for t, i in vocab.items() if len(t) != 1 or i < first_chars), dtype=torch.long)


def candidate_classes(fixed, targets, rows, vocab_size: int, negatives: int, generator):
    """Sorted ids of one step's softmax: `fixed`, every target, every character of the prefixes (recognised and
    alternatives) and `negatives` random rows."""
    import torch

    char_cols = rows[..., 0::2] if rows.shape[-1] == 6 else rows[..., :1]
    ids = torch.cat([fixed, targets.flatten(), char_cols.flatten(),
                     torch.randint(0, vocab_size, (negatives,), generator=generator)])
    return torch.unique(ids[ids >= 0])
