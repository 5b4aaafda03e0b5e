"""How well the script router reads pages in scripts the bundled recogniser cannot (app.core.scripts): loose line
boxes, whole areas read by Tesseract, the language within a script, the text-layer check for those scripts.

Real Tesseract, lines rendered with fonts the scripts bench (app.bench.scripts) never uses."""
from __future__ import annotations

from pathlib import Path

import pytest

FONTS = Path("/usr/share/fonts/truetype")
RUSSIAN = ["Ученая степень кандидата наук присуждается советом",
           "по результатам публичной защиты диссертации соискателем",
           "ученой степени, успешно сдавшим кандидатские экзамены",
           "перечень и примерные программы которых утверждаются",
           "научной специальности, предусмотренной номенклатурой"]
THAI = ["สภาเกษตรกรแห่งชาติเป็นสถาบันหลัก",
        "ประสานการพัฒนาภาคการเกษตรของประเทศ",
        "ให้เกษตรกรมีความเข้มแข็งและพึ่งตนเองได้"]
ARABIC = ["تحسين الإنتاجية وحل المشكلات من خلال البرمجة",
          "تعتبر البرمجة من الأدوات القوية التي يمكن أن تعزز",
          "الإنتاجية وتساعد في إيجاد حلول فعالة للمشكلات"]


def _tesseract(*langs: str):
    from app.core.scripts.tesseract import Tesseract, binding_missing

    if binding_missing():
        pytest.skip("missing part: the tesserocr package (pip install tesserocr)")
    tess = Tesseract()
    for lang in langs:
        if lang not in tess.languages:
            pytest.skip(f"missing part: Tesseract's {lang} model (apt-get install tesseract-ocr-{lang})")
    return tess


def _font(name: str, px: int):
    from PIL import ImageFont

    path = FONTS / name
    if not path.is_file():
        pytest.skip(f"missing part: the font {name} (apt-get install fonts-dejavu-core fonts-noto-core)")
    return ImageFont.truetype(str(path), px)


def _page(lines: list[str], font: str, px: int = 30, step: float = 1.25, rtl: bool = False):
    """(page image, each line's ink box) of `lines` set close (`step` times the size apart)."""
    from PIL import Image, ImageDraw

    face = _font(font, px)
    margin = 2 * px
    width = max(int(face.getlength(t)) for t in lines) + 2 * margin
    page = Image.new("RGB", (width, 2 * margin + round(step * px) * len(lines)), "white")
    draw = ImageDraw.Draw(page)
    boxes = []
    for k, text in enumerate(lines):
        x = width - margin - int(face.getlength(text)) if rtl else margin
        y = margin + k * round(step * px)
        kw = {"direction": "rtl"} if rtl else {}
        draw.text((x, y), text, font=face, fill="black", **kw)
        boxes.append(tuple(float(v) for v in draw.textbbox((x, y), text, font=face, **kw)))
    return page, boxes


def _loose(box, share: float = 0.45):
    """A detector's loose box: taller by `share` of the line's height above and below."""
    h = box[3] - box[1]
    return (box[0] - 4, box[1] - share * h, box[2] + 4, box[3] + share * h)


