"""The tiny Unlimited-OCR kit: a real UnlimitedOcrForConditionalGeneration checkpoint that loads through the app's
loader and the real processor, offline."""
from __future__ import annotations

import torch
from PIL import Image


def test_tiny_unlimited_loads_and_runs(tiny_unlimited_dir):
    from app.core.checkpoints.loader import load_model
    from app.core.tiny.unlimited import BOS, IMAGE, PAGE

    lm = load_model("unlimited-ocr", tiny_unlimited_dir, device="cpu")
    assert type(lm.model).__name__ == "UnlimitedOcrForConditionalGeneration"
    assert lm.special["sliding_window"] == 8 == lm.model.config.text_config.sliding_window
    tok = lm.tokenizer
    assert lm.model.config.image_token_id == tok.convert_tokens_to_ids(IMAGE)
    # <PAGE> is ordinary text: it survives skip_special_tokens, the det tags do not
    ids = tok("<PAGE><|det|>text [1, 2, 3, 4]<|/det|>hi", add_special_tokens=False)["input_ids"]
    assert PAGE in tok.decode(ids, skip_special_tokens=True)
    assert "<|det|>" not in tok.decode(ids, skip_special_tokens=True)

    pages = [Image.new("RGB", (60, 90), "white"), Image.new("RGB", (90, 60), "gray")]
    inputs = lm.processor(text=IMAGE * 2 + "Multi page parsing.", images=pages, return_tensors="pt",
                          crop_to_patches=False)
    ids = inputs["input_ids"][0].tolist()
    assert ids[0] == tok.convert_tokens_to_ids(BOS)  # BOS prepended, no chat markup
    assert ids.count(lm.model.config.image_token_id) == 2 * 7  # 2 pages × (2 × 3 + 1) base-mode tokens
    with torch.no_grad():
        out = lm.model(**inputs)
    assert out.logits.shape == (1, len(ids), lm.model.config.text_config.vocab_size)
    assert torch.isfinite(out.logits).all()
