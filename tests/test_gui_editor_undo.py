"""The editor's own undo (Ctrl+Z while typing in it) holds the person's typing, never the run's text: a block
streamed in by OCR, refilled or appended is no step to undo (it had been one step per streamed update)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest


def test_ctrl_z_in_the_editor_undoes_typing_but_never_the_streamed_text(qtbot):
    from app.gui.markdown_editor import MarkdownEditor

    e = MarkdownEditor()
    qtbot.addWidget(e)
    e.show()
    e.set_blocks([("a", "# Title"), ("b", "")])
    for partial in ("The first", "The first line", "The first line of text"):  # OCR streaming block b
        assert e.update_block("b", partial)
    e.append_block("c", "A block the run added")
    assert e.document().availableUndoSteps() == 0

    e.setFocus()
    QTest.keyClick(e, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # nothing of the person's to undo
    assert e.block_text("b") == "The first line of text" and e.block_text("c") == "A block the run added"

    cursor = QTextCursor(e.document().findBlock(e.block_start("a")))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    e.setTextCursor(cursor)
    QTest.keyClicks(e, " two")  # the person types…
    assert e.block_text("a") == "# Title two"
    QTest.keyClick(e, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # …and undoes their typing only
    assert e.block_text("a") == "# Title" and e.block_text("b") == "The first line of text"
