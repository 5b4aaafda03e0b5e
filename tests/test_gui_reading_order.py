"""Reading-order mode in the real window (offscreen, classic OCR on a two-column page): O shows arrows between the
regions; T and C reorder the page; clicking regions one after another and dragging a badge onto another region
change the Markdown order and the JSON `order`; one Ctrl+Z undoes a whole click sequence; a re-run of the page and a
crash-and-restore keep the person's order. Screenshot: tests/artifacts/reading_order.png."""
from __future__ import annotations

import json

import pymupdf
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from window_kit import wait_window_run

LEFT, NOMOD = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
WORDS = {"L": ["Apple", "Banana", "Cherry"], "R": ["Delta", "Echo", "Foxtrot"]}
COLUMNS = ["Two", "Apple", "Banana", "Cherry", "Delta", "Echo", "Foxtrot"]
ROWS = ["Two", "Apple", "Delta", "Banana", "Echo", "Cherry", "Foxtrot"]


def two_column_pdf(path):
    """A title over two columns of three paragraphs; the paragraphs of both columns start on the same lines."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(50, 50, 545, 85), "Two Column Report", fontsize=20, fontname="helv")
    for col, x in (("L", 50), ("R", 315)):
        for k, word in enumerate(WORDS[col]):
            y = 120 + k * 110
            page.insert_textbox(pymupdf.Rect(x, y, x + 230, y + 80), f"{word} paragraph starts here and goes on for "
                                f"a few more words about {word.lower()} things in this column.", fontsize=12,
                                fontname="helv")
    doc.save(str(path))
    return path


@pytest.fixture
def window(open_window, tmp_path):
    return open_window(two_column_pdf(tmp_path / "columns.pdf"), read=[0])


def wait_run(qtbot, w, timeout=90_000):
    wait_window_run(qtbot, w, timeout)


def key(w, k, mod=NOMOD) -> None:
    QTest.keyClick(w.page_view, k, mod)


def ids_by_word(w) -> dict[str, str]:
    return {b.region.text.split()[0]: b.id for b in w.work.layout_blocks(0) if b.region.text}


def markdown_order(text: str) -> list[str]:
    return sorted(COLUMNS, key=lambda word: text.find(word))


def json_order(path) -> list[str]:
    data = json.loads(path.read_text())
    blocks = sorted(data["pages"][0]["blocks"], key=lambda b: b["order"])
    return [b["text"].split()[0] for b in blocks]


def test_reading_order_by_keys_clicks_and_drag_flows_to_every_output_and_survives_rerun_and_restore(
        qtbot, window, tmp_path, artifacts_dir):
    w = window
    ids = ids_by_word(w)
    assert sorted(ids) == sorted(COLUMNS), ids  # the classic engine read every paragraph
    w.page_view.fit_page()
    w.page_view.setFocus()
    key(w, Qt.Key.Key_T)  # top to bottom: row by row, wrong for this page
    assert markdown_order(w.work.markdown()) == ROWS
    assert w.work.pages[0].layout == "person"
    key(w, Qt.Key.Key_O)  # reading-order mode: arrows from each region to the next
    assert w.order.on and w.actions.order_mode.isChecked() and w.order.arrows.isVisible()
    assert len(w.order.arrows.centres) == len(COLUMNS)
    key(w, Qt.Key.Key_C)  # by columns: the fix in one key
    assert markdown_order(w.work.markdown()) == COLUMNS
    assert markdown_order(w.editor.toPlainText()) == COLUMNS  # the editor follows at once
    rects = {rid: item.rect() for rid, item in w.page_view.region_items.items()}
    arrows = w.order.arrows.centres
    assert arrows[0] == rects[ids["Two"]].center() and arrows[1] == rects[ids["Apple"]].center()
    assert arrows[4] == rects[ids["Delta"]].center()  # from the foot of the left column to the top of the right
    qtbot.wait(100)
    w.grab().save(str(artifacts_dir / "reading_order.png"))

    # a click sequence: Delta, Echo, Foxtrot first, the rest after as they were; one undo step for all three
    depth = w.flow.undo_stack.count()
    for word in ("Delta", "Echo", "Foxtrot"):
        QTest.mouseClick(w.page_view.viewport(), LEFT, NOMOD, w.page_view.region_center(ids[word]))
    clicked = ["Delta", "Echo", "Foxtrot", "Two", "Apple", "Banana", "Cherry"]
    assert markdown_order(w.work.markdown()) == clicked
    assert w.flow.undo_stack.count() == depth + 1
    assert w.page_view.region_items[ids["Delta"]].badge_text().startswith("1")
    w.export_current(tmp_path / "out" / "columns.md")
    assert markdown_order((tmp_path / "out" / "columns.md").read_text()) == clicked
    assert json_order(tmp_path / "out" / "columns.json") == clicked
    key(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the whole sequence, undone at once
    assert markdown_order(w.work.markdown()) == COLUMNS

    # drag Foxtrot's badge onto the title: it is read first
    vp = w.page_view.viewport()
    start = w.page_view.region_center(ids["Foxtrot"])
    end = w.page_view.region_center(ids["Two"])
    QTest.mousePress(vp, LEFT, NOMOD, start)
    for k in range(1, 6):
        QTest.mouseMove(vp, start + (end - start) * k / 5)
    QTest.mouseRelease(vp, LEFT, NOMOD, end)
    dragged = ["Foxtrot", "Two", "Apple", "Banana", "Cherry", "Delta", "Echo"]
    assert markdown_order(w.work.markdown()) == dragged
    assert w.actions.undo.text() == f"&Undo Move {ids['Foxtrot']} before {ids['Two']} in reading order"
    # [ and ] move the selected region by one place
    w.select_region(ids["Apple"])
    w.page_view.setFocus()
    key(w, Qt.Key.Key_BracketLeft)
    assert markdown_order(w.work.markdown())[:3] == ["Foxtrot", "Apple", "Two"]
    key(w, Qt.Key.Key_BracketRight)
    assert markdown_order(w.work.markdown()) == dragged

    # a re-run of the page reads the person's regions in the person's order
    w.rerun_page()
    wait_run(qtbot, w)
    assert markdown_order(w.work.markdown()) == dragged
    assert all(b.status == "done" for b in w.work.layout_blocks(0))
    w.export_current(tmp_path / "again" / "columns.md")
    assert json_order(tmp_path / "again" / "columns.json") == dragged

    # a crash: the journal's state restored in a new window keeps it
    from app.gui.main_window import MainWindow

    state = json.loads(json.dumps(w.session.to_dict()))
    other = MainWindow()
    qtbot.addWidget(other)
    other.restore_state(state)
    assert markdown_order(other.work.markdown()) == dragged
    other.export_current(tmp_path / "restored" / "columns.md")
    assert markdown_order((tmp_path / "restored" / "columns.md").read_text()) == dragged
    key(w, Qt.Key.Key_O)
    assert not w.order.on and not w.order.arrows.isVisible()


def test_order_keys_are_listed_in_the_about_box():
    from app.gui.actions import shortcut_table

    keys = dict(shortcut_table())
    assert keys["Reading order mode"] == "O" and keys["Order the page by columns"] == "C"
    assert keys["Order the page top to bottom"] == "T"
    assert any("drag its badge" in gesture for title, gesture in shortcut_table())
