"""`bench documents`: the generated corpus and the figures it prints (recall, edit distance, tables)."""
from __future__ import annotations

from app.bench import documents
from app.bench.documents_corpus import CORPUS, make_corpus


def test_the_corpus_is_written_with_an_expected_text_per_pdf(tmp_path):
    pdfs = make_corpus(tmp_path)
    assert [p.stem for p in pdfs] == list(CORPUS)
    assert all(p.with_suffix(".txt").read_text(encoding="utf-8").strip() for p in pdfs)
    assert sum(p.stat().st_size for p in pdfs) < 2_000_000  # small enough for CI's smoke run


def test_recall_counts_words_and_edit_distance_sees_the_order():
    expected = "Left one.\nLeft two.\nRight one."
    down = "# Left one.\n\nLeft two.\n\n| Right one. |"
    across = "Left one. Right one. Left two."
    assert documents.recall(expected, down) == documents.recall(expected, across) == 1.0
    assert documents.edit(expected, down) == 0.0 < documents.edit(expected, across)
    assert documents.recall(expected, "Left") == 1 / 6


def test_the_table_puts_both_converters_side_by_side():
    row = {"doc": "scan", "pages": 2, "s": 4.0, "recall": 0.5, "edit": 0.25, "tables": 1}
    text = documents.table({"scriptorium": [row], "pymupdf4llm": [dict(row, s=1.0)]})
    lines = text.splitlines()
    assert lines[0].startswith("| document | scriptorium pages/s |") and "pymupdf4llm tables" in lines[0]
    assert lines[2] == "| scan | 0.50 | 0.500 | 0.250 | 1 | 2.00 | 0.500 | 0.250 | 1 |"
    assert lines[3].startswith("| all | 0.50 |")
