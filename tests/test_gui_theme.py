"""Looks and small pieces: palettes and the style-sheet template, recoloured icons, encrypted PDFs through the
prompter, the editor's block bookkeeping under typing."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest


def test_light_and_dark_themes_fill_the_template(qapp):
    from app.gui.theme import apply_theme, icon, is_dark, stylesheet

    try:
        assert apply_theme(qapp, "dark") is True
        assert is_dark(qapp.palette())
        sheet = qapp.styleSheet()
        assert "{{" not in sheet and "QToolBar" in sheet
        dark_icon = icon("open")
        assert not dark_icon.isNull()
        assert apply_theme(qapp, "light") is False
        assert not is_dark(qapp.palette())
        assert stylesheet(qapp.palette()) != sheet  # tokens follow the palette
        assert icon("open").cacheKey() != dark_icon.cacheKey()  # icons were recoloured for the new palette
        assert icon("no-such-icon").isNull()
    finally:
        qapp.setStyleSheet("")
        qapp.setPalette(qapp.style().standardPalette())
    assert qapp.palette().color(QPalette.ColorRole.Window).isValid()


def test_encrypted_pdf_asks_for_its_password(qtbot, tmp_path):
    import pymupdf

    from app.gui.main_window import MainWindow

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret")
    path = tmp_path / "locked.pdf"
    doc.save(str(path), encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="owner")
    w = MainWindow()
    qtbot.addWidget(w)
    w.prompter.answers["password"] = "pw"
    w.open_files([str(path)], run=False)
    qtbot.waitUntil(lambda: w.work.page_sizes != [], timeout=10_000)
    assert [k for k, _ in w.prompter.asked] == ["password"]
    assert w.page_view.page == 0 and w.banner.text == ""


def test_wrong_password_is_reported(qtbot, tmp_path):
    import pymupdf

    from app.gui.main_window import MainWindow

    doc = pymupdf.open()
    doc.new_page()
    path = tmp_path / "locked.pdf"
    doc.save(str(path), encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="owner")
    w = MainWindow()
    qtbot.addWidget(w)
    w.prompter.answers["password"] = "nope"
    w.open_files([str(path)], run=False)
    qtbot.waitUntil(lambda: w.banner.text != "", timeout=10_000)
    assert "password" in w.banner.text


def test_editor_keeps_block_ids_while_typing(qtbot):
    from app.gui.markdown_editor import MarkdownEditor

    e = MarkdownEditor()
    qtbot.addWidget(e)
    edited = []
    e.block_edited.connect(lambda rid, text: edited.append((rid, text)))
    e.set_blocks([("a", "# Title"), ("b", "one\ntwo"), ("c", "")])
    assert e.block_ids() == ["a", "b", "c"] and e.toPlainText() == "# Title\n\none\ntwo\n\n"
    e.update_block("c", "streamed\ntext")  # programmatic: not an edit
    e.update_block("b", "new b")
    assert e.block_text("c") == "streamed\ntext" and edited == []
    e.goto_block("b")
    e.moveCursor(e.textCursor().MoveOperation.EndOfBlock)
    QTest.keyClicks(e, " more")
    QTest.keyClick(e, Qt.Key.Key_Return)  # a new line belongs to the block it was made in
    QTest.keyClicks(e, "third")
    e.flush_edits()
    assert edited == [("b", "new b more\nthird")]
    assert e.block_ids() == ["a", "b", "c"] and e.block_text("a") == "# Title"


def test_typing_into_a_block_that_is_still_streaming_keeps_the_typing(qtbot):
    from app.core.record import events as ev
    from app.core.document.regions import Region
    from app.gui.review_pane import ReviewPane
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("/tmp/x.pdf")
    session.current = 0
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region]))
    session.apply(ev.RegionStarted(region_id="p1-r01", page=0, task="text", engine="t"))
    session.apply(ev.TokensCommitted(region_id="p1-r01", step=0, tokens=[1], text="Hel", ms=1))
    pane = ReviewPane(session)
    qtbot.addWidget(pane)
    pane.show_document()
    pane.editor.goto_block("p1-r01")
    pane.editor.moveCursor(pane.editor.textCursor().MoveOperation.EndOfBlock)
    QTest.keyClicks(pane.editor, " mine")  # not yet reported (the edit timer has not fired)
    change = session.apply(ev.TokensCommitted(region_id="p1-r01", step=1, tokens=[2], text="lo", ms=1))
    pane.refresh_blocks(change.blocks)
    assert pane.editor.block_text("p1-r01") == "Hel mine"
    assert work.blocks["p1-r01"].edited
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello"))
    assert work.blocks["p1-r01"].markdown == "Hel mine" and work.blocks["p1-r01"].pending_ocr == "Hello"
