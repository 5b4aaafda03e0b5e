"""One layout per page, whatever the engine: a scanned two-column page is laid out into the same regions when the
classic engine reads it as when the built-in engine does (the layout never depends on the engine, and a scan's
layout — which reads the page with its OCR as it lays it out — gets a budget that fits that reading)."""
from __future__ import annotations

import pytest


def _two_column_scan(path):
    import pymupdf

    words = ("the quick brown fox jumps over lazy dogs while seven wizards box and judge the vexing quiz "
             "of a jolly sphinx").split()
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=300)
    page.insert_textbox(pymupdf.Rect(30, 20, 390, 44), "Two Columns Of Scanned Text", fontsize=15, fontname="tibo",
                        align=1)
    for k, x in enumerate((30, 220)):
        body = " ".join(words[(k * 7 + i) % len(words)] for i in range(45)).capitalize() + "."
        page.insert_textbox(pymupdf.Rect(x, 60, x + 170, 280), body, fontsize=10, fontname="tiro")
    png = page.get_pixmap(dpi=150).tobytes("png")
    out = pymupdf.open()
    out.new_page(width=420, height=300).insert_image(pymupdf.Rect(0, 0, 420, 300), stream=png)
    out.save(path)
    return path


@pytest.mark.slow
def test_a_scan_gets_the_same_regions_under_classic_and_builtin(tmp_path):
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.options import scanned
    from app.core.document import open_document

    pdf = _two_column_scan(tmp_path / "scan.pdf")
    assert scanned(open_document(pdf), 0)
    layouts = {}
    for engine in ("classic", "builtin"):
        pipe = Pipeline(PipelineOptions(engine=engine, device="cpu"))
        try:
            out = pipe.run(pdf)
        finally:
            pipe.close()
        page = out.pages[0]
        layouts[engine] = (page.layout, [(r.label, tuple(round(v) for v in r.box)) for r in page.regions])
    # the built-in engine hands the layout the lines of its own one page pass (classic: the layout's OCR finds
    # them): the same regions, their boxes within a few pixels of each other
    (lay_c, regs_c), (lay_b, regs_b) = layouts["classic"], layouts["builtin"]
    assert lay_c == lay_b and [label for label, _ in regs_c] == [label for label, _ in regs_b], layouts
    assert all(abs(a - b) <= 4 for (_, bc), (_, bb) in zip(regs_c, regs_b) for a, b in zip(bc, bb)), layouts
    layout, regions = layouts["classic"]
    assert layout != "page", layouts  # laid out, not read as one whole-page region
    columns = [box for label, box in regions if label == "text" and box[3] - box[1] > 100]
    assert len(columns) >= 2 and max(b[0] for b in columns) > min(b[2] for b in columns), layouts  # side by side


def test_a_large_scan_goes_to_the_layout_as_jpeg_and_a_small_one_as_its_own_png():
    """A 300-DPI scan, straightened, made a 25 MB one-page PDF (MuPDF stores a PNG's pixels inflated) to send to
    the layout child and decode four times over there; its JPEG is stored as it is, a small share of that, and a
    small page keeps its lossless image."""
    from pathlib import Path

    import pymupdf

    from app.core.document import open_document
    from app.core.layout.pymupdf_layout import layout_image

    def one_page_pdf(image: bytes) -> int:
        with pymupdf.open() as pdf:
            page = pdf.new_page(width=600, height=800)
            page.insert_image(page.rect, stream=image)
            return len(pdf.tobytes(garbage=0))

    pages = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"
    with open_document(pages / "s04-unlv-8071.png") as large:
        large.set_orientation(0, 0, 0.3)
        sent = layout_image(large, 0)
        assert sent[:3] == b"\xff\xd8\xff"  # JPEG
        assert one_page_pdf(sent) < one_page_pdf(large.image_bytes(0)) / 4
    with open_document(pages / "s07-phototest.png") as small:
        # the file's own PNG (lossless, the page as read: app.core.document.images.source_bytes)
        assert layout_image(small, 0) == (pages / "s07-phototest.png").read_bytes()
        small.set_orientation(0, 0, 0.3)  # straightened: the page as read is no longer the file
        assert layout_image(small, 0) == small.image_bytes(0)
