"""What the engines cannot read is said, never hidden (pages rendered as images, read by the classic engine,
nothing mocked):

- vertical Chinese (columns read top to bottom, from the right) is found — lines far taller than wide — and
  its block flagged for review: its columns are not read in order;
- a line in a script no installed recogniser reads is flagged with the line that installs one. "Not
  installed" is real here: Tesseract is pointed (TESSDATA_PREFIX, as Tesseract itself reads it) at a folder
  holding only the English model, with and without the script detector (OSD) beside it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from export_kit import convert
from script_pages import ARABIC, HEBREW, edit_ratio, need_tesseract, render_page, vertical_cjk_page

POEMS = ["春眠不覺曉處處聞啼鳥", "夜來風雨聲花落知多少", "床前明月光疑是地上霜"]


def _blocks(files) -> list[dict]:
    doc = json.loads(Path(files["json"]).read_text(encoding="utf-8"))
    return [b for p in doc["pages"] for b in p["blocks"] if b["text"].strip()]


def test_vertical_chinese_columns_are_found_and_flagged_for_review(tmp_path):
    page = vertical_cjk_page(POEMS, tmp_path / "vertical.png")
    _, files = convert(page, tmp_path / "out", formats=("json",))
    blocks = _blocks(files)
    assert sum(int(b["stats"].get("vertical_lines") or 0) for b in blocks) >= len(POEMS)
    flagged = [r for b in blocks for r in b["needs_review"] if r.startswith("vertical text")]
    assert flagged and all("order" in r for r in flagged), [b["needs_review"] for b in blocks]
    # the text was read (its characters are there), whatever order the columns came in
    got = "".join(b["text"] for b in blocks)
    assert sum(ch in got for ch in "".join(POEMS)) >= 0.8 * len("".join(POEMS))


SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin" / "model.safetensors"


@pytest.mark.skipif(not SHIPPED.is_file(), reason="missing part: no shipped built-in model "
                                                   "(models/builtin/model.safetensors)")
def test_vertical_columns_the_builtin_engine_reads_across_are_flagged_too(tmp_path, one_torch_thread):
    """The built-in engine's detector joins two neighbouring columns' glyphs row by row ("夜春", "來眠", …):
    rows of two CJK glyphs stacked one under another are vertical text read across, and flagged."""
    from app.core.pipeline import Pipeline, PipelineOptions

    page = vertical_cjk_page(POEMS, tmp_path / "vertical.png")
    pipe = Pipeline(PipelineOptions(engine="builtin", formats=("json",), layout_timeout=0), lambda e: None)
    try:
        pipe.run(str(page))
        files = pipe.write(tmp_path / "out")
    finally:
        pipe.close()
    blocks = _blocks(files)
    cjk = [b for b in blocks if sum("\u4e00" <= ch <= "\u9fff" for ch in b["text"]) >= 3]
    assert cjk and all(any(r.startswith("vertical text") for r in b["needs_review"]) for b in cjk), \
        [(b["text"], b["needs_review"]) for b in blocks]


@pytest.mark.parametrize("rows, expected", [
    ([((0, 10 * k, 40, 10 * k + 9), "夜春") for k in range(10)], 10),  # two columns read across, row by row
    ([((0, 10 * k, 40, 10 * k + 9), "夜春") for k in range(3)], 0),  # too few rows to tell
    ([((0, 10 * k, 300, 10 * k + 9), "春眠不覺曉處處聞啼鳥") for k in range(6)], 0),  # horizontal Chinese
    ([((0, 10 * k, 40, 10 * k + 9), "Ab") for k in range(6)], 0),  # short Latin rows
    ([((100 * (k % 2), 10 * k, 100 * (k % 2) + 40, 10 * k + 9), "春") for k in range(6)], 0),  # not stacked
])
def test_rows_cut_across_vertical_columns_are_told_from_horizontal_text(rows, expected):
    from app.core.scripts.direction import stacked_rows

    assert stacked_rows(rows) == expected


@pytest.fixture
def only_english(tmp_path, monkeypatch):
    """Tesseract with English only (and, when asked, its script detector): the process's shared instance is
    made afresh from TESSDATA_PREFIX and put back afterwards."""
    import app.core.scripts.tesseract as tesseract

    real = need_tesseract("eng", "osd").folder
    made = []

    def make(*langs: str) -> Path:
        folder = tmp_path / "tessdata"
        folder.mkdir()
        for lang in langs:
            shutil.copy(real / f"{lang}.traineddata", folder)
        monkeypatch.setenv("TESSDATA_PREFIX", str(folder))
        monkeypatch.setattr(tesseract, "_SHARED", None)
        made.append(tesseract.shared())
        assert made[-1].languages == frozenset(langs)
        return folder

    yield make
    for tess in made:  # its models closed before the process's own Tesseract is put back
        tess.close()


def _read_arabic(tmp_path) -> list[dict]:
    # the whole page as one region: the classic engine's own router reads it (the layout's OCR runs in a child
    # process that may have started before TESSDATA_PREFIX was set)
    _, files = convert(render_page(list(ARABIC), tmp_path / "arabic.png"), tmp_path / "out", layout="page",
                       formats=("json",))
    return _blocks(files) or json.loads(Path(files["json"]).read_text(encoding="utf-8"))["pages"][0]["blocks"]


def test_arabic_with_no_arabic_model_is_flagged_with_the_package_that_reads_it(tmp_path, only_english):
    from app.core.scripts.catalogue import install_hint

    only_english("eng", "osd")
    blocks = _read_arabic(tmp_path)
    missing = [m for b in blocks for m in b["stats"].get("unreadable_scripts") or []]
    assert missing and missing[0]["script"] == "Arabic" and missing[0]["lines"] == len(ARABIC)
    reasons = [r for b in blocks for r in b["needs_review"]]
    assert any("Arabic" in r and install_hint("ara") in r for r in reasons), reasons
    assert not any(b["reader"] and "tesseract" in b["reader"] for b in blocks)


def test_without_a_script_detector_the_flag_names_what_would_read_every_script(tmp_path, only_english):
    from app.core.scripts.catalogue import install_all_hint

    only_english("eng")
    blocks = _read_arabic(tmp_path)
    reasons = [r for b in blocks for r in b["needs_review"]]
    assert any("no installed recogniser reads" in r and install_all_hint() in r for r in reasons), reasons
    everything = install_all_hint(platform="linux")
    assert everything.startswith("apt install tesseract-ocr-osd ") and "tesseract-ocr-ara" in everything


def test_an_upright_hebrew_page_is_not_turned_upside_down_and_is_read_in_hebrew(tmp_path):
    """Upside down, Hebrew reads to the bundled recogniser as confident Latin look-alikes ("UXOGU XIALU"),
    which turned the page over; Tesseract's script detector finds it upright, in Hebrew: it stays as is."""
    from PIL import Image

    from app.core.layout.orientation import detect

    need_tesseract("heb", "osd")
    page = render_page(list(HEBREW), tmp_path / "hebrew.png")
    assert detect(Image.open(page)).turn == 0
    out, files = convert(page, tmp_path / "out", layout="page", formats=("json",))
    assert out.pages[0].rotation == 0
    blocks = _blocks(files)
    assert [b["reader"] for b in blocks] == ["tesseract:heb"]
    want = " ".join(t.text for t in HEBREW)
    assert edit_ratio(blocks[0]["text"], want) <= 0.05 and blocks[0]["text"].split()[0] == want.split()[0]


