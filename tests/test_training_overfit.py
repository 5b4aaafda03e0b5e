"""The recipe end to end on CPU: a few lines, trained with the joint objective (preset "test", B = 4), after which
the checkpoint loads through the app's loader, reads its lines exactly, and the app's self-speculative decoder gives
the AR output token for token while committing more than one token per round (the drafts are accepted)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def overfit():
    from app.core.training.overfit import overfit_checkpoint

    return overfit_checkpoint()


def test_overfit_reads_its_lines_exactly(overfit):
    folder, report = overfit
    assert report["cer"] == 0.0 and report["exact_lines"] == report["eval_lines"] == 4
    assert report["final_ar"] < 0.2 and report["final_diff"] < 0.3
    for name in ("config.json", "model.safetensors", "tokenizer.json", "block_diffusion.json", "MODEL_CARD.md"):
        assert (folder / name).is_file(), name
    card = (folder / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "held-out" in card and "parameters" in card


def test_selfspec_equals_ar_with_accepted_drafts(overfit):
    try:
        from app.core.engines.glmocr import open_ar, open_selfspec
    except ImportError:  # before the engines package
        from app.core.engines.glmocr import open_ar, open_selfspec
    from app.core.loader import load_model
    from app.core.training.overfit import OVERFIT_TEXTS, overfit_lines

    folder, _ = overfit
    loaded = load_model("builtin", folder, device="cpu", dtype="fp32")
    assert loaded.special["block_size"] == 4 and loaded.special["mask_token_id"] == loaded.tokenizer.convert_tokens_to_ids("<|mask|>")
    ar = open_ar(loaded=loaded, manifest="builtin")
    spec = open_selfspec(loaded=loaded, manifest="builtin")
    _, lines = overfit_lines()
    rounds = tokens = forwards = 0
    for line, text in zip(lines, OVERFIT_TEXTS):
        from PIL import Image

        image = Image.fromarray(line.image).convert("RGB")
        a = ar.decode_region(image, "text", region_id="a")
        s = spec.decode_region(image, "text", region_id="s")
        assert a.text == text
        assert s.tokens == a.tokens and s.text == a.text
        rounds += s.stats["rounds"]
        tokens += s.stats["tokens"]
        forwards += s.stats["forwards"]
    assert tokens / rounds > 2.0  # more than a0 + one correction a round: drafts were accepted
    assert tokens / forwards > 1.0  # TPF above AR's 1
