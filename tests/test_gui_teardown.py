"""The window's teardown on the real window (offscreen): closing it mid-run ends every thread it started
before the close returns (the decoding lane, the page renderer, the journal's save thread), so deleting it
later can never free what a thread still uses; the editor's deferred tagging of a line typed on a separator
survives the editor being deleted, or its document refilled, before the tag is due (the old code: a segfault,
and a line of the new text tagged with a block id it never had). No widgets or fixtures of its own."""
from __future__ import annotations

import threading

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest


def _journal_threads() -> set[threading.Thread]:
    """The journal save threads alive now (another test's window may still be ending its own)."""
    return {t for t in threading.enumerate() if t.name.startswith("scriptorium-journal")}


def test_closing_the_window_mid_run_ends_every_thread_it_started_before_close_returns(qtbot, open_window):
    from app.core.base.paths import sample_document

    before = _journal_threads()
    w = open_window(sample_document())
    w.save_journal()  # the journal's save thread is started
    ours = _journal_threads() - before
    assert len(ours) == 1
    w.run_document()  # every page of the sample: still reading when the window closes
    qtbot.waitUntil(lambda: w.events_handled > 0, timeout=60_000)
    assert w.decoder.running
    w.close()
    assert w.decoder._thread.isFinished(), "the decoding lane still runs after close"
    assert w.renderer._pool.activeThreadCount() == 0, "a page is still being rendered after close"
    assert not ours & _journal_threads(), "the journal's save thread outlived the window"
    assert w.journal.load()["clean"], "closed normally: the journal says so"
    qtbot.wait(200)  # the lane's last word, queued before it ended, arrives now: no run "ends" after close
    assert w.journal.load()["clean"] and not ours & _journal_threads()
    w.close()  # a second close (the app quitting after the window closed) does no harm
    assert w.journal.save(w.session.to_dict(), clean=True)  # and a save after close still writes
    w.journal.close()


def _editor(qtbot, register: bool = True):
    from app.gui.markdown_editor import MarkdownEditor

    e = MarkdownEditor()
    if register:  # closed and deleted by qtbot at the end
        qtbot.addWidget(e)
    e.set_blocks([("a", "# Title"), ("b", "one\ntwo"), ("c", "three")])
    e.show()
    return e


def _type_on_the_separator_below(e, rid: str, text: str) -> None:
    line = e.document().findBlock(e.block_start(rid))
    while e.line_id(line) == rid:
        line = line.next()
    assert line.isValid() and line.text() == "" and e.line_id(line) == ""  # the empty line after the block
    e.setTextCursor(QTextCursor(line))
    QTest.keyClicks(e, text)


def test_text_typed_on_a_separator_line_joins_the_block_above(qtbot):
    e = _editor(qtbot)
    _type_on_the_separator_below(e, "a", "subtitle")
    qtbot.wait(20)  # the tag is set on the next turn of the loop
    assert "subtitle" in e.block_text("a") and e.block_ids() == ["a", "b", "c"]


def test_a_line_typed_then_the_editor_refilled_before_its_tag_is_due_tags_no_other_line(qtbot):
    e = _editor(qtbot)
    _type_on_the_separator_below(e, "b", "x")
    e.set_blocks([("p", "first"), ("q", "second\nthird"), ("r", "fourth")])  # a new run fills it at once
    qtbot.wait(20)
    lines = []
    block = e.document().firstBlock()
    while block.isValid():
        lines.append((block.text(), e.line_id(block)))
        block = block.next()
    assert lines == [("first", "p"), ("", ""), ("second", "q"), ("third", "q"), ("", ""), ("fourth", "r")]


def test_a_line_typed_then_the_editor_deleted_before_its_tag_is_due_does_nothing(qtbot):
    e = _editor(qtbot, register=False)  # deleted here, by the test
    _type_on_the_separator_below(e, "a", "y")
    e.close()
    e.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # gone before the tag's turn
    qtbot.wait(20)  # the tag's turn: nothing left to tag, and nothing touches the freed document
