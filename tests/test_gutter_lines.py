"""A scanned page's lines that the detector joined across a column gutter (app.core.layout.columns.piece_lines):
each column piece keeps its part of the line, its text unknown to the layout; the part takes the characters its
line was read with there, and the engine reads again only a part those cannot tell — the page's other lines keep
the readings of its one OCR pass (app.core.pipeline.page_ocr), with no detection per region. Real models (the shipped built-in model, RapidOCR's ONNX); crops counted on the real recogniser."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from app.core.layout.columns import piece_lines
from app.core.scripts.router import LOST

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
needs_shipped = pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(),
                                   reason="missing part: no shipped built-in model (models/builtin/model.safetensors)")

LEFT, RIGHT = (100, 100, 300, 400), (320, 100, 520, 400)  # two column pieces, a 20-point gutter between


def test_a_line_joined_across_the_gutter_is_cut_at_each_pieces_edge_with_its_text_unknown():
    inside = [110, 120, 290, 132, "left column line"]
    joined = [110, 140, 510, 152, "left words right words"]
    left, right = piece_lines([inside, joined], LEFT), piece_lines([joined], RIGHT)
    assert left == [inside, [110, 140, 300, 152, LOST]]
    assert right == [[320, 140, 510, 152, LOST]]


def test_a_line_mostly_in_the_next_piece_is_left_to_it_and_a_sliver_is_no_line():
    below = [110, 397, 290, 417, "the band's first line"]  # 3 of its 20 points in LEFT
    sliver = [110, 200, 305, 212, "ends a little past the edge"]
    over = [295, 220, 510, 232, "starts in the gutter"]  # 5 points in LEFT: thinner than a line is high
    assert piece_lines([below], LEFT) == []
    assert piece_lines([sliver], LEFT) == [sliver]  # (inside but for its padding: kept as it was read)
    assert piece_lines([over], LEFT) == []


def test_two_lines_joined_into_one_box_over_a_band_edge_are_cut_there_too():
    blob = [110, 380, 510, 420, "two lines the detector boxed as one"]  # half in LEFT, half below it
    (part,) = piece_lines([blob], LEFT)
    assert part == [110, 380, 300, 400, LOST]


class _Document:
    path = "page.png"

    def orientation(self, index):
        return 0, 0.0


def test_the_page_reading_is_reused_for_matched_lines_and_a_cut_part_comes_without_one():
    from app.core.engines.builtin.page_lines import PageLine
    from app.core.pipeline.page_ocr import ScanReader
    from app.core.rapid.recogniser import Reading

    reader = ScanReader(SimpleNamespace(document=_Document()))
    read = Reading(chars=list("left column line"), conf=[0.99] * 16)
    joined = Reading(chars=list("left words right words"), conf=[0.99] * 22)
    page = [PageLine((110, 120, 290, 132), (108, 118, 292, 134), (184, 16), read),
            PageLine((110, 140, 510, 152), (108, 138, 512, 154), (404, 16), joined)]
    reader._pages[reader._key(0)] = (72.0, page)  # (72 DPI: pixels are points)
    region = SimpleNamespace(page=0)
    known = reader.known(region, [[110, 120, 290, 132, "left column line"], [110, 140, 300, 152, LOST]], 72.0,
                         (100.0, 100.0))
    assert [k[1].text if k[1] else None for k in known] == ["left column line", None]
    assert known[0][1] is not read  # a copy the engine may settle in place
    assert known[1][0] == (10.0, 40.0, 200.0, 52.0)  # the cut part's own box, in the crop's pixels
    # a line the page pass never saw (or a page line the layout split into cells): the region is read as given
    assert reader.known(region, [[110, 120, 290, 132, "left column line"], [110, 300, 290, 312, "unseen"]], 72.0,
                        (100.0, 100.0)) is None


@pytest.fixture(scope="module")
def engine(one_torch_thread):
    from app.core.engines import open_engine

    return open_engine("builtin", device="cpu", decoder="unsure")


@needs_shipped
def test_the_engine_reads_only_the_lines_it_was_given_no_reading_for(engine, monkeypatch):
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(DEJAVU, 28)
    lines = ["quick brown fox", "invoice total 99.90"]
    img = Image.new("RGB", (420, 130), "white")
    draw = ImageDraw.Draw(img)
    boxes = []
    for i, t in enumerate(lines):
        draw.text((20, 15 + 55 * i), t, font=font, fill="black")
        boxes.append((16, 11 + 55 * i, 24 + font.getlength(t), 47 + 55 * i))
    first = engine.decode_lines(img, "text", boxes[:1], region_id="p1-r01")
    kept = first.stats["line_stats"][0]
    from app.core.rapid.recogniser import Reading

    reading = Reading(chars=list(kept["recogniser"]), conf=[0.99] * len(kept["recogniser"]))
    crops = []
    real = engine.recogniser.posteriors
    monkeypatch.setattr(engine.recogniser, "posteriors", lambda images: crops.append(len(images)) or real(images))
    both = engine.decode_lines(img, "text", boxes, region_id="p1-r01", known=[(boxes[0], reading), (boxes[1], None)])
    assert crops == [1]  # the one line without a reading, nothing else
    assert both.stats["lines_from"] == "page" and both.stats["lines_read_again"] == 1
    alone = engine.decode_lines(img, "text", boxes[1:], region_id="p1-r01")
    assert both.stats["line_stats"][1]["recogniser"] == alone.stats["line_stats"][0]["recogniser"]
    assert both.text.startswith(kept["text"]) and "99.90" in both.text


@needs_shipped
def test_a_part_cut_at_a_gutter_takes_the_characters_the_joined_line_was_read_with_there(engine):
    """The page pass read the joined line whole; each part's characters are found there by their CTC columns, its
    words placed in the part's own box (PageLine.part), so the part needs no reading of its own (s12 of the real
    set: a third of its recogniser's work was such parts read again)."""
    from PIL import Image, ImageDraw, ImageFont

    from app.core.engines.builtin.page_lines import read_page_lines

    font = ImageFont.truetype(DEJAVU, 28)
    left, right = "quick brown fox", "invoice total 99.90"
    img = Image.new("RGB", (900, 80), "white")
    draw = ImageDraw.Draw(img)
    draw.text((20, 20), left, font=font, fill="black")
    left_end = 20 + font.getlength(left)
    right_x = left_end + 60  # a gutter two letters wide
    draw.text((right_x, 20), right, font=font, fill="black")
    (line,) = read_page_lines(engine, img, dets=[(16, 14, right_x + font.getlength(right) + 4, 56)])
    gutter = (left_end + right_x) / 2
    (lbox, lpart), (rbox, rpart) = line.part(0, gutter), line.part(gutter, 900)
    assert (lpart.text, rpart.text) == (left, right), line.reading.text
    assert lbox[2] == round(gutter, 1) and rbox[0] == round(gutter, 1) and (lbox[1], lbox[3]) == line.box[1::2]
    w, h = round(rbox[2]) - int(rbox[0]), round(rbox[3]) - int(rbox[1])
    words = rpart.word_boxes(rbox, (w, h))
    assert [wd[4] for wd in words] == right.split()
    assert abs(words[0][0] - right_x) < 12, (words[0], right_x)  # where "invoice" stands on the page
    assert line.part(900, 950) is None  # no letter there
