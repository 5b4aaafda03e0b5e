"""The text-layer check for scripts the bundled recogniser cannot read: a born-digital page's layer line in Arabic,
Cyrillic, Devanagari… is read from the page image by Tesseract in that script's language, so a layer whose
glyphs map to the wrong letters (a font's broken ToUnicode table: Arabic words come out as "الوووو،ها") is caught
and the page OCRed instead, as the bundled recogniser's check does for Latin and Chinese
(app.core.pipeline.text_source).

    layer_language("مرحبا بالعالم")      # 'ara' (None: no installed model reads the text's script)
    read_layer_lines([(crop, "ara")])    # Tesseract's reading of each line image

What must never live here: the decision to trust a layer (text_source), layout, the pipeline.
"""
from __future__ import annotations

from typing import Sequence

from app.core.scripts import catalogue
from app.core.scripts.tesseract import binding_missing, shared
from app.core.text.textcheck import dominant_script


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


def read_layer_lines(todo: Sequence[tuple[object, str]]) -> list[str]:
    """Each (line image, language) read by Tesseract as one line."""
    tess = shared()
    return [tess.read(image, lang).text for image, lang in todo]
