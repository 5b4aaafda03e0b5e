"""Columns inside one text box of a scanned page (app.core.layout.columns): a newspaper article the layout gave one
box over four columns is cut into its headline band and its columns, so it is read down each column, not across."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from app.core.layout.columns import split_columns
from app.core.layout.orientation import ink

NEWSPAPER = Path(__file__).resolve().parents[1] / "corpora/realdocs/pages/s12-newspaper.jpg"


def _page(columns: int, gutter: int, line_h: int = 10, headline: bool = True) -> np.ndarray:
    """A bool ink mask: an optional headline across the page, then `columns` columns of ragged text lines."""
    rng = np.random.default_rng(0)
    mask = np.zeros((400, 900), bool)
    if headline:
        mask[10:30, 20:880] = True
    width = (860 - gutter * (columns - 1)) // columns
    for c in range(columns):
        x0 = 20 + c * (width + gutter)
        for y in range(50, 380, 2 * line_h):
            words = x0
            while words < x0 + width - 20:  # words with spaces narrower than a gutter
                w = int(rng.integers(15, 60))
                mask[y:y + line_h, words:min(words + w, x0 + width)] = True
                words += w + 4
    return mask


def test_a_four_column_article_is_cut_into_its_headline_and_columns():
    mask = _page(4, gutter=14)
    pieces = split_columns(mask, (0, 0, 900, 400), 10)
    assert len(pieces) == 5
    head, *cols = pieces
    assert head[1] == 0 and head[3] <= 50 and head[2] - head[0] == 900  # the headline band over all columns
    assert [round(c[0]) for c in cols] == sorted(round(c[0]) for c in cols)  # left to right
    assert all(a[2] <= b[0] for a, b in zip(cols, cols[1:]))  # no overlap


def test_one_column_and_word_spaces_are_not_cut():
    assert split_columns(_page(1, gutter=0), (0, 0, 900, 400), 10) == [(0, 0, 900, 400)]
    assert split_columns(_page(2, gutter=3), (0, 0, 900, 400), 10) == [(0, 0, 900, 400)]  # a word space wide


def test_the_real_newspaper_band_has_four_columns():
    """A real 1960s student newspaper (corpora/realdocs s12): four columns under a headline."""
    mask = ink(np.asarray(Image.open(NEWSPAPER).convert("L")))
    pieces = split_columns(mask, (0, 20, 1040, 300), 8)
    assert len(pieces) == 5, pieces


def test_overlapping_boxes_are_read_once_and_in_column_order():
    """A real magazine spread's layout (UNLV 8071, corpora/realdocs s04): box A over columns 1-2, box B over columns
    2-4, box C inside column 2 under A. Cut at the gutters, B's column-2 piece keeps only what A and C do not hold,
    and C is read right after A's column-2 piece."""
    from PIL import Image as PILImage

    from app.core.layout.columns import cut_columns
    from app.core.layout.postprocess import Detection

    mask = np.zeros((1000, 1600), bool)
    for x0 in (20, 420, 820, 1220):  # four columns of text lines, 380 px wide, gutters of 20 px
        for y in range(20, 960, 24):
            mask[y:y + 12, x0:x0 + 360] = True
    image = PILImage.fromarray(np.where(mask, 0, 255).astype(np.uint8))
    a = Detection("text", 1.0, (20, 20, 780, 400), 0)
    b = Detection("text", 1.0, (420, 20, 1580, 960), 1)
    c = Detection("text", 1.0, (420, 400, 780, 700), 2)
    lines = {k: [[0, y, 10, y + 12, "line"] for y in range(0, 240, 24)] for k in range(3)}  # points = pixels
    out, own = cut_columns([a, b, c], lines, image, 1.0)
    boxes = [tuple(round(v) for v in d.box) for d in out]
    column2 = [bx for bx in boxes if bx[0] >= 400 and bx[2] <= 800]
    assert column2 == [(420, 20, 780, 400), (420, 400, 780, 700), (420, 700, 780, 960)], boxes
    ys = [bx[1] for bx in column2]
    assert boxes.index(column2[1]) == boxes.index(column2[0]) + 1 and ys == sorted(ys)
