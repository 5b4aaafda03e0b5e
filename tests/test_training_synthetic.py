"""The synthetic line generator: texts, fonts, rendering, the per-column character targets, determinism."""
from __future__ import annotations

import random

import numpy as np

from app.core.training.synthetic import (
    LENGTH_CLASSES, PIL_DEFAULT, find_fonts, fonts_list, random_text, render_batch, render_line,
)
from app.core.engines.builtin.vocab import CHARSET, build_char_tokenizer


def test_texts_fit_their_length_class_and_the_vocabulary():
    rng = random.Random(0)
    kinds = {"digit": 0, "upper": 0, "punct": 0, "space": 0}
    for i in range(400):
        lo, hi = LENGTH_CLASSES[i % len(LENGTH_CLASSES)]
        t = random_text(rng, lo, hi)
        assert 1 <= len(t) <= hi and t == t.strip() and "  " not in t
        assert set(t) <= set(CHARSET)
        kinds["digit"] += any(c.isdigit() for c in t)
        kinds["upper"] += any(c.isupper() for c in t)
        kinds["punct"] += any(c in ".,:;-/$€%" for c in t)
        kinds["space"] += " " in t
    assert all(v > 100 for v in kinds.values()), kinds


def test_fonts_include_pillows_scalable_font():
    fonts = find_fonts()
    assert fonts["Pillow"] == [PIL_DEFAULT]
    assert PIL_DEFAULT in fonts_list(fonts)


def test_rendered_line_geometry_and_column_targets():
    line = render_line("WIDE wide 0123", PIL_DEFAULT, size=30, pad_left=5)
    assert line.image.shape[0] == 32 and line.image.shape[1] % 16 == 0 and line.image.dtype == np.uint8
    cols = [k for k in line.columns if k >= 0]
    assert cols == sorted(cols) and cols[0] <= 1 and cols[-1] >= len(line.text) - 3  # left to right over the text
    ink = np.nonzero((line.image < 128).any(axis=0))[0]
    inked_cols = {int(x) // 16 for x in ink}
    assert all(line.columns[c] >= 0 for c in inked_cols if c < len(line.columns) - 1)


def test_batches_are_deterministic_and_tokenizable():
    a, b = render_batch(11, 4), render_batch(11, 4)
    assert a.texts == b.texts and np.array_equal(a.images, b.images)
    tok = build_char_tokenizer()
    unk = tok.convert_tokens_to_ids(tok.unk_token)
    for t in a.texts:
        assert unk not in tok(t, add_special_tokens=False).input_ids
    clean = render_batch(3, 2, clean=True)
    assert clean.images.max() == 255  # clean lines: white background
