"""From rendered line images and texts to model inputs, without the processor's per-image Python loop.

`patchify` reproduces the GLM-OCR image processor's layout exactly (CLIP normalisation; patches grouped by 2×2 merge
windows, raster order of windows; each patch repeated over the temporal axis) for images whose size is already a
multiple of 16 (then the processor's smart resize is the identity). A test compares it with the processor.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from app.core.training.model import MERGE, PATCH, TEMPORAL_PATCH

CLIP_MEAN = np.array([0.48145466, 0.4578275, 0.40821073], dtype=np.float32)
CLIP_STD = np.array([0.26862954, 0.26130258, 0.27577711], dtype=np.float32)
PROMPT = "Text Recognition:"


def patchify(images: np.ndarray) -> np.ndarray:
    """(b, H, W) uint8 grey (or (b, H, W, 3) RGB) → (b·gh·gw, 3·T·p·p) float32, the processor's pixel_values."""
    x = images.astype(np.float32) / 255.0
    if x.ndim == 3:
        x = np.repeat(x[..., None], 3, axis=-1)
    x = (x - CLIP_MEAN) / CLIP_STD  # (b, H, W, 3)
    b, H, W, C = x.shape
    p, m = PATCH, MERGE
    gh, gw = H // p, W // p
    x = x.transpose(0, 3, 1, 2).reshape(b, C, gh // m, m, p, gw // m, m, p)
    x = x.transpose(0, 2, 5, 3, 6, 1, 4, 7)  # b, gh/m, gw/m, m, m, C, p, p
    x = np.broadcast_to(x[:, :, :, :, :, :, None], (*x.shape[:6], TEMPORAL_PATCH, p, p))
    return np.ascontiguousarray(x.reshape(b * gh * gw, C * TEMPORAL_PATCH * p * p))


@lru_cache(maxsize=8)
def _template_parts(tokenizer_key: int, tokenizer) -> tuple[list[int], list[int]]:
    """The chat-template ids before and after the single `<|image|>` placeholder."""
    from app.core.training.model import CHAT_TEMPLATE

    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": PROMPT}]}],
        chat_template=CHAT_TEMPLATE, add_generation_prompt=True, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False).input_ids
    image_id = tokenizer.convert_tokens_to_ids("<|image|>")
    k = ids.index(image_id)
    return ids[:k], ids[k + 1:]


def prefix_ids(tokenizer, height: int, width: int) -> tuple[list[int], list[int]]:
    """(input_ids, mm_token_type_ids) of the prompt for one line image of size (height, width)."""
    before, after = _template_parts(id(tokenizer), tokenizer)
    n_image = (height // (PATCH * MERGE)) * (width // (PATCH * MERGE))
    image_id = tokenizer.convert_tokens_to_ids("<|image|>")
    ids = before + [image_id] * n_image + after
    types = [0] * len(before) + [1] * n_image + [0] * len(after)
    return ids, types


def make_prefix(tokenizer, images: np.ndarray, device=None):
    """A objective.Prefix for a batch of same-size line images (b, H, W)."""
    import torch

    from app.core.training.objective import Prefix

    b, H, W = images.shape[:3]
    ids, types = prefix_ids(tokenizer, H, W)
    gh, gw = H // PATCH, W // PATCH
    return Prefix(
        input_ids=torch.tensor([ids] * b, dtype=torch.long, device=device),
        mm_token_type_ids=torch.tensor([types] * b, dtype=torch.int, device=device),
        pixel_values=torch.from_numpy(patchify(images)).to(device),
        image_grid_thw=torch.tensor([[1, gh, gw]] * b, dtype=torch.long, device=device),
    )


def patchify_torch(images):
    """`patchify` for a uint8 tensor (b, H, W) on any device (the trainer ships uint8 images to the GPU)."""
    mean, std = _clip_stats(str(images.device))
    x = images.float().div(255.0)[..., None].expand(*images.shape, 3)
    x = (x - mean) / std
    b, H, W, C = x.shape
    p, m = PATCH, MERGE
    gh, gw = H // p, W // p
    x = x.permute(0, 3, 1, 2).reshape(b, C, gh // m, m, p, gw // m, m, p).permute(0, 2, 5, 3, 6, 1, 4, 7)
    x = x[:, :, :, :, :, :, None].expand(*x.shape[:6], TEMPORAL_PATCH, p, p)
    return x.reshape(b * gh * gw, C * TEMPORAL_PATCH * p * p)


def encode_texts(tokenizer, texts: list[str]) -> list[list[int]]:
    """Character ids (unknown characters map to <|unk|>)."""
    vocab = _char_vocab(id(tokenizer), tokenizer)
    unk = tokenizer.convert_tokens_to_ids(tokenizer.unk_token)
    return [[vocab.get(ch, unk) for ch in t] for t in texts]


@lru_cache(maxsize=8)
def _char_vocab(_key: int, tokenizer) -> dict[str, int]:
    return {tok: i for tok, i in tokenizer.get_vocab().items() if len(tok) == 1}


@lru_cache(maxsize=4)
def _clip_stats(device: str):
    import torch

    return torch.tensor(CLIP_MEAN, device=device), torch.tensor(CLIP_STD, device=device)
