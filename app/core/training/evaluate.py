"""Reading lines with a trained checkpoint and scoring them: batched AR greedy decoding (`model.generate`, the
reference the app's decoders must equal) and the character error rate."""
from __future__ import annotations

import numpy as np


def cer(refs: list[str], hyps: list[str]) -> float:
    """Total edit distance / total reference characters."""
    from rapidfuzz.distance import Levenshtein

    total = sum(len(r) for r in refs)
    return sum(Levenshtein.distance(r, h) for r, h in zip(refs, hyps)) / max(1, total)


def pad_to_width(images: list[np.ndarray], width: int) -> np.ndarray:
    out = np.empty((len(images), images[0].shape[0], width), dtype=np.uint8)
    for i, im in enumerate(images):
        w = im.shape[1]
        out[i, :, :w] = im
        out[i, :, w:] = int(np.median(np.concatenate([im[:, 0], im[:, -1]])))  # background
    return out


def read_lines(model, tokenizer, images: list[np.ndarray], *, device="cpu", batch_size: int = 64,
               max_new_tokens: int = 160) -> list[str]:
    """AR greedy reading of line images (LINE_HEIGHT × w, w a multiple of 16), batched by equal width."""
    import torch

    from app.core.training.batches import make_prefix

    groups: dict[int, list[int]] = {}
    for i, im in enumerate(images):  # batch only lines of exactly the same width: each line is read as the engine
        groups.setdefault(im.shape[1], []).append(i)  # reads it, unpadded
    chunks = [idx[s:s + batch_size] for idx in groups.values() for s in range(0, len(idx), batch_size)]
    out: list[str] = [""] * len(images)
    eos = model.generation_config.eos_token_id
    for idx in chunks:
        width = images[idx[0]].shape[1]
        prefix = make_prefix(tokenizer, pad_to_width([images[i] for i in idx], width), device=device)
        with torch.no_grad():
            gen = model.generate(input_ids=prefix.input_ids, attention_mask=torch.ones_like(prefix.input_ids),
                                 mm_token_type_ids=prefix.mm_token_type_ids, pixel_values=prefix.pixel_values,
                                 image_grid_thw=prefix.image_grid_thw, max_new_tokens=max_new_tokens,
                                 do_sample=False, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
        new = gen[:, prefix.input_ids.shape[1]:]
        for i, row in zip(idx, new.tolist()):
            stop = next((k for k, t in enumerate(row) if t in (eos if isinstance(eos, list) else [eos])), len(row))
            out[i] = tokenizer.decode(row[:stop], skip_special_tokens=True)
    return out
