"""`scriptorium train --recipe vision` (the earlier GlmOcr-vision recipe) on CPU: a two-step run writes a loadable checkpoint and a model card; --resume continues
from the saved step; worker processes render batches."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")


def test_train_then_resume(tmp_path, capsys):
    from app.cli import main
    from app.core.loader import load_model

    out = tmp_path / "ckpt"
    args = ["train", "--recipe", "vision", "--device", "cpu", "--out", str(out), "--preset", "test", "--batch-size", "2", "--eval-lines",
            "1", "--no-final-eval", "--no-install-fonts", "--workers", "0", "--block-size", "4"]
    assert main(args + ["--steps", "2"]) == 0
    report = json.loads((out / "train_report.json").read_text())
    assert report["steps"] == 2 and report["lines_seen"] == 4 and report["eval_lines"] == 1
    card = (out / "MODEL_CARD.md").read_text()
    assert "NOT met" in card  # two steps do not read: the card says so
    loaded = load_model("builtin", out, device="cpu")
    assert loaded.special["block_size"] == 4
    assert main(args + ["--steps", "3", "--resume"]) == 0
    assert "resumed from" in capsys.readouterr().out
    assert json.loads((out / "train_report.json").read_text())["steps"] == 3


def test_batches_render_in_worker_processes():
    from app.core.training.synthetic import BatchStream

    it = BatchStream(3, workers=2, seed=5).batches()
    try:
        batches = [next(it) for _ in range(2)]
    finally:
        it.close()
    for b in batches:
        assert b.images.shape[0] == 3 and b.images.shape[1] == 32 and b.images.shape[2] % 16 == 0
        assert len(b.texts) == 3 and b.columns.shape == (3, b.images.shape[2] // 16)


def test_one_step_under_bf16_autocast(tmp_path):
    """The GPU run's dtype path (bf16 autocast: vision features into fp32 embeddings, bf16 logits into the losses,
    the auxiliary head), exercised on CPU so a dtype mismatch cannot first show up on the GPU."""
    import math

    from app.core.training.synthetic import render_batch
    from app.core.training.trainer import TrainConfig, Trainer

    tr = Trainer(TrainConfig(out=str(tmp_path), device="cpu", preset="test", block_size=4, amp=True, steps=1,
                             final_eval=False), log=lambda _m: None)
    parts = tr.train_step(render_batch(1, 2, length_class=0), 1e-3)
    assert all(math.isfinite(v) for v in parts.values()) and {"ar", "diff", "aux", "loss"} <= set(parts)


def test_the_model_card_verdict():
    from app.core.training.trainer import bar_verdict, model_card

    good = {"cer": 0.01, "cer_app_ar": 0.02, "pdf_cer": 0.05, "selfspec_equals_ar": "10/10 lines token-identical",
            "eval_set": "held-out clean rendered lines"}
    assert bar_verdict(good) == "met"
    assert bar_verdict({**good, "pdf_cer": 0.2}).startswith("NOT met")
    assert bar_verdict({**good, "selfspec_equals_ar": "9/10 lines token-identical"}).startswith("NOT met")
    assert bar_verdict({k: v for k, v in good.items() if k != "pdf_cer"}).startswith("NOT met")
    assert bar_verdict({**good, "eval_set": "the training lines (overfit run)"}).startswith("not applicable")
    assert "| reading bar" in model_card(good)


def test_bad_device_and_numbers_are_one_line_errors(tmp_path, capsys):
    from app.cli import main

    args = ["train", "--recipe", "vision", "--out", str(tmp_path / "ckpt"), "--preset", "test", "--no-install-fonts",
            "--no-final-eval"]
    assert main(args + ["--device", "nope"]) == 2
    err = capsys.readouterr().err
    assert "scriptorium train: unknown device 'nope'" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as info:
        main(args + ["--batch-size", "0"])
    assert info.value.code == 2 and "argument --batch-size: '0' must be above 0" in capsys.readouterr().err
