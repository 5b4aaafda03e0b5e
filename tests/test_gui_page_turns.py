"""A sideways scan in the real window (offscreen, classic OCR): the run turns it the right way up, the page view
shows the page as read (landscape, with a "Read turned 90°" note) and the regions on it; rotate right (Ctrl+Shift+R)
turns it a quarter more and reads it again, and the person's turn is kept with the work. Screenshot:
tests/artifacts/page_turned.png."""
from __future__ import annotations

import json

import pymupdf
import pytest
from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from rapidfuzz.distance import Levenshtein

TEXT = ("Orientation test page. The quick brown fox jumps over the lazy dog while the scanner reads every line. "
        "Pages fed sideways must still be read the right way up.")


@pytest.fixture
def sideways(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=420, height=300)
    page.insert_textbox(pymupdf.Rect(30, 30, 390, 280), TEXT, fontsize=13, fontname="helv")
    pix = page.get_pixmap(dpi=150)
    path = tmp_path / "sideways.png"
    Image.frombytes("RGB", (pix.width, pix.height), pix.samples).rotate(90, expand=True).save(path, dpi=(150, 150))
    return path


def wait_run(qtbot, w):
    qtbot.waitUntil(lambda: not w.decoder.running, timeout=180_000)
    qtbot.wait(50)
    w.redraw()


def test_a_sideways_scan_is_shown_and_read_turned_and_a_person_can_turn_it_again(qtbot, sideways, artifacts_dir):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.engine_bar.set_engine("classic")
    w.show()
    qtbot.waitExposed(w)
    w.open_files([str(sideways)], run=False)
    qtbot.waitUntil(lambda: bool(w.work.page_sizes), timeout=20_000)
    width, height = w.work.page_sizes[0]
    assert height > width  # as scanned
    w.run_document()
    wait_run(qtbot, w)
    frame = w.work.pages[0]
    assert frame.rotation == 90 and (frame.width_pt, frame.height_pt) == pytest.approx((height, width))
    first = w.work.markdown()
    assert "quick brown fox" in first
    assert w.work.page_sizes[0] == pytest.approx((height, width))  # the view's sheet is the page as read
    assert w.turns.note.isVisible() and w.turns.note.text() == "Read turned 90°"
    pix = w.page_view._pixmap
    qtbot.waitUntil(lambda: not pix.pixmap().isNull() and pix.pixmap().width() > pix.pixmap().height(),
                    timeout=20_000)
    rect = w.page_view.region_items[w.work.layout_blocks(0)[0].id].rect()
    assert rect.right() <= height + 1 and rect.bottom() <= width + 1  # regions lie on the page as read
    w.grab().save(str(artifacts_dir / "page_turned.png"))

    w.page_view.setFocus()
    QTest.keyClick(w.page_view, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert w.work.person_turns == {0: 180}
    wait_run(qtbot, w)
    assert w.work.pages[0].rotation == 180 and w.turns.note.text() == "Read turned 180° (by you)"
    assert Levenshtein.normalized_distance(w.work.markdown(), first) > 0.3  # upside down now, as the person asked
    state = json.loads(json.dumps(w.session.to_dict()))
    from app.core.review.session import Session

    again = Session()
    again.load_dict(state)
    assert again.documents[0].person_turns == {0: 180} and again.documents[0].pages[0].rotation == 180
    w.turns.rotate_left()  # and back: the right way up again
    wait_run(qtbot, w)
    assert w.work.pages[0].rotation == 90 and Levenshtein.normalized_distance(w.work.markdown(), first) <= 0.05
