"""The real-document scorer (app.bench.real_scoring) on scripts other than Latin: what a reader cannot
see does not count (Thai word spacing, one Arabic-script letter in two encodings, kashida, digit shapes), what
it can see does (a wrong letter, text in visual instead of logical order); and the development set holds whole
pages per script."""
from __future__ import annotations

from app.bench import real_corpus
from app.bench.real_scoring import edit, presence

THAI = "สภาเกษตรกรแห่งชาติ เป็นสถาบันแกนหลักประสานการพัฒนาภาคเกษตรกรรม"
ARABIC = "وعليه، فإن الحكومة المصرية تضع صوب أعينها خلال المرحلة المقبلة"
PERSIAN = "سازمان ملی استاندارد ايران شماره ۲۰۳۰۰ کالای داخلی"


def test_thai_spacing_between_words_does_not_count():
    spaced = "สภา เกษตรกร แห่ง ชาติ เป็น สถาบัน แกนหลัก ประสาน การ พัฒนา ภาค เกษตรกรรม"
    assert edit(THAI, spaced) == 0.0
    assert edit(THAI, THAI.replace(" ", "")) == 0.0
    assert presence(THAI, spaced) == 1.0
    wrong_tone = THAI.replace("แห่ง", "แหง")  # a dropped tone mark is a real error
    assert edit(THAI, wrong_tone) > 0.0


def test_arabic_letter_encodings_kashida_and_digit_shapes_fold():
    # the text layer's Arabic yeh and ASCII digits, a Persian reader's yeh and Persian digits: the same page
    layer = "سازمان ملي استاندارد ايران شماره 20300 كالاي داخلي"
    assert edit(PERSIAN, layer) == 0.0
    assert edit(ARABIC, ARABIC.replace("المرحلة", "المرحـــلة")) == 0.0  # kashida stretches, it is no letter
    assert edit("الفترة (٢٠٢٤ - ٢٠٢٦)", "الفترة (2024 - 2026)") == 0.0
    assert edit(PERSIAN, "\u200f" + PERSIAN.replace("۲۰۳۰۰", "\u200e۲۰۳۰۰\u200f")) == 0.0  # bidi marks


def test_arabic_wrong_letters_or_visual_order_still_count():
    garbled = ARABIC.replace("صوب أعينها خلال", "صوو عييهاوخ لوال")  # a broken ToUnicode map's output
    assert edit(ARABIC, garbled) > 0.05  # six letters of 62
    visual = " ".join(word[::-1] for word in reversed(ARABIC.split()))  # glyphs right to left, not logical
    assert edit(ARABIC, visual) > 0.5
    assert presence(ARABIC, visual) == 0.0


def test_each_script_beyond_latin_has_two_whole_pages_as_images():
    pages = real_corpus.load()
    for script in ("cyrillic", "greek", "devanagari", "thai", "korean", "arabic"):
        whole = [p.id for p in pages
                 if p.script == script and p.kind == "scan" and "snippet" not in p.features]
        assert len(whole) >= 2, (script, whole)
