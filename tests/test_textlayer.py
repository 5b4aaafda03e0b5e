"""CER of OCR text against the PDF text layer (rapidfuzz), per block and per page."""
from __future__ import annotations

from app.core.document import TextWord
from app.core.text.textlayer import BlockComparison, cer, compare_block, normalise, page_cer, reference_text


def W(text, box, block=0, line=0, word=0):
    return TextWord(text, box, block, line, word)


WORDS = [
    W("Hello", (10, 10, 40, 20), 0, 0, 0), W("world", (45, 10, 80, 20), 0, 0, 1),
    W("again", (10, 25, 40, 35), 0, 1, 0),
    W("outside", (200, 10, 240, 20), 1, 0, 0),
    W("half", (95, 10, 115, 20), 0, 0, 2),  # 5 of 20 points inside a box ending at x=100: 25 % → not inside
]


def test_reference_text_picks_words_inside_in_text_layer_order():
    assert reference_text(WORDS, (0, 0, 100, 40)) == "Hello world\nagain"
    assert reference_text(WORDS, (0, 0, 100, 15)) == "Hello world"  # half of each word's height is inside
    assert reference_text(WORDS, (300, 300, 400, 400)) == ""


def test_normalise_removes_markup_and_collapses_space():
    assert normalise("## Title\n\n- item  one") == "Title item one"
    assert normalise("<table><tr><td>a</td><td>b &amp; c</td></tr></table>") == "a b & c"
    assert normalise("$$\nx \\tag{2}\n$$") == "x"


def test_cer_values():
    assert cer("Hello world", "Hello world") == 0.0
    assert cer("Hallo world", "Hello world") == 1 / 11
    assert cer("", "abcd") == 1.0
    assert cer("anything", "") is None
    assert cer("<p>Hello</p>", "Hello") == 0.0  # markup is not an error


def test_block_and_page_cer_weight_by_reference_length():
    a = compare_block("a", "Hello world again", WORDS, (0, 0, 100, 40))
    assert a == BlockComparison("a", "Hello world\nagain", 0, 17)
    b = compare_block("b", "outsidx", WORDS, (190, 0, 260, 30))
    assert b.distance == 1 and b.ref_chars == 7
    assert compare_block("c", "text", WORDS, (300, 300, 400, 400)) is None
    assert page_cer([a, b, None]) == 1 / 24
    assert page_cer([None]) is None
