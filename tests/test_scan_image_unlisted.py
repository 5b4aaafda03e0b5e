"""A scan laid out from its given lines is listed without its page image (app.core.layout.given_ocr
`scan_image_unlisted`, issue #38): MuPDF wrote a deflated scan out as a PNG each time pymupdf4llm listed the
page's blocks, and the layout is the same without it. Real pymupdf4llm on a real scan of the development set
(corpora/realdocs/s14, a handwritten page stored as PNG), its lines found and read by the built-in engine's own
detector and recogniser."""
from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest

from app.core.layout import given_ocr
from app.core.layout.budget import parse_page

PAGE = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s14-handwritten-page.png"


def _scan_pdf(extra_image: bool = False) -> bytes:
    doc = pymupdf.open()
    with pymupdf.open(str(PAGE)) as img:
        w, h = img[0].rect.width, img[0].rect.height
    page = doc.new_page(width=w, height=h)
    page.insert_image(page.rect, filename=str(PAGE))
    if extra_image:  # a logo beside the scan: the page's images are not the scan alone
        page.insert_image(pymupdf.Rect(10, 10, 60, 60), filename=str(PAGE))
    return doc.tobytes()


def _given() -> list[list]:
    """The page's lines as the pipeline gives them: the detector's boxes in points, the recogniser's text."""
    from PIL import Image

    from app.core.engines.builtin import page_lines
    from app.core.rapid.recogniser import Recogniser

    class Engine:
        _det = None

    image = Image.open(PAGE).convert("RGB")
    with pymupdf.open(str(PAGE)) as img:
        s = img[0].rect.width / image.width
    dets = page_lines.detect(Engine(), image)
    kept = [(d, c) for d, c in zip(dets, page_lines.crops(image, dets)) if c is not None]
    readings = Recogniser(threads=1, stretch=True).read([crop for _, (_, crop) in kept])
    return [[*(v * s for v in d), r.text] for (d, _), r in zip(kept, readings) if r.text.strip()]


def _layout(pdf: bytes, given: list) -> dict:
    with pymupdf.open(stream=pdf, filetype="pdf") as doc:
        parsed = parse_page(doc, 0, True, given)
    parsed.pop("stage_ms", None)
    for block in parsed.get("fulltext") or []:
        block.pop("number", None)  # the image was block 0: the text blocks' numbers move down by one
    return json.loads(json.dumps(parsed))


@pytest.mark.slow
def test_a_scans_layout_is_the_same_without_its_image_listed(monkeypatch):
    from pymupdf4llm.helpers import document_layout

    given = _given()
    assert len(given) >= 8
    flags = document_layout.FLAGS
    seen = []
    plain = document_layout.parse_document
    monkeypatch.setattr(document_layout, "parse_document",
                        lambda *a, **k: seen.append(document_layout.FLAGS) or plain(*a, **k))
    unlisted = _layout(_scan_pdf(), given)
    assert seen and not seen[-1] & pymupdf.TEXT_PRESERVE_IMAGES  # the text page was made without the image
    assert document_layout.FLAGS == flags  # and the flags put back
    monkeypatch.setattr(given_ocr, "_one_page_image", lambda page: False)
    listed = _layout(_scan_pdf(), given)
    assert seen[-1] == flags
    assert unlisted == listed
    assert "doorman" in json.dumps(unlisted)


@pytest.mark.slow
def test_a_page_with_other_images_keeps_them_listed():
    with pymupdf.open(stream=_scan_pdf(extra_image=True), filetype="pdf") as doc:
        assert not given_ocr._one_page_image(doc[0])
    with pymupdf.open(stream=_scan_pdf(), filetype="pdf") as doc:
        assert given_ocr._one_page_image(doc[0])
        from pymupdf4llm.helpers import document_layout

        flags = document_layout.FLAGS
        with given_ocr.scan_image_unlisted(None, doc, 0):  # read from a text layer: nothing changes
            assert document_layout.FLAGS == flags
