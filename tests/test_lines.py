"""The projection-profile line finder and line normalisation (app.core.engines.line_finder)."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from app.core.engines.line_finder import find_lines, normalize_line, split_lines


def _page(texts, *, size=22, gap=1.9, ink=20, bg=250, width=640, x=18):
    from app.core.training.synthetic import PIL_DEFAULT, _font, find_fonts

    fonts = find_fonts().get("DejaVu", [PIL_DEFAULT])
    font = _font(fonts[0], size)
    step = int(size * gap)
    img = Image.new("L", (width, step * len(texts) + 2 * size), bg)
    draw = ImageDraw.Draw(img)
    truth = []
    for i, t in enumerate(texts):
        y = size + i * step
        draw.text((x, y), t, font=font, fill=ink)
        truth.append(draw.textbbox((x, y), t, font=font))
    return img, truth


def _covers(box, truth_box):
    x0, y0, x1, y1 = box
    tx0, ty0, tx1, ty1 = truth_box
    return x0 <= tx0 + 1 and y0 <= ty0 + 1 and x1 >= tx1 - 1 and y1 >= ty1 - 1


def test_finds_each_line_in_order():
    texts = ["Total amount: 1,234.56 EUR", "gjpqy descenders, Ünïcödé accents", "INV-2024-00042", "ok"]
    img, truth = _page(texts)
    boxes = find_lines(img)
    assert len(boxes) == len(texts)
    assert all(_covers(b, t) for b, t in zip(boxes, truth))
    assert [b[1] for b in boxes] == sorted(b[1] for b in boxes)
    for a, b in zip(boxes, boxes[1:]):
        assert a[3] <= b[1]  # no overlap between consecutive lines


def test_tight_lines_and_dark_background():
    texts = ["first line of text", "second line of text", "third line"]
    img, truth = _page(texts, gap=1.25)
    assert len(find_lines(img)) == 3
    inverted = Image.fromarray(255 - np.asarray(img))
    assert len(find_lines(inverted)) == 3


def test_blank_and_single_line():
    assert find_lines(Image.new("RGB", (200, 60), "white")) == []
    img, truth = _page(["just one line"])
    (box,) = find_lines(img)
    assert _covers(box, truth[0])


def test_normalized_line_is_model_ready():
    img, _ = _page(["a line to normalise", "b"])
    for box, line in split_lines(img):
        assert line.mode == "RGB" and line.height == 32 and line.width % 16 == 0
        assert line.width >= 16
    tiny = normalize_line(Image.new("L", (5, 3), 255))
    assert tiny.size == (64, 32)  # 5×3 scaled to height 32 is 53 wide, padded to 64


def test_lines_of_the_bundled_sample_pdf():
    """Every text block of the sample PDF: as many lines found as the text layer has distinct baselines."""
    import pymupdf

    from app.core.base.paths import sample_document

    checked = 0
    with pymupdf.open(str(sample_document())) as doc:
        page = doc[0]
        dpi = 150
        s = dpi / 72
        pix = page.get_pixmap(dpi=dpi)
        img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
        for block in page.get_text("dict")["blocks"]:
            if block["type"] != 0:
                continue
            rows = {round(line["bbox"][1]) for line in block["lines"]
                    if "".join(sp["text"] for sp in line["spans"]).strip()}
            x0, y0, x1, y1 = block["bbox"]
            crop = img.crop((int(x0 * s) - 4, int(y0 * s) - 4, int(x1 * s) + 4, int(y1 * s) + 4))
            assert len(find_lines(crop)) == len(rows), block["lines"][0]["spans"][0]["text"]
            checked += 1
    assert checked >= 8