def _cer(ref: str, got: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, got = "".join(ref.split()), "".join(got.split())
    return Levenshtein.distance(ref, got) / max(1, len(ref))


def test_the_line_band_keeps_the_line_and_its_marks_and_drops_its_neighbours_halves():
    from app.core.scripts.crops import line_band

    #        neighbour above | gap | mark | line body | gap | neighbour below
    rows = [True] * 6 + [False] * 6 + [True] * 2 + [False] + [True] * 20 + [False] * 6 + [True] * 5
    band = line_band(rows, 10.0, 40.0)
    assert band == (12, 35)
    assert line_band([False] * 30, 5.0, 25.0) is None


def test_a_loose_box_over_lines_set_close_reads_its_own_line():
    from app.core.scripts.router import crop_line

    tess = _tesseract("rus")
    page, boxes = _page(RUSSIAN, "dejavu/DejaVuSerif.ttf")
    for k in (1, 2, 3):
        crop = crop_line(page, _loose(boxes[k], 0.5))
        top, bottom = crop.info["origin"][1], crop.info["origin"][1] + crop.height
        assert top < boxes[k - 1][3] - 5 or bottom > boxes[k + 1][1] + 5  # it takes in a neighbour's half
        got = tess.read(crop, "rus")
        assert _cer(RUSSIAN[k], got.text) < 0.05, got.text


def test_a_russian_page_is_read_in_russian_not_bulgarian_and_every_line_by_tesseract():
    from app.core.scripts.router import ScriptRouter

    tess = _tesseract("rus", "bul", "ukr", "srp")
    page, boxes = _page(RUSSIAN, "dejavu/DejaVuSerif.ttf")
    router = ScriptRouter(tess)
    results = router.route(page, [(_loose(b), "", 0.0) for b in boxes])
    assert router.page_lang == "rus"
    assert all(r is not None and r.reader == "tesseract:rus" for r in results)
    assert _cer(" ".join(RUSSIAN), " ".join(r.text for r in results)) < 0.03


def test_a_thai_page_split_into_pieces_is_read_whole_each_piece_its_own_words_without_spaces():
    from app.core.scripts.block import block_readings

    tess = _tesseract("tha")
    page, boxes = _page(THAI, "noto/NotoSansThai-Regular.ttf", step=1.8)
    # the detector cut each line in two at its middle, as it splits Thai lines
    pieces = [p for b in boxes for p in ((b[0], b[1], (b[0] + b[2]) / 2, b[3]), ((b[0] + b[2]) / 2, b[1], b[2], b[3]))]
    got = block_readings(tess, page, "tha", pieces, list(range(len(pieces))))
    for k, line in enumerate(THAI):
        halves = [got[i].text for i in (2 * k, 2 * k + 1) if i in got]
        assert _cer(line, "".join(halves)) < 0.08, halves
        assert not any(" " in h for h in halves)  # no space where the page shows none
    assert all(w[0] >= pieces[i][0] - 20 and w[2] <= pieces[i][2] + 20 for i, r in got.items() for w in r.words)


def test_an_arabic_area_read_whole_gives_each_line_in_logical_order():
    from app.core.scripts.block import block_readings

    tess = _tesseract("ara")
    page, boxes = _page(ARABIC, "noto/NotoSansArabic-Regular.ttf", step=1.9, rtl=True)
    got = block_readings(tess, page, "ara", boxes, [0, 1, 2], rtl=True)
    for k, line in enumerate(ARABIC):
        assert _cer(line, got[k].text) < 0.08, got[k].text
        assert got[k].text.split()[0] == line.split()[0]  # the first word read first: logical order


def test_hocr_lines_keep_words_in_their_line_with_boxes_and_confidences():
    from app.core.scripts.tesseract import hocr_lines, joined

    hocr = ("<span class='ocr_line' id='line_1_1' title=\"bbox 10 20 300 50; baseline 0 -3\">"
            "<span class='ocrx_word' id='word_1_1' title='bbox 10 22 80 48; x_wconf 91'>مرحبا</span> "
            "<span class='ocrx_word' id='word_1_2' title='bbox 90 22 150 48; x_wconf 45'>&amp;</span></span>"
            "<span class='ocr_header' id='line_1_2' title=\"bbox 10 60 300 90\">"
            "<span class='ocrx_word' id='word_1_3' title='bbox 10 60 40 90; x_wconf 80'>ส</span>"
            "<span class='ocrx_word' id='word_1_4' title='bbox 41 60 60 90; x_wconf 80'>วัส</span>"
            "<span class='ocrx_word' id='word_1_5' title='bbox 90 60 120 90; x_wconf 80'>ดี</span></span>")
    lines = hocr_lines(hocr, -10)
    assert [box for box, _ in lines] == [(0.0, 10.0, 290.0, 40.0), (0.0, 50.0, 290.0, 80.0)]
    assert lines[0][1] == [[0.0, 12.0, 70.0, 38.0, "مرحبا", 0.91], [80.0, 12.0, 140.0, 38.0, "&", 0.45]]
    assert joined(lines[1][1], "tha", 30.0) == "สวัส ดี"  # a gap of 30 px on a 30 px line is a space, 1 px not
    assert joined(lines[0][1], "ara", 30.0) == "مرحبا &"


def test_a_garbled_arabic_text_layer_fails_the_check_and_a_good_one_passes():
    from PIL import Image, ImageDraw

    from app.core.pipeline.text_source import _fails, _squash
    from app.core.scripts.layer_check import checked_pairs, layer_language

    _tesseract("ara", "fas")
    good = ARABIC[1] + " SARS 2024"  # a Latin name and digits: not the check's business
    # a font with a broken ToUnicode table: the glyphs are right, the layer's letters are not (a real page's)
    garbled = "الوووو،ها، والبلوووخ الوووديها المعلوودل SARS 2024"
    face = _font("noto/NotoSansArabic-Regular.ttf", 34)
    line = Image.new("RGB", (int(face.getlength(good)) + 40, 70), "white")
    ImageDraw.Draw(line).text((20, 10), good, font=face, fill="black", direction="rtl")
    assert layer_language(good) == "ara" and layer_language("پژوهش در بازار کالا") == "fas"
    assert layer_language("Hello world") is None
    (ref, read), (bad_ref, bad_read) = checked_pairs([(line, "ara", _squash(good)), (line, "ara", _squash(garbled))])
    assert "SARS" not in ref and not _fails(ref, read)
    assert _fails(bad_ref, bad_read)
    blank = Image.new("RGB", line.size, "white")  # nothing read: no judgement
    assert not _fails(*checked_pairs([(blank, "ara", _squash(garbled))])[0])
