"""The text-layer check for scripts the bundled recogniser cannot read: a born-digital page's layer line in Arabic,
Cyrillic, Devanagari… is read from the page image by Tesseract in that script's language, so a layer whose
glyphs map to the wrong letters (a font's broken ToUnicode table: Arabic words come out as "الوووو،ها") is caught
and the page OCRed instead, as the bundled recogniser's check does for Latin and Chinese
(app.core.pipeline.text_source).

    layer_language("مرحبا بالعالم")      # 'ara' (None: no installed model reads the text's script)
    checked_pairs([(crop, "ara", layer_text)])  # [(the layer's Arabic letters, Tesseract's)]

What must never live here: the decision to trust a layer (text_source), layout, the pipeline.
"""
from __future__ import annotations

from typing import Sequence

from app.core.scripts import catalogue
from app.core.scripts.tesseract import binding_missing, shared
from app.core.text.textcheck import dominant_script, script_of

UNSURE = 0.5  # a Tesseract reading less sure than this judges no layer
# one letter, two encodings (Arabic and Persian yeh, alef maksura; Arabic kaf and keheh), kashida: one form each,
# so that a Persian layer read by the Arabic model is not taken for a broken one
SAME_LETTER = str.maketrans({"\u064a": "\u06cc", "\u0649": "\u06cc", "\u0643": "\u06a9", "\u0640": None})


def layer_language(text: str) -> str | None:
    """The installed Tesseract language that reads `text`'s script (its dominant one): the language whose own
    letters it holds (Persian beside Arabic: the script's `marks`), else the script's first; None when the
    script is one the bundled recogniser reads, or no model of it is installed."""
    script = catalogue.SCRIPTS.get(dominant_script([text]))
    if script is None or binding_missing():
        return None
    have = shared().languages
    for lang, letters in script.marks:
        if lang in have and any(c in text for c in letters):
            return lang
    return next((lang for lang in script.languages if lang in have), None)


def checked_pairs(todo: Sequence[tuple[object, str, str]]) -> list[tuple[str, str]]:
    """Each (line image, language, its layer text) read by Tesseract as one line: (the layer's letters, the
    reading's letters), only the letters of the language's script (a Latin name or digits in a Korean line are
    the language model's weak spot, not the layer's). A reading under UNSURE says nothing about the layer: the
    layer's letters twice (it passes; the layer is judged on the other tests alone)."""
    tess = shared()
    out = []
    for image, lang, ref in todo:
        script = catalogue.script_of_language(lang)
        keep = {script.id} if script is not None else set()
        got = tess.read(image, lang)
        ref_letters = "".join(c for c in ref if script_of(c) in keep).translate(SAME_LETTER)
        read_letters = "".join(c for c in got.text if script_of(c) in keep).translate(SAME_LETTER)
        out.append((ref_letters, ref_letters if got.conf < UNSURE else read_letters))
    return out
