"""A tiny, randomly initialised GravityOCR/GLM-OCR checkpoint of the real `GlmOcrForConditionalGeneration` class.

`build(out_dir)` writes config.json, model.safetensors, the tokenizer files, the processor files (image processor +
chat template), generation_config.json and block_diffusion.json; `app.core.checkpoints.loader.load_model("gravityocr", out_dir)`
loads it. The special tokens follow the real checkpoint's relative order (docs/architecture.md, The self-speculative
round), the stop ids are [<|endoftext|>, <|user|>] as in the real generation config, and the `<|mask|>` row is either an
existing vocab row (like the real 59282 < 59392) or a row appended with `resize_token_embeddings`.

Weights are drawn with a larger std than the HF default so that greedy decoding has clear top-1 margins and does not
stop at once; the outputs are gibberish, but long and deterministic. What must never live here: decoding code.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.core.checkpoints.glm_processor import (
    CHAT_TEMPLATE, EOS_TOKEN, MASK_TOKEN, SPECIAL_TOKENS, STOP_TOKENS, config_token_ids, mrope_section,
)
from app.core.tiny.random_init import randomise


DEFAULTS: dict[str, Any] = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    vision_hidden_size=32,
    vision_depth=2,
    vision_heads=2,
    extra_vocab_rows=16,  # rows after the last special token (the real checkpoint pads its vocab, too)
    init_std=0.15,
    min_pixels=2 * 56 * 56,  # smart_resize counts temporal_patch(2) × h × w
    max_pixels=2 * 112 * 224,  # at most 16 × 8 patches of 14 px after merging → ≤ 32 image tokens
)


def build(
    out_dir: str | Path,
    *,
    seed: int = 0,
    mask_row: str = "in_vocab",
    block_size: int = 4,
    **kw: Any,
) -> Path:
    """Write a complete tiny checkpoint to `out_dir` and return it. `mask_row` is "in_vocab" (the mask id is an
    existing embedding row) or "resized" (the row is appended with resize_token_embeddings). Keyword overrides:
    see DEFAULTS."""
    import torch
    from transformers import GenerationConfig, GlmOcrConfig, GlmOcrForConditionalGeneration
    from transformers.models.glm46v.image_processing_pil_glm46v import Glm46VImageProcessorPil

    from app.core.checkpoints.glm_processor import image_only_processor_class
    from app.core.tiny.tokenizer import build_bpe_tokenizer

    if mask_row not in ("in_vocab", "resized"):
        raise ValueError(f"mask_row must be 'in_vocab' or 'resized', not {mask_row!r}")
    unknown = set(kw) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown options: {', '.join(sorted(unknown))}")
    opt = {**DEFAULTS, **kw}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    tokenizer = build_bpe_tokenizer(SPECIAL_TOKENS, eos_token=EOS_TOKEN, pad_token=EOS_TOKEN)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    mask_id = ids[MASK_TOKEN]
    # in_vocab: the mask row lies inside the padded vocabulary; resized: the model first has exactly the rows up to
    # the mask id and the row is appended afterwards.
    vocab = mask_id + 1 + opt["extra_vocab_rows"] if mask_row == "in_vocab" else mask_id

    hidden, heads = opt["hidden_size"], opt["num_attention_heads"]
    section = mrope_section(hidden // heads)
    config = GlmOcrConfig(
        text_config=dict(
            vocab_size=vocab,
            hidden_size=hidden,
            intermediate_size=opt["intermediate_size"],
            num_hidden_layers=opt["num_hidden_layers"],
            num_attention_heads=heads,
            num_key_value_heads=opt["num_key_value_heads"],
            max_position_embeddings=4096,
            initializer_range=opt["init_std"],
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section,
                             "partial_rotary_factor": 1.0},
            pad_token_id=ids[EOS_TOKEN],
        ),
        vision_config=dict(
            depth=opt["vision_depth"],
            hidden_size=opt["vision_hidden_size"],
            num_heads=opt["vision_heads"],
            intermediate_size=2 * opt["vision_hidden_size"],
            out_hidden_size=hidden,
            patch_size=14,
            temporal_patch_size=2,
            spatial_merge_size=2,
            image_size=112,
            initializer_range=opt["init_std"],
        ),
        **config_token_ids(ids),
    )

    torch.manual_seed(seed)
    model = GlmOcrForConditionalGeneration(config).eval()
    gen = randomise(model, seed, opt["init_std"])
    stops = [ids[t] for t in STOP_TOKENS]
    with torch.no_grad():
        _prefer_printable(model, tokenizer, keep=set(stops))
        if mask_row == "resized":
            model.resize_token_embeddings(mask_id + 1, mean_resizing=False)
            emb = model.get_input_embeddings().weight
            emb[mask_id] = torch.randn(emb.shape[1], generator=gen) * opt["init_std"]
            head = model.get_output_embeddings().weight
            if head.data_ptr() != emb.data_ptr():
                head[mask_id] = torch.randn(head.shape[1], generator=gen) * opt["init_std"]

    model.generation_config = GenerationConfig(eos_token_id=stops, pad_token_id=ids[EOS_TOKEN], do_sample=False)
    model.save_pretrained(out)

    image_processor = Glm46VImageProcessorPil(
        size={"shortest_edge": opt["min_pixels"], "longest_edge": opt["max_pixels"]},
        patch_size=14, temporal_patch_size=2, merge_size=2,
    )
    processor = image_only_processor_class()(image_processor=image_processor, tokenizer=tokenizer,
                                             chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(out)
    _name_processor_class(out / "processor_config.json", "Glm46VProcessor")  # what the real checkpoint names
    (out / "block_diffusion.json").write_text(json.dumps({"bd_size": int(block_size), "mask_id": mask_id}, indent=2))
    return out


def _prefer_printable(model, tokenizer, keep: set[int]) -> None:
    """Shrink the lm_head rows of tokens that decode to control bytes, broken UTF-8 or special tokens (the stop ids
    excepted), so the gibberish a random model reads out is at least printable text (nicer in GUI screenshots)."""
    head = model.get_output_embeddings().weight
    special = set(tokenizer.all_special_ids)
    for token_id in range(head.shape[0]):
        if token_id in keep:
            continue
        text = tokenizer.decode([token_id]) if token_id < len(tokenizer) else ""
        if token_id in special or not text or "\ufffd" in text or not text.replace("\n", " ").isprintable():
            head[token_id] *= 0.05


def _name_processor_class(path: Path, name: str) -> None:
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
        data["processor_class"] = name
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def sample_images(count: int = 3, *, seed: int = 0):
    """Small synthetic region crops (a line or two of text, different sizes) for tests and benchmarks."""
    import random

    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    words = ("ink", "page", "scribe", "table", "42", "alpha", "x^2", "folio", "margin", "codex", "1887", "vellum")
    sizes = ((200, 60), (120, 120), (320, 48), (90, 160), (240, 90))
    images = []
    for i in range(count):
        w, h = sizes[(i + seed) % len(sizes)]
        shade = rng.randint(225, 255)
        im = Image.new("RGB", (w, h), (shade, shade, rng.randint(215, 255)))
        draw = ImageDraw.Draw(im)
        for line in range(max(1, h // 40)):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(2, 4)))
            draw.text((4 + rng.randint(0, 8), 6 + 30 * line), text, fill=(rng.randint(0, 60),) * 3)
        images.append(im)
    return images
