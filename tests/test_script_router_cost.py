"""What the script router (app.core.scripts.router) costs on pages in scripts the bundled recogniser reads: a
line goes to Tesseract only on evidence of another script (its letters, or Tesseract's script detector), and
lines read as Latin are tried in another script only when the page itself is not Latin (issue #38: a speck
on a Latin scan had sent every Latin line on it to Tesseract's Hebrew model, 146 s of a 433 s page).

Real Tesseract throughout; the calls are counted by a Tesseract whose reads note the crop and language."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from script_pages import need_tesseract

SERIF = Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")
LATIN = ["The committee met on Tuesday to review the budget",
         "for the coming year and the plans of each department.",
         "Several members asked for a clearer account of costs",
         "before any new projects could be approved by the board.",
         "The chair promised a full report at the next meeting."]
RUSSIAN = "Собрание утвердило план работы на будущий год."


def counting_tesseract():
    """A real Tesseract (the process's models) noting each line and block read (crop origin y, language)."""
    from app.core.scripts.tesseract import Tesseract

    base = need_tesseract("rus", "osd")

    class Counted(Tesseract):
        def __init__(self) -> None:
            super().__init__(base.folder)
            self.reads: list[tuple[float, str]] = []
            self.blocks: list[str] = []
            self.ahead: list[str] = []  # the languages of the reads made on the reading-ahead thread

        def read(self, image, lang):
            self.reads.append((float(image.info.get("origin", (0.0, 0.0))[1]), lang))
            if threading.current_thread().name.startswith("tesseract-ahead"):
                self.ahead.append(lang)
            return super().read(image, lang)

        def read_block(self, image, lang):
            self.blocks.append(lang)
            return super().read_block(image, lang)

    return Counted()


def page(lines: list[str], px: int = 30):
    """(page image, each line's ink box) of `lines` set one under another in DejaVu Serif."""
    from PIL import Image, ImageDraw, ImageFont

    if not SERIF.is_file():
        pytest.skip("missing part: the DejaVu fonts (apt install fonts-dejavu-core)")
    face = ImageFont.truetype(str(SERIF), px)
    margin, step = 2 * px, round(1.6 * px)
    width = max(int(face.getlength(t)) for t in lines) + 2 * margin
    image = Image.new("RGB", (width, 2 * margin + step * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    boxes = []
    for k, text in enumerate(lines):
        draw.text((margin, margin + k * step), text, font=face, fill="black")
        boxes.append(tuple(float(v) for v in draw.textbbox((margin, margin + k * step), text, font=face)))
    return image, boxes


def test_unsure_latin_lines_on_a_latin_page_never_reach_tesseract():
    from app.core.scripts.router import ScriptRouter, suspect

    tess = counting_tesseract()
    image, boxes = page(LATIN)
    lines = [(box, text, 0.5) for box, text in zip(boxes, LATIN)]  # read right, but unsure: suspects
    assert all(suspect(*line) for line in lines)
    results = ScriptRouter(tess).route(image, lines)
    assert results == [None] * len(LATIN)
    assert tess.reads == [] and tess.blocks == []  # only the script detector was asked


def test_one_russian_line_on_a_latin_page_is_read_in_russian_and_the_latin_lines_are_left_alone():
    from app.core.scripts.router import ScriptRouter

    tess = counting_tesseract()
    image, boxes = page(LATIN + [RUSSIAN])
    lines = [(box, text, 0.95) for box, text in zip(boxes, LATIN)] + [(boxes[-1], "", 0.0)]  # Russian unread
    results = ScriptRouter(tess).route(image, lines)
    assert results[:-1] == [None] * len(LATIN)
    assert results[-1] is not None and results[-1].reader == "tesseract:rus", results[-1]
    latin_rows = [(box[1] - 0.5 * (box[3] - box[1]), box[1] + 1) for box in boxes[:-1]]  # their crops' tops
    on_latin = [(y, lang) for y, lang in tess.reads if any(top <= y <= bottom for top, bottom in latin_rows)]
    assert on_latin == [] and tess.blocks == []


def test_a_wide_line_with_nothing_read_is_evidence_even_when_osd_calls_it_latin():
    """The real Hangul headline s20 (corpora/realdocs): the bundled recogniser reads not one letter of its one
    wide line and OSD names it Latin; the line's shape says it is no speck, so Tesseract's Korean model reads it."""
    from PIL import Image

    from app.core.scripts.router import ScriptRouter, unread_line

    need_tesseract("kor", "osd")
    path = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s20-korean-headline.jpg"
    image = Image.open(path).convert("RGB")
    box = (118.0, 72.0, 1422.0, 141.0)  # the detector's line
    assert unread_line(box, "") and not unread_line((118.0, 72.0, 140.0, 80.0), "")  # a speck is no line
    (result,) = ScriptRouter().route(image, [(box, "", 0.0)])
    assert result is not None and result.reader == "tesseract:kor", result
    assert sum("\uac00" <= c <= "\ud7a3" for c in result.text) >= 10, result.text


def test_noise_in_a_latin_block_that_osd_cannot_name_is_left_as_read_and_not_flagged():
    """A smudge, a stamp, picture text read as unsure Latin ("Yan beane lat ahtut srrer", a line of UNLV 8087)
    among lines that read as words: Tesseract's script detector names no script for it, so the bundled reading
    stands. It went through every installed model (1.3 s here) and came back flagged as a script nothing reads."""
    import random

    from PIL import ImageDraw

    from app.core.scripts.crops import stack
    from app.core.scripts.router import ScriptRouter, crop_line

    tess = counting_tesseract()
    image, boxes = page(LATIN + ["x" * 40])
    x0, y0, x1, y1 = boxes[-1]
    draw = ImageDraw.Draw(image)
    draw.rectangle((x0 - 2, y0 - 2, x1 + 2, y1 + 2), fill="white")
    rng = random.Random(7)
    for _ in range(160):  # specks where the last line was
        cx, cy, r = rng.uniform(x0, x1), rng.uniform(y0, y1), rng.uniform(1, 4)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="black")
    assert tess.script_name(stack([crop_line(image, boxes[-1], isolate=False)])) is None
    lines = [(box, text, 0.95) for box, text in zip(boxes, LATIN)] + [(boxes[-1], "Yan beane lat ahtut srrer", 0.4)]
    assert ScriptRouter(tess).route(image, lines) == [None] * len(lines)
    assert tess.reads == [] and tess.blocks == []


def test_a_short_unsure_cell_among_words_is_still_tried_in_other_scripts():
    """A figure of a few characters read unsure is cheap to try: it is (another model reads a misread '0')."""
    from app.core.scripts.router import ScriptRouter

    tess = counting_tesseract()
    image, boxes = page(LATIN + ["8"])
    lines = [(box, text, 0.95) for box, text in zip(boxes, LATIN)] + [(boxes[-1], "s", 0.3)]
    ScriptRouter(tess).route(image, lines)
    assert tess.reads, "the short cell was never tried"


def test_a_pages_language_keeps_its_lines_unless_another_of_its_script_reads_them_clearly_surer():
    """Russian and Ukrainian share a script, and Tesseract's Ukrainian model reads noisy Russian lines surer than
    Russian's does (x13 of the real set: 0.84 against 0.76, "Рассмотрениє" for "Рассмотрение"): on a page found
    Russian, a block stays Russian unless another language of the script reads it PAGE_LEAD surer."""
    from app.core.scripts.router import PAGE_LEAD, ScriptRouter

    class Models:  # which models are installed: the family's choice reads no image
        languages = ("eng", "rus", "ukr", "bul")

    def choose(page_lang, confs):
        router = ScriptRouter(tesseract=Models())
        router.page_lang = page_lang
        return router.family("rus", [0, 1, 2], lambda ids, lang, *then: confs[lang], lambda i, lang: None)

    noisy = {"rus": 0.755, "ukr": 0.844, "bul": 0.718}
    assert choose(None, noisy) == "ukr"  # a first block: the surest
    assert choose("rus", noisy) == "rus"  # the page is Russian
    clearly = {"rus": 0.70, "ukr": 0.70 + PAGE_LEAD + 0.01, "bul": 0.5}
    assert choose("rus", clearly) == "ukr"  # a Ukrainian quotation on a Russian page


def specks(image, box, seed: int = 7) -> None:
    """Specks where the line in `box` was (its ink whitened first): noise no script detector names."""
    import random

    from PIL import ImageDraw

    x0, y0, x1, y1 = box
    draw = ImageDraw.Draw(image)
    draw.rectangle((x0 - 2, y0 - 2, x1 + 2, y1 + 2), fill="white")
    rng = random.Random(seed)
    for _ in range(160):
        cx, cy, r = rng.uniform(x0, x1), rng.uniform(y0, y1), rng.uniform(1, 4)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="black")


def specks_only(lines: list[str]):
    """A page of `lines`' boxes with nothing on it but specks where the last line was."""
    image, boxes = page(lines)
    image.paste("white", (0, 0, *image.size))
    specks(image, boxes[-1])
    return image, boxes


def test_noise_alone_in_its_block_on_a_latin_image_is_left_as_read():
    """Picture text on a magazine page (UNLV 8087: "o opory erre eiasero Y rrgoricnia,") came as a block of its own,
    with no other lines to tell its script by: Tesseract's script detector names no script for the line, and over
    the whole image it names Latin, so the bundled reading stands (it went through every model: 1 s of the page)."""
    from app.core.scripts.router import ScriptRouter

    tess = counting_tesseract()
    image, boxes = page(LATIN + ["x" * 40])
    specks(image, boxes[-1])
    assert tess.script_name(image) == "Latin"
    noise = [(boxes[-1], "o opory erre eiasero Y rrgoricnia,", 0.5)]
    assert ScriptRouter(tess).route(image, noise) == [None]
    assert tess.reads == [] and tess.blocks == []


def test_a_chinese_blocks_unsure_line_is_not_read_in_every_script():
    """On a Chinese page the bundled recogniser reads, a long unsure line with no letters of another script keeps
    its reading: the block's other lines are Chinese (the Latin names in them are not look-alikes either)."""
    from app.core.scripts.router import ScriptRouter

    tess = counting_tesseract()
    image, boxes = specks_only(LATIN + ["x" * 40])
    assert tess.script_name(image) is None  # nothing to tell by but the lines' readings
    texts = ["性数据集（ICDAR2013,PubTabNet），其效果总结", "Tensmeyer等，2019", "Raja等，2020（tabstruct-net）",
             "测阶段进行研究，提出了CascadeTabNet，一种基于", "表 5 PubTabNet 表格结构识别结果比较"]
    from app.core.text.textcheck import WIDE_SCRIPTS, line_coverage, script_of

    h = 30.0  # each Chinese line's box as wide as its characters (read in full: no suspect)
    width = [0.55 * h * sum(2 if script_of(c) in WIDE_SCRIPTS else 1 for c in t if c != " ") for t in texts]
    sized = [(60.0, 60.0 + 48 * k, 60 + w, 90.0 + 48 * k) for k, w in enumerate(width)]
    assert all(line_coverage(b, t) >= 0.9 for b, t in zip(sized, texts))
    lines = [(box, text, 0.97) for box, text in zip(sized, texts)] + [(boxes[-1], "Yan beane lat ahtut srrer", 0.4)]
    assert ScriptRouter(tess).route(image, lines) == [None] * len(lines)
    assert tess.reads == [] and tess.blocks == []


def test_a_language_that_reads_the_lines_clearly_ends_the_comparison():
    """A Russian line the bundled recogniser read as Latin look-alikes: once Russian's model reads it CLEAR, the
    scripts after it in the comparison are not read (each read the line twice: 0.5 s of a one-line page), but for
    the one right after it, read meanwhile on the other core (app.core.scripts.line_reads)."""
    from app.core.scripts.router import ScriptRouter

    tess = counting_tesseract()
    image, boxes = page([RUSSIAN])
    router = ScriptRouter(tess)
    out = router.route(image, [(boxes[0], "Co6panne yrBepAnno nnan pa6orbi", 0.3)])
    assert out[0] is not None and out[0].reader == "tesseract:rus" and out[0].text.startswith("Собрание")
    read = {lang for _, lang in tess.reads} | set(tess.blocks)
    later = router.candidates()[router.candidates().index("rus") + 1:]
    assert later, "no script after Russian's is installed: nothing to skip"
    assert not read & set(later[1:]), read
    assert sum(lang == later[0] for _, lang in tess.reads) == tess.ahead.count(later[0]), (tess.reads, tess.ahead)
