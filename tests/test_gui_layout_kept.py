"""A person's layout is never silently replaced (the real window, offscreen, classic OCR on the sample's first page):
Unlimited-OCR, which reads whole pages and cannot follow a fixed layout, is refused with a banner on a page a
person laid out, and the regions stay exactly as they were; after a crash, the journal brings the person's regions
back and a re-run of the page reads them instead of laying the page out again."""
from __future__ import annotations

import json

import pytest


def _layout(work, page=0):
    return [(b.id, tuple(b.region.box_pt), b.region.task, b.region.text, b.status) for b in work.layout_blocks(page)]


def _wait(qtbot, w, timeout=90_000):
    qtbot.waitUntil(lambda: not w.decoder.running, timeout=timeout)
    qtbot.wait(50)



@pytest.fixture
def laid_out(qtbot, page_events):
    """The window after that run (its events through the window's one entry point, as a live run's are) and a
    person's fix: a drawn region."""
    from app.gui.main_window import MainWindow

    pdf, events = page_events
    w = MainWindow()
    qtbot.addWidget(w)
    w.engine_bar.set_engine("classic")
    w.open_files([str(pdf)], run=False)
    qtbot.waitUntil(lambda: bool(w.work.page_sizes), timeout=20_000)
    for e in events:
        w.handle_event(e)
    w.run_presenter.finished(0, "")  # what the lane says after a run's last event
    assert w.work.summary().endswith("blocks")
    w.flow.draw(0, (300, 500, 500, 540))
    assert "p1-u01" in w.work.blocks and w.work.pages[0].layout == "person"
    return w


def test_unlimited_is_refused_on_a_persons_layout_and_the_regions_stay(qtbot, laid_out):
    w = laid_out
    before = _layout(w.work)
    w.engine_bar.set_engine("unlimited")
    assert w.engine_bar.pipeline_options().engine == "unlimited"
    assert w.rerun_page() == 0 and w.run_document() == 0  # neither the page nor the whole document
    assert not w.decoder.running
    message = w.banner.text
    assert "Unlimited-OCR" in message and "page 1" in message and "kept" in message, message
    assert [b.text() for b in w.banner.buttons] == ["Use classic"]
    assert _layout(w.work) == before and w.work.pages[0].layout == "person"
    w.select_region("p1-u01")
    assert w.rerun_region("p1-u01") == 0 and _layout(w.work) == before  # nor one region of it


def test_after_a_crash_the_journal_brings_back_the_persons_regions_and_a_rerun_keeps_them(qtbot, laid_out):
    from app.gui.main_window import MainWindow

    first = laid_out
    target = next(b.id for b in first.work.layout_blocks(0) if b.region.task == "text" and b.id != "p1-u01")
    first.flow.relabel(target, "table")
    laid = [(i, box, task) for i, box, task, _, _ in _layout(first.work)]
    first.save_journal()  # what the autosave does; then the process "dies": no closeEvent, the journal stays unclean
    assert json.loads(first.journal.path.read_text(encoding="utf-8"))["clean"] is False

    second = MainWindow()
    qtbot.addWidget(second)
    second.prompter.answers["restore_journal"] = True
    assert second.offer_restore()
    assert second.work.pages[0].layout == "person"
    assert [(i, box, task) for i, box, task, _, _ in _layout(second.work)] == laid
    assert "p1-u01" in second.page_view.region_items  # shown on the page
    assert not second.flow.undo_stack.canUndo()  # the undo history is not kept (docs/user-guide.md, The journal)
    second.engine_bar.set_engine("classic")
    assert second.rerun_page()
    _wait(qtbot, second)
    assert [(i, box, task) for i, box, task, _, _ in _layout(second.work)] == laid
    assert second.work.blocks["p1-u01"].status == "done" and second.work.blocks[target].status == "done"
