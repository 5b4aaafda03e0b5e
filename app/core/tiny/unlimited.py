"""A tiny, randomly initialised Unlimited-OCR checkpoint of the real `UnlimitedOcrForConditionalGeneration` class.

`build(out_dir)` writes config.json, model.safetensors, generation_config.json, the tokenizer files and the processor
files (`UnlimitedOcrImageProcessor` + `UnlimitedOcrProcessor`); `app.core.checkpoints.loader.load_model("unlimited-ocr", out_dir)`
loads it through `AutoProcessor` offline. The architecture is the real one at toy sizes: a 2-layer MoE text decoder
(4 heads × 16, every layer `reference_sliding_attention` with a small `sliding_window`, so eviction happens after a
handful of tokens), a SAM + CLIP vision tower working on 16 px views with 2 px patches, so one base-mode page is
2 × (2 + 1) + 1 = 7 image tokens and gundam tiles add (2·rows) × (2·columns + 1) more. The special tokens are the real checkpoint's
(BOS, EOS, PAD, `<image>`, `<|ref|>`, `<|/ref|>`, `<|det|>`, `<|/det|>`, `<|grounding|>`), `<PAGE>` is an
ordinary added token (as in the real vocabulary it survives `skip_special_tokens`), and the tokenizer prepends BOS.

Weights are drawn with a larger std than the HF default so greedy decoding has clear top-1 margins; outputs are
gibberish but long and deterministic. What must never live here: decoding code.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.tiny.random_init import randomise

BOS = "<｜begin▁of▁sentence｜>"
EOS = "<｜end▁of▁sentence｜>"
PAD = "<｜▁pad▁｜>"
IMAGE = "<image>"
SPECIAL_TOKENS = (BOS, EOS, PAD, IMAGE, "<|ref|>", "<|/ref|>", "<|det|>", "<|/det|>", "<|grounding|>")
PAGE = "<PAGE>"  # plain text in the real checkpoint's output; an ordinary added token here

# What the tiny tokenizer is trained on: the output grammar of the real model, so decoded outputs look like it.
CORPUS = (
    "<PAGE><|det|>title [12, 30, 980, 88]<|/det|># Annual report\n",
    "<|det|>text [40, 120, 960, 400]<|/det|>The quick brown fox jumps over the lazy dog. Pages and regions.\n",
    "<|det|>table [50, 420, 950, 700]<|/det|><table><tr><td>cell</td><td>42</td></tr></table>\n",
    "<|det|>image [100, 710, 600, 990]<|/det|>\n<|det|>header [0, 0, 999, 20]<|/det|>Chapter 1\n",
    "<|det|>equation [200, 300, 800, 350]<|/det|>\\[ E = mc^2 + \\frac{a}{b} \\]\n",
    "document parsing. Multi page parsing. 0123456789 , . ; : ! ? ( ) [ ] { } - + = * / % # @",
)

DEFAULTS: dict[str, Any] = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=96,
    moe_intermediate_size=32,
    n_routed_experts=4,
    num_experts_per_tok=2,
    n_shared_experts=1,
    image_size=16,  # global view (the real model: 1024)
    tile_size=16,  # gundam tiles (the real model: 640)
    patch_size=2,  # SAM patch (the real model: 16); with the 4× downsample a 16 px view gives 2 × 2 queries
    sam_hidden_size=32,
    sam_layers=2,
    clip_hidden_size=32,  # must equal the last SAM downsample channel count (SAM features feed CLIP directly)
    clip_layers=1,
    vocab_size=384,  # BPE merges before the specials
    max_position_embeddings=32768,
    init_std=0.15,
)


def build_tokenizer(vocab_size: int = DEFAULTS["vocab_size"]):
    """The tiny tokenizer: byte-level BPE + the real special tokens + `<PAGE>`; its post-processor prepends BOS."""
    from tokenizers.processors import TemplateProcessing

    from app.core.tiny.tokenizer import build_bpe_tokenizer

    tok = build_bpe_tokenizer(SPECIAL_TOKENS, vocab_size=vocab_size, corpus=CORPUS, eos_token=EOS, pad_token=PAD,
                              bos_token=BOS, model_max_length=32768)
    tok.add_tokens([PAGE])
    bos_id = tok.convert_tokens_to_ids(BOS)
    tok.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)]
    )
    return tok


def build(out_dir: str | Path, *, seed: int = 0, sliding_window: int = 8, **kw: Any) -> Path:
    """Write a complete tiny checkpoint to `out_dir` and return it. `sliding_window` is the R-SWA window W (the
    real model: 128). Keyword overrides: see DEFAULTS."""
    import torch
    from transformers import (
        GenerationConfig,
        UnlimitedOcrConfig,
        UnlimitedOcrForConditionalGeneration,
        UnlimitedOcrImageProcessor,
        UnlimitedOcrProcessor,
    )

    unknown = set(kw) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"unknown options: {', '.join(sorted(unknown))}")
    opt = {**DEFAULTS, **kw}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    tokenizer = build_tokenizer(opt["vocab_size"])
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS + (PAGE,)}
    vocab = len(tokenizer) + 8  # a few spare rows, as real checkpoints pad their vocabulary

    sam_hidden, clip_hidden = opt["sam_hidden_size"], opt["clip_hidden_size"]
    config = UnlimitedOcrConfig(
        text_config=dict(
            vocab_size=vocab,
            hidden_size=opt["hidden_size"],
            intermediate_size=opt["intermediate_size"],
            moe_intermediate_size=opt["moe_intermediate_size"],
            num_hidden_layers=opt["num_hidden_layers"],
            num_attention_heads=opt["num_attention_heads"],
            num_key_value_heads=opt["num_attention_heads"],
            n_routed_experts=opt["n_routed_experts"],
            num_experts_per_tok=opt["num_experts_per_tok"],
            n_shared_experts=opt["n_shared_experts"],
            max_position_embeddings=opt["max_position_embeddings"],
            sliding_window=int(sliding_window),
            bos_token_id=ids[BOS],
            eos_token_id=ids[EOS],
            pad_token_id=ids[PAD],
            initializer_range=opt["init_std"],
        ),
        vision_config=dict(
            sam_config=dict(
                hidden_size=sam_hidden,
                output_channels=16,
                num_hidden_layers=opt["sam_layers"],
                num_attention_heads=2,
                image_size=opt["image_size"],
                patch_size=opt["patch_size"],
                window_size=2,
                global_attn_indexes=[opt["sam_layers"] - 1],
                mlp_dim=2 * sam_hidden,
                downsample_channels=[24, clip_hidden],
            ),
            encoder_config=dict(
                hidden_size=clip_hidden,
                intermediate_size=2 * clip_hidden,
                num_hidden_layers=opt["clip_layers"],
                num_attention_heads=2,
                image_size=opt["image_size"] // opt["patch_size"] // 4 * 2,
                patch_size=2,
            ),
        ),
        image_token_id=ids[IMAGE],
    )

    torch.manual_seed(seed)
    model = UnlimitedOcrForConditionalGeneration(config).eval()
    randomise(model, seed, opt["init_std"])
    model.generation_config = GenerationConfig(
        bos_token_id=ids[BOS], eos_token_id=ids[EOS], pad_token_id=ids[PAD], do_sample=False
    )
    model.save_pretrained(out)

    size = opt["image_size"]
    image_processor = UnlimitedOcrImageProcessor(
        size={"height": size, "width": size}, tile_size=opt["tile_size"],
        maximum_pad_value=size // 2,  # below the view size, so base mode pads to a square like the real 1024 > 640
    )
    processor = UnlimitedOcrProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=opt["patch_size"], downsample_ratio=4
    )
    processor.save_pretrained(out)
    return out
