"""Text the engine could not really read is flagged, never reported as a confident "ok": a block of one repeated
character, placeholder characters, a line left mostly unread (a script the recogniser does not know: Cyrillic for
PP-OCRv6), characters outside the page's script. Through the real classic engine where an engine is involved."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.pipeline.quality import mark_page_script, region_outcome, review_reasons
from app.core.document.regions import Region, record_result
from app.core.text.textcheck import dominant_script, line_coverage, script_of, text_reasons

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _region(text: str, stats: dict | None = None, rid: str = "p1-r01") -> Region:
    r = Region(rid, 0, (0, 0, 100, 20), "text", "text", 0)
    record_result(r, text, stats or {"engine": "test"}, cancelled=False, engine="test")
    return r


def test_scripts_of_letters():
    assert [script_of(c) for c in "aЖλ中あ1 ."] == ["latin", "cyrillic", "greek", "cjk", "cjk", "", "", ""]
    assert dominant_script(["Hello world", "中文"]) == "latin"


def test_plain_text_is_ok_and_garbage_is_garbled():
    ok = _region("The quick brown fox jumps over the lazy dog.")
    assert region_outcome(ok) == "ok" and review_reasons(ok) == []
    for garbage in ("µµµµµµµµ“µµµµµ”µµµ", "IIIIIIIIIIIIIIIIIIII", "a\ufffd\ufffd\ufffd b"):
        r = _region(garbage)
        assert region_outcome(r) == "garbled", garbage
        assert review_reasons(r), garbage
    assert region_outcome(_region("--------------------------------")) == "ok"  # a rule is not garbage


def test_characters_outside_the_page_script_need_review_but_stay_ok():
    regions = [_region("An English paragraph on a Latin page.", rid="p1-r01"),
               _region("Hello 世界你好再见朋友 there", rid="p1-r02")]
    mark_page_script(regions)
    assert review_reasons(regions[0]) == []
    assert any("outside the page's script" in why for why in review_reasons(regions[1]))
    assert text_reasons("中文的段落在中文页面上", "cjk") == []


def test_line_coverage_sees_an_unread_line():
    assert line_coverage((0, 0, 600, 40), ",  ?   .") < 0.3
    assert line_coverage((0, 0, 600, 40), "The quick brown fox jumps over the dog") > 0.8
    assert line_coverage((0, 0, 400, 40), "中文的段落在中文页面") > 0.8


def _line(text: str, width: int = 900):
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (width, 70), "white")
    ImageDraw.Draw(img).text((10, 15), text, font=ImageFont.truetype(str(DEJAVU), 32), fill="black")
    return img


def _without_cyrillic():
    """A script router whose Tesseract has every installed model but the Cyrillic ones."""
    from app.core.scripts.catalogue import SCRIPTS
    from app.core.scripts.router import ScriptRouter
    from app.core.scripts.tesseract import Tesseract

    every = Tesseract().languages
    if "rus" not in every:
        pytest.skip("missing part: Tesseract's Russian model (apt-get install tesseract-ocr-rus)")
    return ScriptRouter(Tesseract(languages=every - set(SCRIPTS["cyrillic"].languages)))


@pytest.mark.skipif(not DEJAVU.is_file(), reason="missing part: DejaVu fonts (apt-get install fonts-dejavu-core)")
def test_a_cyrillic_line_no_installed_model_reads_is_flagged_with_low_confidence_and_the_package():
    from app.core.engines import open_engine

    engine = open_engine("classic")
    engine.router = _without_cyrillic()
    result = engine.decode_region(_line("Привет, как дела? Это тестовая строка."), "text", region_id="p1-r01")
    r = _region(result.text, result.stats)
    assert result.stats["unreadable_lines"] == 1
    assert region_outcome(r) == "garbled"
    assert r.extra["confidence"]["min"] < 0.3
    assert any("unread" in why for why in review_reasons(r))
    assert any("Cyrillic" in why and "tesseract-ocr-rus" in why for why in review_reasons(r)), review_reasons(r)
    latin = engine.decode_region(_line("The quick brown fox jumps over 13 lazy dogs."), "text", region_id="p1-r02")
    ok = _region(latin.text, latin.stats, rid="p1-r02")
    assert latin.stats["unreadable_lines"] == 0 and region_outcome(ok) == "ok" and review_reasons(ok) == []
    assert latin.stats["reader"] == "rapidocr"


@pytest.mark.skipif(not DEJAVU.is_file(), reason="missing part: DejaVu fonts (apt-get install fonts-dejavu-core)")
def test_builtin_reads_cyrillic_and_greek_no_worse_than_classic_and_flags_the_unread_line():
    from rapidfuzz.distance import Levenshtein

    from app.core.engines import open_engine

    classic, builtin = open_engine("classic"), open_engine("builtin", device="cpu")
    for truth in ("Привет, как дела? Это тестовая строка.", "Ελληνικά κείμενα για δοκιμή αναγνώρισης"):
        image = _line(truth)
        ours = builtin.decode_region(image, "text", region_id="p1-r01")
        theirs = classic.decode_region(image, "text", region_id="p1-r01")
        cer = Levenshtein.normalized_distance(ours.text, truth)
        assert cer <= Levenshtein.normalized_distance(theirs.text, truth) + 0.05, (ours.text, theirs.text)
        assert "µ" not in ours.text
    builtin.router = _without_cyrillic()
    unread = builtin.decode_region(_line("Привет, как дела? Это тестовая строка."), "text", region_id="p1-r01")
    r = _region(unread.text, unread.stats)
    assert unread.stats["unreadable_lines"] == 1 and region_outcome(r) == "garbled"
    assert r.extra["confidence"]["min"] < 0.3


def test_a_text_layer_in_a_script_the_recogniser_cannot_read_is_kept(tmp_path):
    """A born-digital Korean page: PP-OCRv6 writes no Hangul, so its OCR check cannot judge the layer; the layer is
    taken (not replaced by an OCR reading of a script the recogniser does not know)."""
    import pymupdf

    from pipeline_kit import read
    from app.core.rapid.recogniser import can_read

    text = "코로나바이러스 관련 보험약관상 재해보험금 지급문제 및 개선과제를 살펴본다."
    assert not can_read(text) and can_read("The quick brown fox") and can_read("中文的段落")
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=200)
    page.insert_font(fontname="korea", fontbuffer=pymupdf.Font("korea").buffer)
    page.insert_textbox(pymupdf.Rect(30, 30, 390, 170), text + "\n" + text, fontsize=12, fontname="korea")
    doc.save(tmp_path / "ko.pdf")
    out = read(tmp_path / "ko.pdf")
    read = [r for r in out.pages[0].regions if r.text]
    assert read and all(r.extra["stats"].get("text_source") == "text-layer" for r in read), \
        [(r.text, r.extra.get("layer_rejected")) for r in read]
    assert "코로나바이러스" in " ".join(r.text for r in read)
