"""The tiny GLM-OCR kit: a real GlmOcrForConditionalGeneration checkpoint that the app's loader opens offline."""
from __future__ import annotations

import json

import pytest

from app.core.tiny.glm_checkpoint import MASK_TOKEN, SPECIAL_TOKENS, build


def _prompt(lm, image, text="Text Recognition:"):
    msgs = [{"role": "user", "content": [{"type": "image", "image": image}, {"type": "text", "text": text}]}]
    return lm.processor.apply_chat_template(msgs, tokenize=True, add_generation_prompt=True, return_dict=True,
                                            return_tensors="pt")


@pytest.fixture(scope="module")
def image():
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (200, 60), "white")
    ImageDraw.Draw(im).text((5, 20), "Hello tiny world", fill="black")
    return im


def test_checkpoint_files_and_special_ids(tiny_glmocr_dir):
    names = {p.name for p in tiny_glmocr_dir.iterdir()}
    for required in ("config.json", "model.safetensors", "tokenizer.json", "block_diffusion.json",
                     "generation_config.json", "chat_template.jinja"):
        assert required in names
    tok = json.loads((tiny_glmocr_dir / "tokenizer.json").read_text())
    added = {t["content"]: t["id"] for t in tok["added_tokens"]}
    ids = [added[t] for t in SPECIAL_TOKENS]
    assert ids == sorted(ids) and ids == list(range(ids[0], ids[0] + len(ids)))  # the real relative order
    bd = json.loads((tiny_glmocr_dir / "block_diffusion.json").read_text())
    gen = json.loads((tiny_glmocr_dir / "generation_config.json").read_text())
    assert bd["mask_id"] == added[MASK_TOKEN]
    assert gen["eos_token_id"] == [added["<|endoftext|>"], added["<|user|>"]]


def test_loads_through_the_loader_and_generates(tiny_glmocr_dir, image):
    import torch

    from app.core.checkpoints.loader import load_model

    lm = load_model("gravityocr", tiny_glmocr_dir, device="cpu")
    assert type(lm.model).__name__ == "GlmOcrForConditionalGeneration"
    assert lm.special["mask_token_id"] < lm.model.config.text_config.vocab_size  # an in-vocab row, like 59282
    assert lm.special["block_size"] == 4
    inputs = _prompt(lm, image)
    prompt = lm.tokenizer.decode(inputs["input_ids"][0])
    assert prompt.startswith("[gMASK]<sop><|user|>\n<|begin_of_image|><|image|>")
    assert prompt.endswith("<|end_of_image|>Text Recognition:<|assistant|>\n")
    with torch.no_grad():
        logits = lm.model(**inputs).logits
        out = lm.model.generate(**inputs, max_new_tokens=24, do_sample=False)
    assert logits.shape[-1] == lm.model.config.text_config.vocab_size
    new = out[0, inputs["input_ids"].shape[1]:].tolist()
    assert len(new) >= 8  # random weights with clear margins: not an immediate stop
    assert len(set(new)) >= 3


def test_resized_mask_row(tmp_path, image):
    from app.core.checkpoints.loader import load_model

    path = build(tmp_path / "resized", seed=1, mask_row="resized", block_size=8)
    lm = load_model("gravityocr", path, device="cpu")
    assert lm.special["mask_token_id"] == lm.model.config.text_config.vocab_size - 1  # the appended row
    assert lm.special["block_size"] == 8
    emb = lm.model.get_input_embeddings().weight
    assert float(emb[lm.special["mask_token_id"]].detach().abs().sum()) > 0
