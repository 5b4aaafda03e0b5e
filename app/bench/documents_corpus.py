"""The generated corpus of `python -m app bench documents`: small PDFs with the text a reader should get out of each
(`<stem>.txt` beside `<stem>.pdf`), covering what real documents do to a converter:

- `two_columns`: a born-digital page in two columns (the text reads down the left column, then the right);
- `span_table`: a ruled table with a header cell over two columns and a cell over two rows, "$" amounts;
- `scan`: pages rasterised at 150 DPI with a small skew and noise, no text layer;
- `hidden_layer`: the scan with an invisible OCR layer holding wrong text (an earlier tool's mistakes);
- `scrambled_layer`: the page shows one text in real glyphs while its layer holds another (a broken ToUnicode map).

Generated with PyMuPDF (base-14 fonts; DejaVu Sans for the scrambled map) and Pillow only; about 170 KB in all,
so CI's smoke run can afford it.

What must never live here: running the converters (app.bench.documents).
"""
from __future__ import annotations

import random
from pathlib import Path

LEFT = [
    "Reading machines turn printed pages into text that a person can search, edit and quote.",
    "The first column of this page holds three short paragraphs about how documents are read.",
    "A converter that reads across both columns mixes their sentences into nonsense.",
]
RIGHT = [
    "The second column continues the story once the first column has ended at its foot.",
    "Layout analysis finds the columns and orders the blocks so that each column reads down.",
    "Only then is each block read, by the text layer or by optical character recognition.",
]
SPAN_TABLE = [  # (text, rowspan, colspan); None marks a cell covered by a span
    [("Item", 2, 1), ("Price", 1, 2), None],
    [None, ("Net", 1, 1), ("Gross", 1, 1)],
    [("Paper", 1, 1), ("$ 12.50", 1, 1), ("$ 14.90", 1, 1)],
    [("Ink", 1, 1), ("$ 3.10", 1, 1), ("$ 3.70", 1, 1)],
]
SCAN_TEXT = [
    "Scanned pages have no text layer of their own.",
    "The reader must recognise every line from the image.",
    "Noise and a slight skew make that a little harder.",
]
SHOWN = "The page shows these words clearly on paper."
SHOWN_MORE = [
    "Its text layer, though, maps every glyph to the letter after it.",
    "Copying from it gives nonsense; reading the image gives the truth.",
]


def _textbox(page, rect, text: str, size: float = 11) -> None:
    page.insert_textbox(rect, text, fontsize=size, fontname="helv")


def two_columns(path: Path) -> str:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 60), "Two Columns", fontsize=18, fontname="hebo")
    for x, paras in ((50, LEFT), (310, RIGHT)):
        y = 90
        for p in paras:
            _textbox(page, pymupdf.Rect(x, y, x + 235, y + 60), p)
            y += 70
    doc.save(str(path))
    doc.close()
    return "\n".join(["Two Columns", *LEFT, *RIGHT])


def span_table(path: Path) -> str:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=400)
    page.insert_text((50, 50), "Prices", fontsize=16, fontname="hebo")
    x0, y0, cw, rh = 50, 70, 120, 24
    for r, row in enumerate(SPAN_TABLE):
        for c, cell in enumerate(row):
            if cell is None:
                continue
            text, rs, cs = cell
            rect = pymupdf.Rect(x0 + c * cw, y0 + r * rh, x0 + (c + cs) * cw, y0 + (r + rs) * rh)
            page.draw_rect(rect, color=(0, 0, 0), width=0.8)
            page.insert_text((rect.x0 + 5, rect.y0 + 16), text, fontsize=10, fontname="helv")
    doc.save(str(path))
    doc.close()
    cells = [cell[0] for row in SPAN_TABLE for cell in row if cell is not None]
    return "\n".join(["Prices", *cells])


def _text_page_image(lines: list[str], dpi: int = 150, skew: float = 0.0, noise: float = 0.0, seed: int = 0):
    """A page of `lines` rendered by PyMuPDF at `dpi`, rotated by `skew` degrees, with salt-and-pepper `noise`."""
    import pymupdf
    from PIL import Image

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    for n, line in enumerate(lines):
        page.insert_text((60, 80 + 40 * n), line, fontsize=13, fontname="helv")
    pix = page.get_pixmap(dpi=dpi)
    img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
    doc.close()
    if skew:
        img = img.rotate(skew, resample=Image.BICUBIC, expand=False, fillcolor=(255, 255, 255))
    if noise:
        rng = random.Random(seed)
        px = img.load()
        for _ in range(int(noise * img.width * img.height)):
            x, y = rng.randrange(img.width), rng.randrange(img.height)
            v = rng.choice((0, 255))
            px[x, y] = (v, v, v)
    return img


