"""Synthetic born-digital documents: the bundled sample, test inputs and benchmark inputs. PyMuPDF only."""
from __future__ import annotations

from pathlib import Path

PARAGRAPHS = [
    "Scriptorium reads documents with vision-language OCR models and shows how each page is read.",
    "Every region of the page is decoded on its own: text, tables and formulas each get their own prompt.",
    "Self-speculative decoding drafts a block of tokens at once and verifies them with the same model.",
]
TABLE = [["Quarter", "Revenue", "Growth"], ["Q1", "1,204", "3.1%"], ["Q2", "1,377", "14.4%"], ["Q3", "1,512", "9.8%"]]


def _draw_table(page, x: float, y: float, rows: list[list[str]], col_w: float = 110, row_h: float = 22) -> float:
    import pymupdf

    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            rect = pymupdf.Rect(x + c * col_w, y + r * row_h, x + (c + 1) * col_w, y + (r + 1) * row_h)
            page.draw_rect(rect, color=(0, 0, 0), width=0.8)
            page.insert_textbox(rect + (4, 5, -4, 0), cell, fontsize=10, fontname="helv" if r else "hebo")
    return y + len(rows) * row_h


def _draw_picture(page, rect) -> None:
    import pymupdf

    page.draw_rect(rect, color=(0.2, 0.3, 0.6), fill=(0.85, 0.9, 1.0), width=1)
    for i in range(6):
        h = 10 + 12 * ((i * 7) % 5)
        bar = pymupdf.Rect(rect.x0 + 15 + i * 28, rect.y1 - 10 - h, rect.x0 + 35 + i * 28, rect.y1 - 10)
        page.draw_rect(bar, color=None, fill=(0.2, 0.4, 0.8))


DEGRADED_LINES = [
    "Carbon copy, filed 14 March 1987, ref. KX-2231/b.",
    "Received from Mr. J. Halloran the sum of 1,250.00",
    "for repairs to the mill wheel and sluice gate;",
    "balance of 317.45 due on or before 30 April 1987.",
    "Witnessed: R. Illingworth, clerk (signature illegible).",
    "Copy to the estate office, Lower Wharf Road, Bristol.",
]


def degraded_text_image(lines: list[str] = DEGRADED_LINES, *, seed: int = 0, dpi: int = 200):
    """A faded carbon copy as a scan would give it: typewriter text at `dpi`, resampled from under half the
    resolution, blurred, low in contrast, noisy, slightly rotated and JPEG-compressed; each line a little worse than
    the one above. The built-in model reads it, but its drafts are rejected far more often than on clean print
    (the reject inspector has something to show). Returns (PIL image, JPEG bytes)."""
    import io

    import numpy as np
    import pymupdf
    from PIL import Image, ImageFilter

    doc = pymupdf.open()
    page = doc.new_page(width=430, height=40 + 32 * len(lines))
    for i, text in enumerate(lines):
        page.insert_text((20, 30 + 32 * i), text, fontsize=12, fontname="cour")
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    clean = Image.frombytes("L", (pix.width, pix.height), pix.samples)
    doc.close()
    rng = np.random.default_rng(seed)
    band = pix.height / (len(lines) + 40 / 32)
    out = np.ones((pix.height, pix.width), dtype=np.float32)
    for i in range(len(lines) + 1):  # line i is degraded a bit more than line i - 1
        worse = min(i, len(lines) - 1) / max(1, len(lines) - 1)
        scale, blur = 0.42 - 0.04 * worse, 1.2 + 0.3 * worse
        img = clean.resize((int(clean.width * scale), int(clean.height * scale)), Image.BILINEAR)
        img = img.resize(clean.size, Image.BILINEAR).filter(ImageFilter.GaussianBlur(blur))
        a = np.asarray(img, dtype=np.float32) / 255
        a = 1 - (1 - a) * (0.56 - 0.06 * worse)
        top = int(i * band)
        bottom = pix.height if i == len(lines) else int((i + 1) * band + 1)
        out[top:bottom] = a[top:bottom]
    out += rng.normal(0, 0.1, out.shape)
    img = Image.fromarray(np.clip(out * 255, 0, 255).astype(np.uint8))
    img = img.rotate(0.6, fillcolor=255, resample=Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=35, dpi=(dpi, dpi))
    data = buf.getvalue()
    return Image.open(io.BytesIO(data)).convert("RGB"), data


