"""Shared by the script tests: pages in more than one script, rendered as images (so they are OCRed, never
read from a text layer) with Pillow's complex-text layout (libraqm: Arabic joined and set right to left) in
the DejaVu fonts (fonts-dejavu-core: Latin, Cyrillic, Arabic, Hebrew) and PyMuPDF's own CJK font; and the edit
distance the tests bound the readings by. The fonts and texts here are not the ones `bench scripts` measures
with."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci_parts import MISSING_PART

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
DPI = 200


@dataclass(frozen=True)
class Text:
    text: str  # in logical order, as it is typed
    font: str  # a file under DEJAVU
    pt: float
    rtl: bool = False


LATIN_HEADING = Text("Annual Report of the Society", "DejaVuSans-Bold.ttf", 18)
RUSSIAN = (Text("Отчёт общества за прошедший год показывает рост", "DejaVuSerif.ttf", 12),
           Text("числа членов и новые издания в трёх городах.", "DejaVuSerif.ttf", 12),
           Text("Собрание утвердило план работы на будущий год.", "DejaVuSerif.ttf", 12))
# Arabic with Latin (European) digits inside the lines
ARABIC = (Text("تقرير السنة المالية 2024 يضم 15 فرعا جديدا", "DejaVuSans.ttf", 14, rtl=True),
          Text("وبلغ عدد الموظفين 340 موظفا في نهاية العام", "DejaVuSans.ttf", 14, rtl=True),
          Text("وارتفعت الإيرادات بنسبة 12 بالمئة عن العام الماضي", "DejaVuSans.ttf", 14, rtl=True))
HEBREW = (Text("הדוח השנתי של האגודה מראה גידול במספר החברים", "DejaVuSans.ttf", 14, rtl=True),
          Text("ופרסומים חדשים בשלוש ערים במהלך השנה האחרונה", "DejaVuSans.ttf", 14, rtl=True),
          Text("האספה אישרה את תוכנית העבודה לשנה הבאה", "DejaVuSans.ttf", 14, rtl=True))


def need_fonts() -> None:
    from PIL import features

    if not (DEJAVU / "DejaVuSans.ttf").is_file():
        pytest.skip(f"{MISSING_PART} the DejaVu fonts (apt install fonts-dejavu-core)")
    if not features.check("raqm"):
        # Pillow's wheel carries libraqm and loads FriBiDi from the system at run time
        pytest.skip(f"{MISSING_PART} Pillow's complex text layout to set Arabic (apt install libfribidi0)")


def render_page(texts, path: Path, *, width_in: float = 8.27, height_in: float = 5.0,
                top_in: float = 1.0) -> Path:
    """`texts` one line each, a blank line's gap after a heading, set from the left margin (from the right one
    for right-to-left lines), as a PNG at DPI."""
    from PIL import Image, ImageDraw, ImageFont

    need_fonts()
    w, h = int(width_in * DPI), int(height_in * DPI)
    image = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(image)
    y, margin = int(top_in * DPI), int(0.9 * DPI)
    for k, t in enumerate(texts):
        font = ImageFont.truetype(str(DEJAVU / t.font), round(t.pt * DPI / 72))
        kw = {"direction": "rtl", "language": "ar"} if t.rtl else {}
        x = w - margin - draw.textlength(t.text, font=font, **kw) if t.rtl else margin
        draw.text((x, y), t.text, font=font, fill="black", **kw)
        heading = k + 1 < len(texts) and texts[k + 1].pt < t.pt
        y += round(t.pt * DPI / 72 * (2.4 if heading else 1.7))
    image.save(path, dpi=(DPI, DPI))
    return path


def vertical_cjk_page(columns: list[str], path: Path, size_pt: float = 16) -> Path:
    """Traditional vertical writing: each string a column read top to bottom, the columns from the right, in
    PyMuPDF's own CJK font, rendered as a PNG at DPI."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=420, height=420)
    step = size_pt * 1.1
    x = 420 - 80
    for column in columns:
        for k, ch in enumerate(column):
            page.insert_text((x, 80 + (k + 1) * step), ch, fontname="china-s", fontsize=size_pt)
        x -= size_pt * 2.2
    page.get_pixmap(dpi=DPI).save(str(path))
    doc.close()
    return path


def folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def edit_ratio(got: str, want: str) -> float:
    """Levenshtein distance over the reference's length, after NFKC and whitespace folding."""
    a, b = folded(got), folded(want)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] / max(1, len(b))


def need_tesseract(*langs: str):
    """The process's Tesseract, or a skip naming the package a missing language comes in."""
    from app.core.scripts.catalogue import debian_package
    from app.core.scripts.tesseract import binding_missing, shared

    why = binding_missing()
    if why:
        pytest.skip(f"{MISSING_PART} {why}")
    have = shared().languages
    for lang in langs:
        if lang not in have:
            pytest.skip(f"{MISSING_PART} Tesseract's {lang} model (apt install {debian_package(lang)})")
    return shared()
