"""A few-line overfit run: the smallest end-to-end proof of the recipe (tests, `scriptorium train --overfit`).

The lines are drawn on one region image, found by the projection-profile line finder and normalised exactly as the
built-in engine does at reading time; the model is trained on those crops (preset "test", block size 4), so after
training it reads them exactly, drafts them by block diffusion, and the built-in engine reads the region image.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

OVERFIT_TEXTS = ("Total 42.50 EUR", "INV-7731 paid", "May 3, 2024", "hello world")


def region_image(texts=OVERFIT_TEXTS, *, size: int = 24):
    """A light region image with `texts` as printed lines (DejaVu Sans when installed, else Pillow's font)."""
    from PIL import Image, ImageDraw

    from app.core.training.synthetic import PIL_DEFAULT, _font, find_fonts

    fonts = find_fonts().get("DejaVu", [])
    path = next((p for p in fonts if p.endswith("DejaVuSans.ttf")), fonts[0] if fonts else PIL_DEFAULT)
    font = _font(path, size)
    step = int(size * 1.9)
    width = int(max(font.getlength(t) for t in texts)) + 40
    img = Image.new("L", (width, step * len(texts) + 20), 248)
    draw = ImageDraw.Draw(img)
    for i, t in enumerate(texts):
        draw.text((16, 12 + i * step), t, font=font, fill=24)
    return img.convert("RGB")


def overfit_lines(texts=OVERFIT_TEXTS):
    """(region image, [synthetic.Line]) — the engine's own line crops of the region, with their texts."""
    try:
        from app.core.engines.line_finder import split_lines, to_grey
    except ImportError:  # before the engines package
        from app.core.engines.line_finder import split_lines, to_grey
    from app.core.training.synthetic import COLUMN, Line

    img = region_image(texts)
    found = split_lines(img)
    if len(found) != len(texts):
        raise RuntimeError(f"the line finder found {len(found)} lines in the overfit region, expected {len(texts)}")
    lines = []
    for (_, line_img), text in zip(found, texts):
        grey = to_grey(line_img)
        ink = np.nonzero((grey < 128).any(axis=0))[0]
        x0, x1 = (int(ink[0]), int(ink[-1]) + 1) if ink.size else (0, grey.shape[1])
        cols = []
        for c in range(grey.shape[1] // COLUMN):  # the char under each column, spread evenly over the ink
            cx = c * COLUMN + COLUMN / 2
            k = int((cx - x0) / max(1, x1 - x0) * len(text))
            cols.append(k if x0 <= cx < x1 and 0 <= k < len(text) else -1)
        lines.append(Line(np.ascontiguousarray(grey), text, cols, int(np.percentile(grey, 90))))
    return img, lines


def train_overfit(out_dir, *, steps: int = 150, seed: int = 0, log=lambda _m: None) -> dict:
    """Train the overfit model into `out_dir` (a checkpoint folder); returns the trainer's report."""
    import torch

    from app.core.training.trainer import TrainConfig, train

    _, lines = overfit_lines()
    cfg = TrainConfig(out=str(out_dir), device="cpu", minutes=None, steps=steps, preset="test", block_size=4,
                      lr=3e-3, warmup_steps=10, aux_weight=0.3, seed=seed, log_every=50, eval_lines=len(lines),
                      fixed_lines=lines, save_every_minutes=1e9)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # matrices this small gain nothing from threads, and lose a lot on a busy machine
    try:
        return train(cfg, log=log)
    finally:
        torch.set_num_threads(threads)


_CACHE: dict[str, tuple[Path, dict]] = {}


def overfit_checkpoint() -> tuple[Path, dict]:
    """The overfit checkpoint, trained once per process into a temporary folder: (folder, report)."""
    if "ckpt" not in _CACHE:
        import atexit
        import shutil

        root = Path(tempfile.mkdtemp(prefix="scriptorium-overfit-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        out = root / "builtin"
        _CACHE["ckpt"] = (out, train_overfit(out))
    return _CACHE["ckpt"]