def _image_pdf(images, width=595, height=420):
    import io

    import pymupdf

    doc = pymupdf.open()
    pages = []
    for img in images:
        page = doc.new_page(width=width, height=height)
        buf = io.BytesIO()
        img.convert("L").save(buf, format="JPEG", quality=92)  # as scanners store pages
        page.insert_image(page.rect, stream=buf.getvalue())
        pages.append(page)
    return doc, pages


def scan(path: Path) -> str:
    doc, _ = _image_pdf([_text_page_image(SCAN_TEXT, skew=0.6, noise=0.002, seed=1)])
    doc.save(str(path))
    doc.close()
    return "\n".join(SCAN_TEXT)


def hidden_layer(path: Path) -> str:
    """The scan with an invisible layer of wrong text (render mode 3), as an earlier OCR tool left it."""
    doc, pages = _image_pdf([_text_page_image(SCAN_TEXT, skew=0.6, noise=0.002, seed=2)])
    for n, line in enumerate(SCAN_TEXT):
        wrong = line.replace("e", "c").replace("a", "o")
        pages[0].insert_text((60, 80 + 40 * n), wrong, fontsize=13, fontname="helv", render_mode=3)
    doc.save(str(path))
    doc.close()
    return "\n".join(SCAN_TEXT)


DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
_ASCII_RANGE = b"<0003> <0061> <0020>"  # DejaVu's glyphs 3..97 are U+0020..U+007E in PyMuPDF's ToUnicode map


def shift_font_map(doc):
    """`doc` (closed) as a new document, its fonts subset, whose embedded DejaVu fonts map each glyph to the
    character after its own (spaces kept): the glyphs drawn stay, the text layer is scrambled."""
    import pymupdf

    doc.subset_fonts()
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    doc = pymupdf.open("pdf", data)
    for xref in range(1, doc.xref_length()):
        stream = doc.xref_stream(xref) if doc.xref_is_stream(xref) else None
        if stream and _ASCII_RANGE in stream:
            doc.update_stream(xref, stream.replace(_ASCII_RANGE, b"<0003> <0003> <0020>\n<0004> <0061> <0022>"))
    return doc


def scrambled_layer(path: Path) -> str:
    """The page shows SHOWN in real glyphs while its text layer says otherwise: the embedded font's ToUnicode map
    is shifted by one letter ("The" → "Uif"), as a font with a broken map gives. Needs DejaVu Sans (a system font);
    without it, a painted layer of shifted text lies under an image of SHOWN."""
    import io

    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    if DEJAVU.exists():
        page.insert_font(fontname="dv", fontfile=str(DEJAVU))
        page.insert_text((60, 80), "A Broken Font Map", fontsize=20, fontname="dv")
        page.insert_text((60, 130), SHOWN, fontsize=12, fontname="dv")
        for n, line in enumerate(SHOWN_MORE):
            page.insert_text((60, 180 + 20 * n), line, fontsize=12, fontname="dv")
        doc = shift_font_map(doc)
    else:  # pragma: no cover - a machine without DejaVu
        scrambled = "".join(chr(ord(c) + 1) if c.isalpha() else c for c in SHOWN)
        page.insert_text((60, 80), scrambled, fontsize=13, fontname="helv")
        buf = io.BytesIO()
        _text_page_image([SHOWN]).save(buf, format="PNG")
        page.insert_image(page.rect, stream=buf.getvalue())
    doc.save(str(path))
    doc.close()
    return "\n".join(["A Broken Font Map", SHOWN, *SHOWN_MORE]) if DEJAVU.exists() else SHOWN


CORPUS = {"two_columns": two_columns, "span_table": span_table, "scan": scan, "hidden_layer": hidden_layer,
          "scrambled_layer": scrambled_layer}


def make_corpus(folder: Path) -> list[Path]:
    """Write every document and its expected text into `folder`; returns the PDFs."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for stem, make in CORPUS.items():
        pdf = folder / f"{stem}.pdf"
        expected = make(pdf)
        (folder / f"{stem}.txt").write_text(expected + "\n", encoding="utf-8")
        out.append(pdf)
    return out
