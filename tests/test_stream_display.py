"""Unlimited-OCR's stream as a person sees it: grounding headers, page markers, special strings and control
characters hidden (also while still incomplete), a paragraph break where a header stood; any prefix of the raw text
shows as a prefix of the whole display, so the R-SWA window's offsets map onto the text shown."""
from __future__ import annotations

import random

from app.core.engines.unlimited_display import stream_display

RAW = ("<PAGE><|det|>text [1, 1, 9, 9]<|/det|>Hello world<|det|>title [1,2,3,4]<|/det|># Head\x01ing<PAGE>"
       "<|ref|>text<|/ref|><|det|>[[1,2,3,4]]<|/det|>End<｜end▁of▁sentence｜>")


def test_tags_and_control_characters_are_hidden():
    assert stream_display(RAW) == "Hello world\n\n# Heading\n\nEnd"
    assert stream_display("Hello<|de") == "Hello" and stream_display("<|det|>text [1, 2") == ""


def test_every_prefix_shows_as_a_prefix_of_the_whole():
    rng = random.Random(5)
    pieces = ["<PAGE>", "<|det|>text [1, 2, 3, 4]<|/det|>", "<|ref|>title<|/ref|><|det|>[[5,6,7,8]]<|/det|>",
              "word ", "\n", "x\x07y", "<|grounding|>", "표 "]
    for _ in range(30):
        raw = "".join(rng.choice(pieces) for _ in range(12))
        whole = stream_display(raw)
        assert "<|" not in whole and "<PAGE>" not in whole
        for i in range(len(raw) + 1):
            assert whole.startswith(stream_display(raw[:i])), (raw, i)
