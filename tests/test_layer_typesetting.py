"""What a text layer spells in pieces, read as one (app.core.text.textlayer): TeX's accents over letters and its
quotes of two single ones; a tight font's word breaks shown only as gaps; and a table's column names standing
above its ruled body (app.core.text.tables.header_above) — each on a real page."""
from __future__ import annotations

import json
from pathlib import Path

import pymupdf

from app.bench.unit_checks import check
from app.core.text.textlayer import respaced, typeset_marks

UNITS = Path(__file__).resolve().parents[1] / "corpora" / "unittests"


def test_accents_and_quotes() -> None:
    assert typeset_marks("J´an Min´aˇc") == "Ján Mináč"
    assert typeset_marks("na¨ıve") == "naïve"
    assert typeset_marks("‘‘quoted’’") == "“quoted”"
    assert typeset_marks("don´t") == "don´t"  # no single letter: left alone
    assert typeset_marks("plain") == "plain"


def test_a_tight_caption_gets_its_spaces_and_nothing_else_does() -> None:
    with pymupdf.open(UNITS / "pdfs" / "olmo2-pg4.pdf") as doc:
        page = doc[0]
        changed = {w[4]: respaced(page, w[:4], w[4]) for w in page.get_text("words")}
    assert changed["CompositionofthepretrainingdataforOLMo2."] == "Composition of the pretraining data for OLMo 2."
    assert changed["Table1"] == "Table 1"
    assert sorted(k for k, v in changed.items() if k != v) == ["CompositionofthepretrainingdataforOLMo2.", "Table1"]
    with pymupdf.open(UNITS / "pdfs" / "openstax_caculus_pg_273.pdf") as doc:  # math spacing is no word break
        page = doc[0]
        assert all(respaced(page, w[:4], w[4]) == w[4] for w in page.get_text("words"))


def _tests(pdf: str) -> list[dict]:
    return [t for t in (json.loads(line) for line in (UNITS / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
                        if line.strip()) if t["pdf"] == pdf]


def test_real_pages_pass_their_unit_tests() -> None:
    from pipeline_kit import read

    md = read(UNITS / "pdfs" / "olmo2-pg4.pdf", markdown=True, engine="auto", layout="auto")
    for t in _tests("olmo2-pg4.pdf"):  # nine table neighbours and headings, and the caption
        assert check(t, md)[0], (t["id"], check(t, md)[1])
    md = read(UNITS / "pdfs" / "math_2503_04086.pdf", markdown=True, engine="auto", layout="auto")
    assert "We also thank Ján Mináč for his constant encouragement" in md
    md = read(UNITS / "pdfs" / "multi_column_miss.pdf", markdown=True, engine="auto", layout="auto")
    assert "The term “corporate social responsibility” is in vogue" in md


def test_a_drop_cap_joins_its_word() -> None:
    from app.core.document.base import TextWord
    from app.core.text.textlayer import _drop_caps

    cap = TextWord("O", (165.7, 583.3, 191.8, 619.3))
    rest = TextWord("ver", (192.8, 584.9, 204.1, 592.7))
    far = TextWord("the", (206.0, 584.9, 220.0, 592.7))
    assert [w.text for w in _drop_caps([cap, rest, far])] == ["Over", "the"]
    label = TextWord("A", (100, 100, 110, 112))  # a letter beside text of its own size: left alone
    beside = TextWord("side", (111, 100, 130, 112))
    assert [w.text for w in _drop_caps([label, beside])] == ["A", "side"]
    from pipeline_kit import read

    md = read(UNITS / "pdfs" / "multi_column_miss.pdf", markdown=True, engine="auto", layout="auto")
    assert "Over the past three decades increasing pressure" in md