# what the bundled recogniser made of the Hebrew page (DejaVu Sans, the default layout): confident Latin
HEBREW_AS_LATIN = ("ULIU UATU A4 UXXILU ULXU CLI4 CUOGL UUCLO", "IGLOIUIO ULAIO CA4IA ALIO CUU4L UACU UXULICU",
                   "UXOGU XIALU XU UICCU UACILU LACU LCXU")


def test_latin_look_alikes_are_told_from_latin_words_codes_and_names():
    from app.core.scripts.lookalike import lookalike, mostly_lookalikes

    assert all(lookalike(t) for t in HEBREW_AS_LATIN) and mostly_lookalikes(list(HEBREW_AS_LATIN))
    latin = ["Annual Report of the Society", "Der Bericht des Vereins zeigt ein Wachstum",
             "Le rapport annuel de la société", "Sprawozdanie roczne stowarzyszenia", "Total 80.68 85.40 (2024)"]
    assert not any(lookalike(t) for t in latin)
    # a Chinese page's lines with Latin names in them (corpora/realdocs s15) are Chinese, read as Chinese: a second
    # and a half of the page went to reading them in every installed script
    assert not any(lookalike(t) for t in ("Tensmeyer等，2019", "Raja等，2020（tabstruct-net）",
                                           "性数据集（ICDAR2013,PubTabNet），其效果总结"))
    # codes in a table are not words either: one such line, or a few among words, is not "mostly"
    assert not mostly_lookalikes(["GAPDH sense TGGTGAAGCAGGCATCTGAG", "Primer sequences used for the assay",
                                  "Gene names and their forward strands", "IL6 antisense ACCAGCATCAGTCCCAAGAAG"])


def test_hebrew_the_bundled_recogniser_reads_as_confident_latin_goes_to_hebrew_on_the_default_layout(tmp_path):
    """On the default layout (its OCR: RapidOCR at 150 DPI) every Hebrew line read as confident Latin look-alikes
    ("UXOGU XIALU"), no line a suspect: the page came out as Latin letters, unflagged. Its words are no words,
    Tesseract's script detector names Hebrew: the Hebrew model reads it."""
    need_tesseract("heb", "osd")
    _, files = convert(render_page(list(HEBREW), tmp_path / "hebrew.png"), tmp_path / "out", formats=("json",))
    blocks = _blocks(files)
    assert [b["reader"] for b in blocks] == ["tesseract:heb"], [(b["reader"], b["text"][:40]) for b in blocks]
    want = " ".join(t.text for t in HEBREW)
    assert edit_ratio(blocks[0]["text"], want) <= 0.05


def test_hebrew_read_as_latin_look_alikes_with_no_hebrew_model_is_flagged_with_its_package(tmp_path, only_english):
    """The router given the Hebrew page's lines as the bundled recogniser read them (confident Latin look-alikes,
    no line a suspect by its confidence or coverage), with no Hebrew model installed: every line is unread, in
    Hebrew, with the package that reads it — not kept as Latin."""
    import numpy as np
    from PIL import Image

    from app.core.scripts.catalogue import install_hint
    from app.core.scripts.crops import bands
    from app.core.scripts.router import ScriptRouter, Unread

    only_english("eng", "osd")
    image = Image.open(render_page(list(HEBREW), tmp_path / "hebrew.png")).convert("L")
    ink = np.asarray(image) < 128
    boxes = []
    for y0, y1 in bands(list(ink.any(axis=1))):
        xs = np.flatnonzero(ink[y0:y1].any(axis=0))
        boxes.append((float(xs[0]), float(y0), float(xs[-1] + 1), float(y1)))
    assert len(boxes) == len(HEBREW)
    got = ScriptRouter().route(image, [(box, text, 0.85) for box, text in zip(boxes, HEBREW_AS_LATIN)])
    assert all(isinstance(r, Unread) for r in got), got
    assert {(r.script, r.install) for r in got} == {("Hebrew", install_hint("heb"))}
