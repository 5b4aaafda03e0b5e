"""Pages in two scripts, rendered as images and read by the classic engine through the default layout (nothing
mocked): each line goes to the recogniser that reads its script — a Latin heading to the bundled PP-OCR
recogniser (RapidOCR), a Russian paragraph to Tesseract's rus model, Arabic lines with Latin digits to its ara
model — and the JSON says who read what: `reader` per line in `line_stats`, `readers` (lines per reader) in
the block's stats and the block's `reader`. The text is bounded by its edit distance to the text rendered.
The built-in engine (its shipped model) decodes the Latin heading itself (`builtin`, with rounds) and hands the
Russian lines to Tesseract (no rounds)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from export_kit import convert
from script_pages import ARABIC, LATIN_HEADING, RUSSIAN, Text, edit_ratio, need_tesseract, render_page

MAX_EDIT = 0.05  # per line, after NFKC (a letter or two in a line of 45)
ARABIC_HEADING = Text("Branch figures for 2024", "DejaVuSans-Bold.ttf", 18)


def _lines(path: Path) -> tuple[list[dict], list[dict]]:
    """(every block with text, every line of them) of a JSON export."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    blocks = [b for p in doc["pages"] for b in p["blocks"] if b["text"].strip()]
    return blocks, [s for b in blocks for s in b["stats"].get("line_stats") or []]


def _read(folder: Path, heading: Text, body, engine: str = "classic") -> tuple[list[dict], list[dict]]:
    page = render_page([heading, *body], folder / "page.png")
    if engine == "classic":
        _, files = convert(page, folder / "out", formats=("json",))
    else:  # the built-in engine's one pass over the scanned page
        from app.core.pipeline import Pipeline, PipelineOptions

        pipe = Pipeline(PipelineOptions(engine=engine, formats=("json",), layout_timeout=0), lambda e: None)
        try:
            pipe.run(str(page))
            files = pipe.write(folder / "out")
        finally:
            pipe.close()
    return _lines(Path(files["json"]))


def _check(lines: list[dict], heading: Text, body, reader: str, heading_reader: str = "rapidocr") -> None:
    texts = [s["text"] for s in lines]
    assert len(lines) == 1 + len(body), texts
    assert lines[0]["reader"] == heading_reader, lines[0]
    assert edit_ratio(lines[0]["text"], heading.text) <= MAX_EDIT, lines[0]
    for got, want in zip(lines[1:], body):
        assert got["reader"] == reader, got
        assert edit_ratio(got["text"], want.text) <= MAX_EDIT, (got["text"], want.text)


def test_a_latin_heading_over_a_russian_paragraph_is_read_by_two_recognisers(tmp_path):
    need_tesseract("rus")
    blocks, lines = _read(tmp_path, LATIN_HEADING, RUSSIAN)
    _check(lines, LATIN_HEADING, RUSSIAN, "tesseract:rus")
    readers: dict[str, int] = {}
    for b in blocks:
        for name, n in b["stats"]["readers"].items():
            readers[name] = readers.get(name, 0) + n
    assert readers == {"rapidocr": 1, "tesseract:rus": len(RUSSIAN)}
    assert any(b["reader"] == "tesseract:rus+rapidocr" for b in blocks) or \
        {b["reader"] for b in blocks} == {"rapidocr", "tesseract:rus"}
    assert not any("no installed recogniser" in r for b in blocks for r in b["needs_review"])


SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin" / "model.safetensors"


@pytest.mark.skipif(not SHIPPED.is_file(), reason="missing part: no shipped built-in model "
                                                   "(models/builtin/model.safetensors)")
def test_the_builtin_engine_decodes_the_latin_heading_and_gives_tesseract_the_russian(tmp_path,
                                                                                      one_torch_thread):
    need_tesseract("rus")
    blocks, lines = _read(tmp_path, LATIN_HEADING, RUSSIAN, engine="builtin")
    _check(lines, LATIN_HEADING, RUSSIAN, "tesseract:rus", heading_reader="builtin")
    assert {b["reader"] for b in blocks} == {"builtin", "tesseract:rus"}
    russian = next(b for b in blocks if b["reader"] == "tesseract:rus")
    assert russian["stats"]["rounds"] == 0  # no rounds for lines another recogniser read


def test_arabic_lines_with_latin_digits_under_a_latin_heading_keep_their_digits(tmp_path):
    need_tesseract("ara")
    blocks, lines = _read(tmp_path, ARABIC_HEADING, ARABIC)
    _check(lines, ARABIC_HEADING, ARABIC, "tesseract:ara")
    for got, want in zip(lines[1:], ARABIC):  # the digits as typed, in the order typed
        digits = [w for w in want.text.split() if w.isdigit()]
        assert [w for w in got["text"].split() if w.isdigit()] == digits, got["text"]


@pytest.mark.parametrize("lines", [[(0, 0, 500, 40, "Отчёт общества", {"reader": "tesseract:rus",
                                                                       "vertical": 0}),
                                    (0, 50, 500, 90, "Annual report", {"reader": "rapidocr", "vertical": 0}),
                                    (0, 100, 500, 140, "Собрание утвердило план")]])
def test_layout_lines_say_who_read_them_and_guess_only_where_the_layout_changed_the_text(lines):
    """The layout's OCR lines come back from pymupdf4llm with the hook's record beside them; a line whose text
    the layout changed has none, and is named by its letters only ("tesseract", its model unknown)."""
    from app.core.scripts.pieces import layout_line_readers

    st = layout_line_readers(lines)
    assert [s["reader"] for s in st["line_stats"]] == ["tesseract:rus", "rapidocr", "tesseract"]
    assert st["readers"] == {"tesseract:rus": 1, "rapidocr": 1, "tesseract": 1}
