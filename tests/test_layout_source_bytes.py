"""An image page goes to the layout child as the file's own bytes where those are the page as read
(app.core.document.images `source_bytes`, app.core.layout.pymupdf_layout `layout_image`; issue #38): no PNG made
again in the parent, and a JPEG MuPDF lists as it is stored. Anything else (turned, EXIF-turned, transparent,
CMYK, several frames) goes as before."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from PIL import Image

from app.core.document import open_document
from app.core.layout.pymupdf_layout import layout_image

PAGES = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"


def _open(path: Path):
    return open_document(path)


@pytest.mark.parametrize("name", ["s12-newspaper.jpg", "s14-handwritten-page.png", "s06-eurotext.png"])
def test_a_plain_jpeg_or_png_page_goes_as_the_files_own_bytes(name):
    path = PAGES / name
    with _open(path) as doc:
        assert doc.source_bytes(0) == path.read_bytes()
        assert layout_image(doc, 0) == path.read_bytes()


def test_a_large_png_still_goes_as_jpeg():
    path = PAGES / "s05-unlv-8087.png"  # 8.4 MP bilevel: as PNG, MuPDF inflated it again at every listing
    with _open(path) as doc:
        assert doc.source_bytes(0) == path.read_bytes()
        sent = layout_image(doc, 0)
    assert sent[:2] == b"\xff\xd8" and Image.open(io.BytesIO(sent)).size == (2560, 3300)


def test_pages_whose_file_is_not_the_page_as_read_are_encoded_afresh(tmp_path):
    src = PAGES / "s12-newspaper.jpg"
    with _open(src) as doc:  # turned: the bytes are of the turned page
        doc.set_orientation(0, 90, 0.0)
        assert doc.source_bytes(0) is None
        sent = layout_image(doc, 0)
        assert Image.open(io.BytesIO(sent)).size == (308, 1310)

    exif = Image.open(src)
    data = exif.getexif()
    data[0x0112] = 6  # EXIF: turn 90° clockwise to view
    turned = tmp_path / "exif.jpg"
    exif.save(turned, exif=data)
    with _open(turned) as doc:
        assert doc.source_bytes(0) is None

    rgba = tmp_path / "alpha.png"
    Image.open(PAGES / "s13-handwritten-note.png").save(rgba)  # RGBA: the page is it laid on white
    with _open(rgba) as doc:
        assert doc.source_bytes(0) is None

    cmyk = tmp_path / "cmyk.jpg"
    Image.open(src).convert("CMYK").save(cmyk)
    with _open(cmyk) as doc:
        assert doc.source_bytes(0) is None

    frames = tmp_path / "two.tif"
    one = Image.open(src)
    one.save(frames, save_all=True, append_images=[one.copy()])
    with _open(frames) as doc:
        assert doc.page_count == 2 and doc.source_bytes(0) is None


def test_a_file_gone_after_opening_falls_back(tmp_path):
    path = tmp_path / "page.jpg"
    shutil.copy(PAGES / "s12-newspaper.jpg", path)
    with _open(path) as doc:
        doc.render(0, doc.native_dpi(0))  # the frame is decoded and kept
        path.unlink()
        assert doc.source_bytes(0) is None
        assert layout_image(doc, 0)[:8] == b"\x89PNG\r\n\x1a\n"
