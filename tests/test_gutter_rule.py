"""A scanned two-column page whose layout box spans both columns is read column by column
(app.core.layout.columns), also when a thin vertical rule runs down the gutter, as in a government gazette; a
one-column page is not cut. The page is rendered text (DejaVu, Pillow) in two columns with a narrow gutter."""
from __future__ import annotations

import numpy as np
import pytest

from app.core.layout.columns import cut_columns
from app.core.layout.postprocess import Detection
from tests.script_pages import DEJAVU
from tests.ci_parts import MISSING_PART

WORDS = ("ο εκκλησιαστικός υπάλληλος τοποθετείται μετά τον διορισμό του σε θέση της οργανικής "
         "the clerk is placed after his appointment in a post of the organic staff").split()


def _page(columns: int, rule: bool):
    """A white page with `columns` columns of 14 justified lines (a 16 px gutter between two), each line's
    box and its column; a 1 px rule down the middle of the gutter when `rule`."""
    from PIL import Image, ImageDraw, ImageFont

    if not (DEJAVU / "DejaVuSerif.ttf").is_file():
        pytest.skip(f"{MISSING_PART} the DejaVu fonts (apt install fonts-dejavu-core)")
    font = ImageFont.truetype(str(DEJAVU / "DejaVuSerif.ttf"), 15)
    image = Image.new("L", (900, 520), 255)
    draw = ImageDraw.Draw(image)
    gutter, left = 16, 40
    width = (820 - gutter * (columns - 1)) // columns
    lines = []
    for c in range(columns):
        x0 = left + c * (width + gutter)
        for n in range(14):
            y = 40 + n * 32
            words, k = [], (n * 5 + c * 3) % len(WORDS)
            while draw.textlength(" ".join(words + [WORDS[k % len(WORDS)]]), font=font) <= width:
                words.append(WORDS[k % len(WORDS)])
                k += 1
            _justified(draw, words, font, x0, y, width)
            box = (x0, y + 3, x0 + width, y + 19)
            lines.append(([float(v) for v in box] + [f"c{c} l{n}"], c))
    if rule:
        mid = left + width + gutter // 2
        draw.line([(mid, 30), (mid, 500)], fill=0, width=1)
    return image, lines


def _justified(draw, words: list[str], font, x0: float, y: float, width: float) -> None:
    """`words` set from x0 to x0 + width, the spaces stretched (a gazette's justified column)."""
    inked = sum(draw.textlength(w, font=font) for w in words)
    space = (width - inked) / max(1, len(words) - 1)
    x = x0
    for w in words:
        draw.text((x, y), w, font=font, fill=0)
        x += draw.textlength(w, font=font) + space


def _read_order(columns: int, rule: bool) -> list[list[int]]:
    """The column of each line held by each box cut_columns makes of one text box over the whole page."""
    image, lines = _page(columns, rule)
    box = Detection("text", 1.0, (30.0, 30.0, 870.0, 505.0), 0)
    out, own = cut_columns([box], {0: [ln for ln, _ in lines]}, image, 1.0)
    column_of = {ln[4]: c for ln, c in lines}
    assert sum(len(held) for held in own) == len(lines)  # every line read once, none left to read again
    return [[column_of[ln[4]] for ln in held] for held in own]


@pytest.mark.parametrize("rule", [False, True], ids=["open gutter", "rule in the gutter"])
def test_a_two_column_scan_is_read_column_by_column(rule):
    assert _read_order(2, rule) == [[0] * 14, [1] * 14]


def test_a_one_column_scan_is_not_cut():
    assert _read_order(1, rule=False) == [[0] * 14]


def test_a_rule_is_no_column_of_its_own():
    """The rule's ink splits the gutter into two halves narrower than a gutter; together they are one."""
    from app.core.layout.columns import split_columns
    from app.core.layout.orientation import ink

    image, lines = _page(2, rule=True)
    height = float(np.median([ln[3] - ln[1] for ln, _ in lines]))
    pieces = split_columns(ink(np.asarray(image)), (30.0, 30.0, 870.0, 505.0), height)
    assert len(pieces) == 2, pieces
    assert pieces[0][2] <= 40 + 402 + 16 and pieces[1][0] >= 40 + 402  # cut inside the gutter
