"""Choosing what to read, in the real window (offscreen, classic OCR on the bundled two-page sample): the Pages
field takes `convert --pages`' syntax and F5 then reads only those pages; an invalid range is refused with the words
`convert` prints; a thumbnail's check box (Space) and Ctrl+K skip a page; the choice is journaled."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.gui.page_range import format_pages, refusal


def test_format_pages_writes_what_parse_pages_reads():
    from app.core.pipeline.options import parse_pages

    for chosen, text in (([0, 1, 2, 6], "1-3,7"), ([4], "5"), ([0, 2, 3, 4, 9], "1,3-5,10"), (list(range(10)), "all")):
        assert format_pages(chosen, 10) == text and parse_pages(text, 10) == chosen
    assert refusal("a.pdf", "2-", 3) == "" and refusal("a.pdf", "x", 3).startswith("a.pdf: cannot read")


@pytest.fixture
def pdf(tmp_path):
    from app.core.base.paths import sample_document

    path = tmp_path / "report.pdf"
    shutil.copyfile(sample_document(), path)
    return path


@pytest.fixture
def window(open_window, pdf):
    return open_window(pdf)


def checks(w) -> list[bool]:
    t = w.thumbnails
    return [t.item(r).checkState() == Qt.CheckState.Checked for r in range(t.count())]


def test_a_page_range_reads_only_those_pages_and_a_bad_one_is_refused_as_convert_refuses_it(qtbot, window, pdf,
                                                                                             tmp_path):
    from app.core.pipeline import Pipeline, PipelineError, PipelineOptions

    w = window
    assert w.work.page_count == 2 and checks(w) == [True, True] and w.page_range.pages_to_read() is None
    field = w.page_range.field
    w.actions.choose_pages.trigger()
    assert field.hasFocus()
    QTest.keyClicks(field, "9")
    QTest.keyClick(field, Qt.Key.Key_Return)
    # the same words `convert --pages 9` says, from the same parser
    with pytest.raises(PipelineError) as refused:
        Pipeline(PipelineOptions(engine="classic", pages="9")).run(pdf)
    assert w.banner.isVisible() and w.banner.label.text() == str(refused.value)
    assert str(refused.value) == "report.pdf: page 9 does not exist (the document has 2 pages)"
    cli = subprocess.run([sys.executable, "-m", "app", "convert", str(pdf), "-o", str(tmp_path / "cli"),
                          "--engine", "classic", "--pages", "9"], capture_output=True, text=True, timeout=120)
    assert cli.returncode != 0 and f"error: {refused.value}" in cli.stderr
    assert checks(w) == [True, True] and w.work.skipped_pages == []  # nothing changed

    field.setText("2")
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert checks(w) == [False, True] and w.work.skipped_pages == [0] and w.page_range.pages_to_read() == [1]
    w.page_view.setFocus()
    QTest.keyClick(w, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: not w.decoder.running, timeout=90_000)
    w.redraw()
    assert {b.region.page for b in w.work.layout_blocks()} == {1}
    w.export_current(tmp_path / "out" / "report.md")
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [p["index"] for p in data["pages"]] == [1]
    assert (tmp_path / "out" / "report.md").read_text().count("<a id=\"page-") <= 1

    # the journal keeps the choice
    from app.core.review.session import Session

    again = Session()
    again.load_dict(json.loads(json.dumps(w.session.to_dict())))
    assert again.documents[0].skipped_pages == [0]


def test_space_on_a_thumbnail_and_ctrl_k_skip_a_page(qtbot, window):
    w = window
    t = w.thumbnails
    t.setFocus()
    t.setCurrentRow(1)
    QTest.keyClick(t, Qt.Key.Key_Space)
    assert checks(w) == [True, False] and w.work.skipped_pages == [1]
    assert w.page_range.field.text() == "1"
    QTest.keyClick(t, Qt.Key.Key_Space)
    assert checks(w) == [True, True] and w.page_range.field.text() == ""
    w.show_page(0)
    w.page_view.setFocus()
    QTest.keyClick(w.page_view, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert w.work.skipped_pages == [0] and checks(w) == [False, True]
    w.page_range.toggle_page(1)  # not every page: one must be read
    assert w.work.skipped_pages == [0] and "at least one page" in w.banner.label.text()
