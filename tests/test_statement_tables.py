"""A financial statement's table as a reader sees it (app.core.text.tables.tidy_columns): the "$" columns join
their figures, spacer columns go, a lone label over the figure columns spans them, and the rows above the first
figures are the header — checked on a real 10-K page by its unit tests' neighbours and headings."""
from __future__ import annotations

import json
from pathlib import Path

from app.bench.unit_checks import check, grids
from app.core.text.finder_tables import tidy_columns
from app.core.text.tables import Cell

UNITS = Path(__file__).resolve().parents[1] / "corpora" / "unittests"


def _row(*texts: str) -> list[Cell]:
    return [Cell(t) for t in texts]


def test_currency_and_spacer_columns_and_a_spanning_label() -> None:
    rows = [_row("", "", "", "Year Ended", "", ""), _row("", "", "2025", "", "", "2024"),
            _row("Cost", "$", "178", "", "$", "141"), _row("R&D", "", "3,423", "", "", "2,532")]
    out, head = tidy_columns(rows, 1)
    assert [[c.text for c in r] for r in out] == [["", "Year Ended"], ["", "2025", "2024"], ["Cost", "$178", "$141"],
                                                  ["R&D", "3,423", "2,532"]]
    assert out[0][1].colspan == 2 and head == 2
    spanned = [[Cell("a", rowspan=2), Cell("b")], [Cell("c")]]
    assert tidy_columns(spanned, 1) == (spanned, 1)  # row spans: left alone


def test_a_real_statement_passes_its_unit_tests() -> None:
    from pipeline_kit import read

    md = read(UNITS / "pdfs" / "earnings.pdf", markdown=True, engine="auto", layout="auto")
    tests = [json.loads(line) for line in (UNITS / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["pdf"] == "earnings.pdf"]
    assert len(tests) == 5
    for t in tests:
        assert check(t, md)[0], (t["id"], check(t, md)[1])
    table = next(g for g in grids(md) if any(t == "Year Ended" for t in g.text.values()))
    assert "$4,737" in table.text.values()


def test_stacked_header_rows_above_a_shaded_table() -> None:
    """DiscoveryWorld's table 4: a group row (ReACT, Plan+Execute, Hypothesizer) over column names set on their
    side, both above the finder's table; spacer columns under section rows; words over a spanning cell's edges."""
    from pipeline_kit import read

    md = read(UNITS / "pdfs" / "discoverworld_crazy_table4.pdf", markdown=True, engine="auto", layout="auto")
    tests = [json.loads(line) for line in (UNITS / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip() and json.loads(line)["pdf"] == "discoverworld_crazy_table4.pdf"
             and json.loads(line)["type"] == "table"]
    assert len(tests) == 7
    for t in tests:
        assert check(t, md)[0], (t["id"], check(t, md)[1])
    assert "Proteomics" in md and "Prot eomics" not in md
    assert '<th colspan="3">ReACT</th>' in md


def test_a_first_row_that_names_every_column_skips_the_finder_s_header_analysis() -> None:
    """external_header with the page's words answers at once for a table whose first row names every column, and
    says what the finder's (slow) header analysis says, on real ruled tables."""
    import pymupdf

    from app.core.text.finder_tables import external_header

    pages = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages"
    seen = 0
    for name in ("t10-redbook-p9.pdf", "d06-report-p2.pdf", "d01-table-paper.pdf", "d11-wide-table.pdf"):
        with pymupdf.open(pages / name) as doc:
            page = doc[0]
            words = page.get_text("words")
            for t in page.find_tables().tables:
                assert external_header(t, words) == external_header(t)
                seen += 1
    assert seen >= 4
