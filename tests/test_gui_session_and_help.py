"""What a new user expects of the window (the real window, offscreen): a session saved, the window closed, a new
one opens it with the edits, the layout, the review marks and the undo history back; Help lists the window's
real shortcuts and shows the user guide with nothing fetched or run; Export asks which formats and remembers;
the page range says how many pages will be read; the sample's table read by the engine has its header row in
the grid editor."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

SCREEN = (780, 560)  # within the offscreen platform's 800×600 screen, so a restored geometry is not clamped


def _window(qtbot, size=(1280, 800)):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    return w


def _read(qtbot, w, pdf, events):
    w.engine_bar.set_engine("classic")
    w.open_files([str(pdf)], run=False)
    qtbot.waitUntil(lambda: bool(w.work and w.work.page_sizes), timeout=20_000)
    for e in events:
        w.handle_event(e)
    w.run_presenter.finished(0, "")
    w.redraw()
    assert w.work.summary().endswith("blocks")


def test_a_saved_session_opens_in_a_new_window_with_edits_layout_review_and_undo(qtbot, page_events,
                                                                                 tmp_path):
    pdf, events = page_events
    first = _window(qtbot, SCREEN)
    _read(qtbot, first, pdf, events)
    flow = first.flow
    flow.draw(0, (300, 500, 500, 540))  # a layout step: a region drawn
    assert "p1-u01" in first.work.blocks
    texts = [b for b in first.work.layout_blocks(0) if b.region.task == "text" and b.markdown]
    edited, reviewed = texts[0].id, texts[1].id
    before = first.work.blocks[edited].markdown
    flow.set_text(first.work, edited, "Edited by a person.")  # what the editor does on a committed edit
    flow.text_edited(edited, before, "Edited by a person.")
    first.select_region(reviewed)
    flow.mark_reviewed()
    assert first.work.blocks[reviewed].reviewed and flow.undo_stack.count() == 2
    first.views_dock.hide()  # the person's layout
    first.splitter.setSizes([240, 330, 200])
    sizes = first.splitter.sizes()

    saved = first.sessions.save(tmp_path / "work")
    assert saved == tmp_path / "work.scriptorium" and saved.is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # written atomically
    payload = json.loads(saved.read_text(encoding="utf-8"))
    assert payload["format"] == "scriptorium-session" and len(payload["undo"]) == 2
    first.close()

    second = _window(qtbot, SCREEN)
    second.views_dock.show()  # a different layout before the session is opened
    second.splitter.setSizes([190, 290, 290])
    assert second.sessions.open(saved)
    qtbot.wait(50)
    assert second.windowTitle().startswith("work")
    work = second.work
    assert Path(work.path) == Path(pdf) and "p1-u01" in work.blocks
    assert work.blocks[edited].markdown == "Edited by a person." and work.blocks[edited].edited
    assert work.blocks[reviewed].reviewed
    assert not second.views_dock.isVisible()
    panes = second.splitter.sizes()
    assert all(abs(a - b) <= 2 for a, b in zip(panes, sizes)), (panes, sizes)
    stack = second.flow.undo_stack
    assert stack.count() == 2 and stack.undoText() == f"Edit the text of {edited}"
    second.flow.undo()  # the text edit made before saving, undone in the new window
    assert second.work.blocks[edited].markdown == before
    second.flow.undo()  # then the drawn region
    assert "p1-u01" not in second.work.blocks
    second.flow.redo()
    assert "p1-u01" in second.work.blocks

    broken = tmp_path / "broken.scriptorium"
    broken.write_text('{"format": "scriptorium-session", "version": 1, "state": {"documents": 3}}')
    assert not second.sessions.open(broken)  # refused in one line; the work stays
    assert "broken.scriptorium" in second.banner.text and "p1-u01" in second.work.blocks
    payload["undo"][1] = {"kind": "text", "document": str(pdf)}  # a step of the wrong shape: history stops there
    saved.write_text(json.dumps(payload), encoding="utf-8")
    assert second.sessions.open(saved) and second.flow.undo_stack.count() == 1


def test_help_lists_the_windows_real_shortcuts(qtbot):
    w = _window(qtbot)
    w.actions.find.setShortcut("Ctrl+Alt+F")  # read from the QAction itself, not from a table beside it
    dialog = w.dialogs.show_shortcuts()
    table = dialog.table
    rows = [tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())]
    assert ("File", "Save session", "Ctrl+S") in rows
    assert ("Edit", "Find in the document", "Ctrl+Alt+F") in rows
    assert ("Help", "Keyboard shortcuts", "Ctrl+/") in rows
    from PySide6.QtGui import QKeySequence

    listed = {title: keys.split(", ") for _, title, keys in rows}
    for name, action in vars(w.actions).items():  # every action's every key, under its own title
        if hasattr(action, "shortcuts") and action.shortcuts():
            title = action.text().replace("&", "").rstrip("…").strip()
            keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
            assert listed.get(title) == keys, (name, listed.get(title), keys)
    dialog.filter.setText("undo")
    shown = [r for r in range(table.rowCount()) if not table.isRowHidden(r)]
    assert shown and all("undo" in table.item(r, 1).text().lower() for r in shown)


def test_the_user_guide_is_shown_from_the_docs_with_nothing_run_or_fetched(qtbot):
    from PySide6.QtCore import QUrl

    from app.gui.help_dialogs import GuideBrowser, safe_html

    w = _window(qtbot)
    guide = w.dialogs.show_guide().browser
    assert guide.shown.name == "user-guide.md" and "Using the window" in guide.toPlainText()
    guide.follow(QUrl("decoding-debugger.md"))  # a link between the docs
    assert guide.shown.name == "decoding-debugger.md"
    guide.follow(QUrl("../README.md"))  # outside docs/: not followed
    assert guide.shown.name == "decoding-debugger.md"
    html = safe_html('Hi <script>alert(1)</script><img src="http://example.com/x.png" onerror="steal()">'
                     '<a href="javascript:evil()">x</a><iframe src="http://example.com"></iframe>')
    assert not any(word in html for word in ("script", "onerror", "javascript:", "iframe"))
    browser = GuideBrowser()
    browser.show_doc()
    browser.setHtml('<img src="https://example.com/tracker.png"><img src="file:///etc/hostname">')
    browser.toHtml()
    assert browser.loadResource(2, QUrl("https://example.com/tracker.png")) is None
    assert browser.loadResource(2, QUrl("file:///etc/hostname")) is None
    assert "https://example.com/tracker.png" in browser.refused


def test_export_asks_which_formats_and_remembers_the_choice(qtbot, page_events, tmp_path):
    from PySide6.QtWidgets import QDialogButtonBox

    from app.gui.export_choice import ExportFormatsDialog

    pdf, events = page_events
    w = _window(qtbot)
    _read(qtbot, w, pdf, events)
    w.prompter.answers["export_formats"] = [["md", "docx"]]  # (one answer) the person ticks Markdown, Word
    assert w.dialogs.choose_export_formats()
    assert w.settings.get("export_formats") == "md,docx"
    written = w.export_current(tmp_path / "out" / "report.md")
    assert sorted(p.name for p in written) == ["report.docx", "report.md"]
    dialog = ExportFormatsDialog(["md", "docx"], w)  # the next time, it starts from the choice
    assert [f for f, box in dialog.boxes.items() if box.isChecked()] == ["md", "docx"]
    for box in dialog.boxes.values():
        box.setChecked(False)
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()  # nothing to write
    w.prompter.answers["export_formats"] = [None]  # cancelled: nothing changes
    assert not w.dialogs.choose_export_formats() and w.settings.get("export_formats") == "md,docx"


def test_the_page_range_says_how_many_pages_will_be_read(qtbot, tmp_path):
    from app.core.document.sample_documents import make_sample_pdf

    pdf = make_sample_pdf(tmp_path / "three.pdf", pages=3)
    w = _window(qtbot)
    w.open_files([str(pdf)], run=False)
    qtbot.waitUntil(lambda: bool(w.work and w.work.page_count == 3 and w.page_range.count_label.text()),
                    timeout=20_000)
    assert w.page_range.count_label.text() == "Reads all 3 pages"
    assert w.page_range.set_range("2-3")
    assert w.page_range.count_label.text() == "Reads 2 of 3 pages"
    w.page_range.toggle_page(2)
    assert w.page_range.count_label.text() == "Reads 1 of 3 pages"


@pytest.mark.slow
def test_the_samples_table_read_by_the_engine_opens_with_one_header_row(qtbot, tmp_path):
    from app.core.document.sample_documents import make_sample_pdf
    from app.core.pipeline import Pipeline, PipelineOptions

    pdf = make_sample_pdf(tmp_path / "sample.pdf", pages=1)
    events: list = []
    pipe = Pipeline(PipelineOptions(), emit=events.append)  # the window's default: the engine reads the table
    try:
        pipe.run(pdf)
    finally:
        pipe.close()
    w = _window(qtbot)
    w.open_files([str(pdf)], run=False)
    qtbot.waitUntil(lambda: bool(w.work and w.work.page_sizes), timeout=20_000)
    for e in events:
        w.handle_event(e)
    w.run_presenter.finished(0, "")
    (table,) = [b for b in w.work.layout_blocks(0) if b.region.task == "table"]
    assert table.region.extra["stats"].get("text_source") != "text-layer"
    editor = w.tables.open(table.id)
    assert editor.header.value() == 1  # "Header rows: 1", the first row shaded as the header
    assert [editor.table.item(0, c).text() for c in range(3)] == ["Quarter", "Revenue", "Growth"]
