"""The real-document development set (corpora/realdocs) and `bench documents --corpus real`: the manifest holds
what it promises, the scores move the right way on constructed cases, and the bench runs end to end."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from app.bench import real_corpus
from app.bench.real_scoring import cells, edit, flat, order, presence, score, tables

MANIFEST = real_corpus.CORPUS / "manifest.json"


# ---- the manifest ----
def test_manifest_pages_exist_with_every_field():
    pages = real_corpus.load()  # raises on a missing field or file
    entries = json.loads(MANIFEST.read_text(encoding="utf-8"))["pages"]
    assert len(pages) == len(entries) >= 40
    assert len({p.id for p in pages}) == len(pages)
    for e in entries:
        assert e["kind"] in real_corpus.KINDS, e["id"]
        assert e["licence"].strip() and e["reference_made"].strip(), e["id"]
        assert all(e["source"].get(k) for k in ("repo", "path", "commit")), e["id"]
        assert len(e["source"]["commit"]) == 40, e["id"]
    for p in pages:
        assert flat(p.reference), p.id


def test_manifest_mix_of_kinds_scripts_and_features():
    pages = real_corpus.load()
    kinds = Counter(p.kind for p in pages)
    assert kinds["scan"] * 2 >= len(pages)
    non_latin = [p for p in pages if p.script != "latin"]
    assert len(non_latin) >= 17  # the scripts stay (the table and formula pages added later are Latin)
    assert any(p.script == "chinese" for p in pages)
    features = {f for p in pages for f in p.features}
    assert {"table", "formula", "columns", "newspaper", "slide", "handwriting"} <= features
    # a page marked "table" has a table in its reference, so the cell score means something there
    for p in pages:
        if "table" in p.features:
            assert tables(p.reference), p.id
    # tables whose structure TEDS can compare: real pages with their source's own ground truth, as HTML with spans
    html_tables = [p for p in pages if "table" in p.features and "<table" in p.reference]
    assert len(html_tables) >= 15
    assert any("colspan" in p.reference for p in html_tables)


def test_corpus_stays_small():
    total = sum(f.stat().st_size for f in real_corpus.CORPUS.rglob("*") if f.is_file())
    assert total < 25 * 2**20


# ---- the scores ----
LEFT = ["The first column opens with this sentence.", "It goes on with a second line of text.",
        "A third line closes the left column here."]
RIGHT = ["The right column starts with other words.", "Its middle line talks about something else.",
         "And its last line ends the page for good."]


def test_identical_text_scores_perfectly():
    ref = "\n".join(LEFT + RIGHT)
    assert score(ref, ref) == {"edit": 0.0, "present": 1.0, "order": 1.0, "cells": None, "teds": None,
                               "formula": None, "parses": None}


def test_columns_read_in_the_wrong_order_lower_reading_order():
    ref = "\n".join(LEFT + RIGHT)
    swapped = "\n".join(RIGHT + LEFT)
    across = "\n".join(x for pair in zip(LEFT, RIGHT) for x in pair)
    assert presence(ref, swapped) == 1.0
    assert order(ref, swapped) < 0.5
    assert order(ref, across) < 1.0
    assert order(ref, swapped) < order(ref, across)
    assert edit(ref, swapped) > 0.3


def test_a_short_output_is_not_found_inside_a_long_unit():
    assert presence("Славянские языки — большая языковая семья.", ". ") == 0.0
    assert presence("Славянские языки — большая языковая семья.", "Славянские языки — большая языковая семья") == 1.0


def test_missing_text_lowers_presence_and_raises_edit():
    ref = "\n".join(LEFT + RIGHT)
    half = "\n".join(LEFT)
    assert presence(ref, half) == pytest.approx(0.5)
    assert edit(ref, half) > 0.4


def test_markup_and_cjk_spacing_do_not_count():
    assert edit("## 基于深度学习的方法", "基 于 深 度 学 习 的 方 法") == 0.0
    assert edit("**Bold** and *it*", "<p>Bold and it</p>") == 0.0
    assert edit("Beantwortung der Frage: Was iſt", "Beantwortung der Frage: Was ist") == 0.0  # NFKC folds ſ


TABLE = """| Method | R | P |
|---|---|---|
| SegLink | 70.0 | 86.0 |
| PixelLink | 73.2 | 83.0 |
| CRAFT | 78.2 | 88.2 |"""


def test_a_table_that_loses_its_header_row_scores_lower():
    assert cells(TABLE, TABLE) == 1.0
    headless = "\n".join(line for line in TABLE.splitlines() if "Method" not in line)
    assert cells(TABLE, headless) < 0.8
    html = ("<table><tr><th>Method</th><th>R</th><th>P</th></tr><tr><td>SegLink</td><td>70.0</td><td>86.0</td></tr>"
            "<tr><td>PixelLink</td><td>73.2</td><td>83.0</td></tr><tr><td>CRAFT</td><td>78.2</td><td>88.2</td></tr>"
            "</table>")
    assert cells(TABLE, html) == 1.0
    assert cells(TABLE, "Method R P SegLink 70.0 86.0") == 0.0  # no table at all
    assert cells("no table here", html) is None


def test_spanned_html_cells_fill_their_slots():
    html = '<table><tr><td colspan="2">Head</td></tr><tr><td>a</td><td>b</td></tr></table>'
    assert tables(html) == [[["Head", "Head"], ["a", "b"]]]


# ---- end to end ----
@pytest.mark.slow  # two converters on one line image: seconds on an idle machine, longer on a shared one
def test_bench_runs_on_one_small_page(tmp_path, capsys):
    out = tmp_path / "rows.json"
    code = real_corpus.main(["--only", "s23-greek-line", "--converters", "pymupdf4llm,classic", "--no-warm",
                              "--json", str(out)])
    assert code == 0
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [r["converter"] for r in rows] == ["pymupdf4llm", "classic"]
    assert all(r["page"] == "s23-greek-line" and r["s"] > 0 and 0 <= r["edit"] <= 1 for r in rows)
    printed = capsys.readouterr().out
    assert "| s23-greek-line | scan | greek |" in printed and "kind=scan" in printed


def test_tables_from_saved_rows_are_rescored(tmp_path, capsys):
    pages = {p.id: p for p in real_corpus.load()}

    def row(page, conv, output):
        return {"page": page, "kind": pages[page].kind, "script": pages[page].script,
                "features": list(pages[page].features), "converter": conv, "s": 2.0, "edit": 9.0, "present": 9.0,
                "order": 9.0, "cells": 9.0, "error": "", "output": output}

    table = pages["s11-table-image"].reference
    (tmp_path / "a.json").write_text(json.dumps([row("s11-table-image", "classic", table),
                                                 row("s07-phototest", "classic", "")]), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps([row("s11-table-image", "builtin", "")]), encoding="utf-8")
    assert real_corpus.main(["--from-json", f"{tmp_path / 'a.json'},{tmp_path / 'b.json'}"]) == 0
    text = capsys.readouterr().out
    row = "| s11-table-image | scan | latin | 0.00 1.00 1.00 1.00 1.00 - - 2.0s | 1.00 0.00 - 0.00 0.00 - - 2.0s |"
    assert row in text
    assert "s07-phototest" not in text  # only pages every converter read


def test_converters_take_turns_page_by_page_and_speed_is_a_ratio_per_page(monkeypatch):
    """A machine whose load changes during a long run must not favour the converter that ran last: they take turns
    on each page, and the speed line is the median of per-page ratios."""
    from app.bench import real_corpus as rc

    pages = rc.load()[:3]
    calls: list[str] = []
    monkeypatch.setitem(rc.CONVERTERS, "a", lambda path: calls.append("a") or path.stem)
    monkeypatch.setitem(rc.CONVERTERS, "b", lambda path: calls.append("b") or path.stem)
    rows = rc.measure(pages, ["a", "b"], warm=False)
    assert calls == ["a", "b"] * 3 and [r["converter"] for r in rows] == ["a", "b"] * 3
    for r, s in zip(rows, [2.0, 1.0, 3.0, 1.0, 4.0, 1.0]):
        r["s"], r["kind"] = s, "born-digital"
    assert rc.speed_ratios(rows, ["a", "b"], base="b") == (
        "born-digital seconds per page, a / b: 3.00 (median of 3 pages, 2.00-4.00)")
