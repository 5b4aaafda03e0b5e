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
