"""Documents: PDFs and images open lazily, render through a bounded cache, expose size, rotation, text layer."""
from __future__ import annotations

import pymupdf
import pytest
from PIL import Image

from app.core.document import DocumentError, open_document
from app.core.document.sample_documents import make_sample_pdf
from doc_inputs import text_image


@pytest.fixture(scope="module")
def sample_pdf(tmp_path_factory):
    return make_sample_pdf(tmp_path_factory.mktemp("doc") / "sample.pdf", pages=3)


def test_pdf_opens_without_rendering_and_renders_lazily(sample_pdf):
    with open_document(sample_pdf) as doc:
        assert doc.page_count == 3 and doc.kind == "pdf"
        assert len(doc.cache) == 0
        assert doc.page_size_pt(0) == (595.0, 842.0)
        img = doc.render(1, 72)
        assert img.size == (595, 842) and img.mode == "RGB"
        assert doc.render(1, 72) is img  # cached
        assert doc.render(1, 144).size == (1190, 1684)
        assert doc.cache.hits == 1 and len(doc.cache) == 2


def test_render_cache_is_bounded(sample_pdf):
    with open_document(sample_pdf, cache_pages=2) as doc:
        for i in range(3):
            doc.render(i, 36)
        assert len(doc.cache) == 2
        assert doc.cache.get((0, 36.0)) is None  # the least recently used page left


def test_text_layer_words_with_boxes_in_points(sample_pdf):
    with open_document(sample_pdf) as doc:
        words = doc.text_layer(0)
        assert [w.text for w in words[:4]] == ["Quarterly", "Report", "on", "Reading"]
        x0, y0, x1, y1 = words[0].box_pt
        assert 55 < x0 < 65 and y0 < y1 < 100


def test_rotated_page_size_and_text_boxes(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=500)
    page.insert_text((20, 40), "Rotated", fontsize=14)
    page.set_rotation(90)
    doc.save(str(tmp_path / "rot.pdf"))
    with open_document(tmp_path / "rot.pdf") as d:
        assert d.rotation(0) == 90
        assert d.page_size_pt(0) == (500.0, 300.0)
        assert d.render(0, 72).size == (500, 300)
        (w,) = d.text_layer(0)
        x0, y0, x1, y1 = w.box_pt
        assert 0 <= x0 < x1 <= 500 and 0 <= y0 < y1 <= 300 and x1 > 400  # near the right edge once rotated


@pytest.mark.parametrize("fmt,suffix", [("PNG", ".png"), ("JPEG", ".jpg"), ("WEBP", ".webp"), ("BMP", ".bmp")])
def test_single_images(tmp_path, fmt, suffix):
    path = tmp_path / f"scan{suffix}"
    text_image().save(path, fmt, **({"dpi": (200, 200)} if fmt == "PNG" else {}))
    with open_document(path) as doc:
        assert doc.kind == "image" and doc.page_count == 1
        dpi = doc.native_dpi(0)
        assert dpi == (pytest.approx(200, abs=1) if fmt == "PNG" else 96)
        assert doc.render(0, dpi).size == (360, 90)
        assert doc.page_size_pt(0) == pytest.approx((360 * 72 / dpi, 90 * 72 / dpi), abs=0.5)
        assert doc.text_layer(0) == []


def test_multipage_tiff(tmp_path):
    frames = [text_image(f"Page {i}") for i in range(3)]
    frames[1] = frames[1].resize((180, 45))
    path = tmp_path / "pages.tiff"
    frames[0].save(path, save_all=True, append_images=frames[1:])
    with open_document(path) as doc:
        assert doc.page_count == 3
        assert doc.render(1, doc.native_dpi(1)).size == (180, 45)
        assert doc.render(2, doc.native_dpi(2)).size == (360, 90)


def test_image_with_alpha_is_flattened_on_white(tmp_path):
    img = Image.new("RGBA", (20, 10), (0, 0, 0, 0))
    img.save(tmp_path / "a.png")
    with open_document(tmp_path / "a.png") as doc:
        assert doc.render(0, doc.native_dpi(0)).getpixel((5, 5)) == (255, 255, 255)


def test_missing_folder_empty_and_unknown_files(tmp_path):
    with pytest.raises(DocumentError, match="no such file"):
        open_document(tmp_path / "nope.pdf")
    with pytest.raises(DocumentError, match="is a folder"):
        open_document(tmp_path)
    (tmp_path / "empty.pdf").write_bytes(b"")
    with pytest.raises(DocumentError, match=r"empty.pdf: the file is empty"):
        open_document(tmp_path / "empty.pdf")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DocumentError, match=r"notes.txt: not a PDF or a supported image"):
        open_document(tmp_path / "notes.txt")
    (tmp_path / "cut.png").write_bytes(text_image().tobytes()[:10] + b"\x89PNG")
    with pytest.raises(DocumentError, match="cut.png"):
        open_document(tmp_path / "cut.png")


def test_page_index_out_of_range(sample_pdf):
    with open_document(sample_pdf) as doc:
        with pytest.raises(DocumentError, match="no page 4"):
            doc.render(3)


def test_document_benchmark_runs_and_memory_stays_flat(capsys):
    from app.bench.paging import main

    assert main(["--pages", "40", "--dpi", "72"]) == 0
    out = capsys.readouterr().out
    assert "RESULT document" in out
    growth = float(out.split("growth_mb=")[1].split()[0])
    assert growth < 30  # keeping 30 more pages at 72 DPI would add ~45 MB; the cache keeps 8
