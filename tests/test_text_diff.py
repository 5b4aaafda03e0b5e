"""The side-by-side word diff (CER and re-run conflicts): changed words marked on both sides, character detail
inside a word changed for another, a count of differing words; shown by the block bar."""
from __future__ import annotations

import re

from app.gui.text_diff import CAME, GONE, side_by_side, word_diff


def _marked(html_text: str, style: str) -> list[str]:
    return re.findall(rf'<span style="{re.escape(style)}">(.*?)</span>', html_text)


def test_words_only_on_one_side_are_marked_and_a_changed_word_shows_its_characters():
    left, right, changed = word_diff("The quick brown fox sat", "The quikc brown dog sat on it")
    assert changed == 4  # quick→quikc, fox→dog, "on" and "it" added
    assert _marked(right, CAME)[-1] == " on it" and "fox" not in right
    assert "qui" in left and _marked(left, GONE) and _marked(right, CAME)  # the characters that differ
    same_l, same_r, none = word_diff("Same words here", "Same words here")
    assert none == 0 and same_l == same_r == "Same words here"


def test_side_by_side_escapes_and_counts():
    out = side_by_side("<b>a</b> b", "<b>a</b> c", "Text layer", "Decoded")
    assert "&lt;b&gt;" in out and "<b>a</b>" not in out.split("</p>", 1)[1]
    assert "1 word differs" in out


def test_the_block_bar_shows_the_text_layer_beside_the_decoded_text(qtbot):
    from app.core.document.regions import Region
    from app.core.review.document import Block
    from app.gui.block_bar import BlockBar

    bar = BlockBar()
    qtbot.addWidget(bar)
    region = Region(id="p1-r01", page=0, box=(0, 0, 1, 1), label="text", task="text", order=0, text="Helo wrld")
    bar.show_block(Block(region=region, markdown="Helo wrld", status="done", cer=0.2, reference="Hello world"))
    assert "confidence: none reported" in bar.title.text()  # an engine that reports no token probabilities
    bar.diff_button.setChecked(True)
    text = bar.diff.toPlainText()
    assert "Text layer" in text and "Decoded" in text and "2 words differ" in text
    assert bar.diff.maximumHeight() >= 300
