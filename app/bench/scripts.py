"""`python -m app bench scripts [--dpi 200] [--engines classic,builtin] [--json FILE]`: character error rate per
script and per recogniser on clean renders of text nobody tuned on.

Each script's text is Article 1 of the Universal Declaration of Human Rights in one of its languages (Russian,
Ukrainian, Greek, Hindi, Thai, Korean, Arabic, Persian, Hebrew, and English as the Latin control), set in a font the
tests and the router's thresholds never saw, wrapped to lines of about 48 characters and drawn as a page at 11 pt,
rendered at `--dpi`. Read by:

- `bundled`: the PP-OCRv6 recogniser alone on each line's crop (what reads a line before any routing);
- `classic`, `builtin`: the engines on the whole page (detection, the bundled recogniser, the script router
  for the lines it cannot read; the built-in engine's decoder on the lines it writes) — what a person gets;

CER = Levenshtein distance / reference length, after NFKC and whitespace folding (the line breaks of the page do not
count). Also printed: the reader(s) the engines' stats name, and their milliseconds per line. A script whose font
is not installed is left out with the package that brings it.

What must never live here: thresholds the router uses (it is measured here, never tuned here).
"""
from __future__ import annotations

import argparse
import json
import textwrap
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

FONTS = Path("/usr/share/fonts")


@dataclass(frozen=True)
class Sample:
    script: str
    language: str
    font: str  # under /usr/share/fonts
    package: str  # the Debian package that installs the font
    text: str


SAMPLES = (
    Sample("latin", "English", "truetype/noto/NotoSerif-Regular.ttf", "fonts-noto-core",
           "All human beings are born free and equal in dignity and rights. They are endowed with reason and "
           "conscience and should act towards one another in a spirit of brotherhood."),
    Sample("cyrillic", "Russian", "truetype/noto/NotoSans-Regular.ttf", "fonts-noto-core",
           "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и "
           "совестью и должны поступать в отношении друг друга в духе братства."),
    Sample("cyrillic", "Ukrainian", "truetype/dejavu/DejaVuSans.ttf", "fonts-dejavu-core",
           "Всі люди народжуються вільними і рівними у своїй гідності та правах. Вони наділені розумом і "
           "совістю і повинні діяти у відношенні один до одного в дусі братерства."),
    Sample("greek", "Greek", "truetype/noto/NotoSerif-Regular.ttf", "fonts-noto-core",
           "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι "
           "προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα "
           "αδελφοσύνης."),
    Sample("devanagari", "Hindi", "truetype/noto/NotoSansDevanagari-Regular.ttf", "fonts-noto-core",
           "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है। उन्हें बुद्धि "
           "और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए।"),
    Sample("thai", "Thai", "truetype/tlwg/Loma.ttf", "fonts-tlwg-loma-ttf",
           "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม "
           "และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ"),
    Sample("hangul", "Korean", "truetype/nanum/NanumMyeongjo.ttf", "fonts-nanum",
           "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 "
           "양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다."),
    Sample("arabic", "Arabic", "truetype/noto/NotoNaskhArabic-Regular.ttf", "fonts-noto-core",
           "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن يعامل "
           "بعضهم بعضًا بروح الإخاء."),
    Sample("arabic", "Persian", "opentype/fonts-hosny-amiri/Amiri-Regular.ttf", "fonts-hosny-amiri",
           "تمام افراد بشر آزاد به دنیا می‌آیند و از لحاظ حیثیت و حقوق با هم برابرند. همه دارای عقل و وجدان "
           "هستند و باید نسبت به یکدیگر با روح برادری رفتار کنند."),
    Sample("hebrew", "Hebrew", "truetype/noto/NotoSerifHebrew-Regular.ttf", "fonts-noto-core",
           "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה "
           "עליהם לנהוג איש ברעהו ברוח של אחווה."),
)
WIDTH = 48  # characters per line
POINT = 11.0


def render(sample: Sample, dpi: float):
    """(page image, line boxes in its pixels) of `sample` set at POINT pt and rendered at `dpi`."""
    from PIL import Image, ImageDraw, ImageFont

    from app.core.text.textcheck import right_to_left

    px = round(POINT * dpi / 72)
    font = ImageFont.truetype(str(FONTS / sample.font), px)
    lines = textwrap.wrap(sample.text, WIDTH)
    rtl = right_to_left(sample.text)
    margin, step = px * 2, round(px * 1.8)
    width = max(int(font.getlength(t)) for t in lines) + 2 * margin
    page = Image.new("RGB", (width, 2 * margin + step * len(lines)), "white")
    draw = ImageDraw.Draw(page)
    boxes = []
    for k, text in enumerate(lines):
        x = width - margin - int(font.getlength(text)) if rtl else margin
        y = margin + k * step
        draw.text((x, y), text, font=font, fill="black", direction="rtl" if rtl else None)
        boxes.append(draw.textbbox((x, y), text, font=font, direction="rtl" if rtl else None))
    return page, boxes


def fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def cer(reference: str, read: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref = fold(reference)
    return Levenshtein.distance(ref, fold(read)) / max(1, len(ref))


def bundled(page, boxes) -> str:
    import numpy as np

    from app.core.rapid.recogniser import Recogniser

    pad = 6
    crops = [np.ascontiguousarray(np.asarray(page.crop((b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad)))[..., ::-1])
             for b in boxes]
    return " ".join(r.text for r in Recogniser(threads=1, stretch=True).read(crops))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app bench scripts", description=__doc__.split("\n")[0])
    p.add_argument("--dpi", type=float, default=200.0, help="render resolution (default 200)")
    p.add_argument("--engines", default="classic,builtin", help="engines to read the pages (default both)")
    p.add_argument("--json", help="write every row here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from app.core.engines import open_engine

    args = parse_args(argv)
    engines = {name: open_engine(name, device="cpu") for name in args.engines.split(",") if name}
    rows = []
    print(f"CER per script, clean renders at {args.dpi:.0f} DPI ({POINT:.0f} pt, ~{WIDTH} characters a line)")
    print(f"{'script':11s} {'language':10s} {'lines':>5s} {'bundled':>8s} "
          + " ".join(f"{name:>8s}" for name in engines) + "  reader (ms/line)")
    for index, sample in enumerate(SAMPLES):
        if not (FONTS / sample.font).is_file():
            print(f"{sample.script:11s} {sample.language:10s} left out: no font (apt-get install {sample.package})")
            continue
        page, boxes = render(sample, args.dpi)
        row = {"script": sample.script, "language": sample.language, "lines": len(boxes),
               "bundled": cer(sample.text, bundled(page, boxes))}
        notes = []
        for name, engine in engines.items():
            t0 = time.perf_counter()
            result = engine.decode_region(page, "text", region_id=f"{sample.language}-{name}", page=index)
            ms = (time.perf_counter() - t0) * 1000 / max(1, len(boxes))
            row[name] = cer(sample.text, result.text)
            row[f"{name}_reader"] = result.stats.get("reader", "")
            row[f"{name}_ms_per_line"] = round(ms, 1)
            notes.append(f"{name}: {row[f'{name}_reader']} ({ms:.0f})")
        rows.append(row)
        print(f"{sample.script:11s} {sample.language:10s} {len(boxes):5d} {row['bundled']:8.1%} "
              + " ".join(f"{row[name]:8.1%}" for name in engines) + "  " + "; ".join(notes))
    for engine in engines.values():
        engine.close()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0
