"""Handwriting is found and marked for review (app.core.layout.handwriting, app.core.pipeline.text_source): the real
handwritten pages of corpora/realdocs against its printed Latin scans."""
from pathlib import Path

import pytest
from PIL import Image

from app.core.layout.handwriting import looks_handwritten

PAGES = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"
HANDWRITTEN = ["s13-handwritten-note.png", "s14-handwritten-page.png"]
PRINTED = ["s04-unlv-8071.png", "s06-eurotext.png", "s07-phototest.png", "s08-kant-17.jpg", "s11-table-image.jpg",
           "s12-newspaper.jpg", "p01-pubtabnet-pmc4840965_004_00.png"]


@pytest.mark.parametrize("name", HANDWRITTEN)
def test_a_handwritten_page_looks_handwritten(name):
    handwritten, features = looks_handwritten(Image.open(PAGES / name))
    assert handwritten, features


@pytest.mark.parametrize("name", PRINTED)
def test_a_printed_scan_does_not(name):
    handwritten, features = looks_handwritten(Image.open(PAGES / name))
    assert not handwritten, features


def test_a_blank_or_nearly_blank_crop_is_not_judged():
    assert looks_handwritten(Image.new("L", (400, 200), 255)) == (False, None)


def _blocks(path):
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.quality import review_reasons

    pipe = Pipeline(PipelineOptions(engine="classic"))
    try:
        out = pipe.run(path)
    finally:
        pipe.close()
    return [(r, review_reasons(r)) for p in out.pages for r in p.regions if r.task == "text"]


@pytest.mark.slow
def test_a_handwritten_note_is_flagged_for_review_and_a_printed_page_is_not():
    note = _blocks(PAGES / "s13-handwritten-note.png")
    assert note and all("handwriting" in why for _, why in note)
    assert all(r.extra["handwriting"]["fill"] < 0.4 for r, _ in note)
    printed = _blocks(PAGES / "s07-phototest.png")
    assert printed and not any("handwriting" in why for _, why in printed)


@pytest.mark.slow
def test_the_handwriting_test_looks_at_the_pages_ocr_rendering_not_one_of_its_own(monkeypatch):
    """A 300-DPI scan drawn whole once more at the test's DPI (and straightened again) cost more than a second a
    page: the test's crops are cut from the rendering the page was read from."""
    from app.core.document.base import Document

    drawn = []
    render = Document.render

    def recording(self, index, dpi=150.0):
        drawn.append(round(float(dpi), 1))
        return render(self, index, dpi)

    monkeypatch.setattr(Document, "render", recording)
    note = _blocks(PAGES / "s13-handwritten-note.png")
    assert note and all("handwriting" in why for _, why in note)
    assert len(set(drawn)) == 1, drawn
