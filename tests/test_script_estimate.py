"""A page's script estimate belongs to that page of that document: a folder converted in one process (one
Pipeline, one loaded engine, input after input) starts each document afresh, as `--jobs` workers do."""
from __future__ import annotations

import pytest

from script_pages import LATIN_HEADING, RUSSIAN, Text, need_fonts, need_tesseract, render_page

from app.core.pipeline import Pipeline, PipelineOptions


def test_the_next_documents_first_page_does_not_start_with_the_last_documents_language(tmp_path):
    need_fonts()
    need_tesseract("rus")
    russian = render_page([LATIN_HEADING, *RUSSIAN], tmp_path / "ru.png")
    latin = render_page([LATIN_HEADING, Text("The society grew by a third over the year.", "DejaVuSerif.ttf", 12)],
                        tmp_path / "en.png")
    pipe = Pipeline(PipelineOptions(engine="classic", layout="page"))
    try:
        pipe.run(russian)
        assert pipe.engine.router.page_lang == "rus"  # the Russian page's lines were found in Russian
        pipe.run(latin)  # page 0 again, of another document
        assert pipe.engine.router.page_lang is None  # nothing on it called for another script
    finally:
        pipe.close()