def write_degraded_sample(path: str | Path) -> Path:
    """The bundled scan of a faded carbon copy (a JPEG at 200 DPI), read after the sample by `--sample`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(degraded_text_image()[1])
    return path


def make_sample_pdf(path: str | Path, pages: int = 2) -> Path:
    """A small multi-page report: a title, headings, paragraphs, a ruled table, a formula line and a picture."""
    import pymupdf

    path = Path(path)
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page(width=595, height=842)  # A4 in points
        y = 60.0
        if n == 0:
            page.insert_text((60, y + 20), "Quarterly Report on Reading Machines", fontsize=20, fontname="hebo")
            y += 50
        page.insert_text((60, y + 14), f"{n + 1}. Results", fontsize=14, fontname="hebo")
        y += 30
        for para in PARAGRAPHS:
            rect = pymupdf.Rect(60, y, 535, y + 40)
            page.insert_textbox(rect, para, fontsize=11, fontname="helv")
            y += 44
        y = _draw_table(page, 60, y + 10, TABLE) + 20
        page.insert_text((200, y + 14), "E = m c^2 + sum_i x_i", fontsize=13, fontname="tiro")
        y += 40
        _draw_picture(page, pymupdf.Rect(60, y, 260, y + 110))
        page.insert_text((60, y + 128), f"Figure {n + 1}: a chart.", fontsize=9, fontname="helv")
        page.insert_text((290, 810), str(n + 1), fontsize=9, fontname="helv")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path), garbage=3, deflate=True)
    doc.close()
    return path


if __name__ == "__main__":  # regenerate the bundled sample: python -m app.core.document.sample_documents
    from app.core.base.paths import degraded_sample, sample_document

    print(make_sample_pdf(sample_document()))
    print(write_degraded_sample(degraded_sample()))


def make_small_report(path: str | Path) -> Path:
    """A two-page born-digital PDF for end-to-end tests: page 1 has a heading, a paragraph, a table drawn with
    lines and an embedded raster image; page 2 a heading and a paragraph. Small pages keep OCR cheap."""
    import io

    import pymupdf
    from PIL import Image, ImageDraw

    path = Path(path)
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=500)
    page.insert_text((30, 44), "Field Notes", fontsize=18, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(30, 60, 390, 100), PARAGRAPHS[0], fontsize=10, fontname="helv")
    _draw_table(page, 30, 110, TABLE)
    img = Image.new("RGB", (160, 90), (225, 235, 255))
    draw = ImageDraw.Draw(img)
    for i in range(5):
        draw.rectangle((12 + i * 28, 80 - 12 * (i + 1), 30 + i * 28, 80), fill=(40, 80, 200))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    page.insert_image(pymupdf.Rect(30, 230, 190, 320), stream=buf.getvalue())
    page = doc.new_page(width=595, height=500)
    page.insert_text((30, 44), "2. Method", fontsize=14, fontname="hebo")
    page.insert_textbox(pymupdf.Rect(30, 60, 390, 100), PARAGRAPHS[1], fontsize=10, fontname="helv")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path), garbage=3, deflate=True)
    doc.close()
    return path


def make_long_pdf(path: str | Path, pages: int = 500, distinct: int = 10) -> Path:
    """A long report for benchmarks: `distinct` generated pages (make_sample_pdf) repeated up to `pages` pages.
    Every page is a real, separately stored page object (copied with insert_pdf), so opening and rendering costs
    what a real long PDF costs; generating it takes a second instead of a minute."""
    import tempfile

    import pymupdf

    path = Path(path)
    with tempfile.TemporaryDirectory() as tmp:
        seed = make_sample_pdf(Path(tmp) / "seed.pdf", pages=min(distinct, pages))
        src = pymupdf.open(str(seed))
        doc = pymupdf.open()
        while doc.page_count < pages:
            doc.insert_pdf(src, to_page=min(src.page_count, pages - doc.page_count) - 1)
        src.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path), garbage=1, deflate=True)
    doc.close()
    return path
