"""Tiny `GlmOcrForConditionalGeneration` configurations for the built-in line reader, and checkpoint writing.

A checkpoint folder holds config.json, model.safetensors, generation_config.json, the tokenizer and processor files
(chat template included), block_diffusion.json (`bd_size`, `mask_id`, ...) and MODEL_CARD.md: exactly what
`app.core.loader.load_model("builtin", folder)` and the app's AR / self-speculative decoders read. Lines are fed at
a height of LINE_HEIGHT px; with patch 8 and merge 2 a 32-px line gives 2 rows of image tokens, one per 16 px.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.checkpoints.glmocr import (
    CHAT_TEMPLATE, EOS_TOKEN, MASK_TOKEN, SPECIAL_TOKENS, STOP_TOKENS, config_token_ids, mrope_section,
)

LINE_HEIGHT = 32
PATCH = 8
MERGE = 2
TEMPORAL_PATCH = 2
MAX_LINE_WIDTH = 2048  # px at LINE_HEIGHT; wider lines are scaled down by the processor

PRESETS: dict[str, dict[str, Any]] = {
    # ~5M parameters: the built-in model.
    "small": dict(hidden=256, layers=4, heads=4, kv_heads=2, intermediate=768,
                  v_hidden=128, v_depth=4, v_heads=4, v_intermediate=512),
    # ~0.5M parameters: tests and quick CPU checks.
    "test": dict(hidden=96, layers=2, heads=4, kv_heads=2, intermediate=256,
                 v_hidden=64, v_depth=2, v_heads=4, v_intermediate=128),
}



def make_processor(tokenizer=None):
    """The GLM-OCR processor (image-only variant) for line images: patch 8, merge 2, height kept at 32 px."""
    from transformers.models.glm46v.image_processing_pil_glm46v import Glm46VImageProcessorPil

    from app.core.checkpoints.glmocr import image_only_processor_class
    from app.core.training.vocab import build_char_tokenizer

    image_processor = Glm46VImageProcessorPil(
        size={"shortest_edge": TEMPORAL_PATCH * 16 * 16, "longest_edge": TEMPORAL_PATCH * LINE_HEIGHT * MAX_LINE_WIDTH},
        patch_size=PATCH, temporal_patch_size=TEMPORAL_PATCH, merge_size=MERGE,
    )
    return image_only_processor_class()(image_processor=image_processor, tokenizer=tokenizer or build_char_tokenizer(),
                 chat_template=CHAT_TEMPLATE)


def special_ids(tokenizer) -> dict[str, int]:
    return {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}


def build_model(preset: str = "small", *, tokenizer=None, seed: int = 0):
    """A freshly initialised model for `preset` (see PRESETS), with the mask row drawn from the embedding's
    statistics. Returns (model, processor)."""
    import torch
    from transformers import GenerationConfig, GlmOcrConfig, GlmOcrForConditionalGeneration

    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    p = PRESETS[preset]
    processor = make_processor(tokenizer)
    tok = processor.tokenizer
    ids = special_ids(tok)
    vocab = len(tok)
    section = mrope_section(p["hidden"] // p["heads"])
    config = GlmOcrConfig(
        text_config=dict(
            vocab_size=vocab, hidden_size=p["hidden"], intermediate_size=p["intermediate"],
            num_hidden_layers=p["layers"], num_attention_heads=p["heads"], num_key_value_heads=p["kv_heads"],
            max_position_embeddings=4096, initializer_range=0.02,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section,
                             "partial_rotary_factor": 1.0},
            pad_token_id=ids[EOS_TOKEN],
        ),
        vision_config=dict(
            depth=p["v_depth"], hidden_size=p["v_hidden"], num_heads=p["v_heads"],
            intermediate_size=p["v_intermediate"], out_hidden_size=p["hidden"], patch_size=PATCH,
            temporal_patch_size=TEMPORAL_PATCH, spatial_merge_size=MERGE, image_size=LINE_HEIGHT,
            initializer_range=0.02,
        ),
        **config_token_ids(ids),
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = GlmOcrForConditionalGeneration(config)
    with torch.no_grad():  # GravityOCR: the mask row is drawn from a normal fitted to the existing rows
        emb = model.get_input_embeddings().weight
        others = torch.cat([emb[: ids[MASK_TOKEN]], emb[ids[MASK_TOKEN] + 1:]])
        emb[ids[MASK_TOKEN]] = torch.randn(emb.shape[1]) * others.std() + others.mean()
    model.generation_config = GenerationConfig(
        eos_token_id=[ids[t] for t in STOP_TOKENS], pad_token_id=ids[EOS_TOKEN], do_sample=False)
    return model, processor


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def save_checkpoint(model, processor, out_dir: str | Path, *, block_size: int, extra: dict | None = None,
                    card: str | None = None, dtype: str | None = None) -> Path:
    """Write a complete checkpoint folder (safetensors; `dtype="bf16"` halves the file)."""
    import torch

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    to_save = model
    if dtype in ("bf16", "bfloat16"):
        import copy

        to_save = copy.deepcopy(model).to(torch.bfloat16)
    to_save.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    pc = out / "processor_config.json"
    if pc.is_file():  # name the stock class, as the real checkpoints do
        data = json.loads(pc.read_text(encoding="utf-8"))
        data["processor_class"] = "Glm46VProcessor"
        pc.write_text(json.dumps(data, indent=2), encoding="utf-8")
    mask_id = processor.tokenizer.convert_tokens_to_ids(MASK_TOKEN)
    bd = {"bd_size": int(block_size), "mask_id": int(mask_id), "ar_loss_weight": 1.0, "mask_schedule": "uniform",
          "line_height": LINE_HEIGHT, **(extra or {})}
    (out / "block_diffusion.json").write_text(json.dumps(bd, indent=2), encoding="utf-8")
    if card is not None:
        (out / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    return out
