"""Region editing and the keyboard review flow on the real window (offscreen, the classic engine on the bundled
sample's first page): drag a box edge → the region's box changes → R reads it again with the new box → Ctrl+Z
restores it; draw, delete, relabel; a re-run of the page keeps the person's regions; J/K move the selection; N
jumps to a low-confidence block; Enter marks it reviewed and the export says so. Screenshots in tests/artifacts/."""
from __future__ import annotations

import json
import math
import shutil

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox

from app.core.record import events as ev
from window_kit import wait_window_run

LEFT, NOMOD = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier


@pytest.fixture
def window(open_window, tmp_path):
    from app.core.base.paths import sample_document

    pdf = tmp_path / "report.pdf"
    shutil.copyfile(sample_document(), pdf)
    return open_window(pdf, read=[0])


@pytest.fixture
def reviewed_window(open_window, page_events):
    """The window after that run, its events applied through the window's one entry point (as a live run's are)."""
    pdf, events = page_events
    w = open_window(pdf, engine="")
    for e in events:
        w.handle_event(e)
    w.run_presenter.finished(0, "")  # what the lane says after a run's last event
    assert w.work.summary().endswith("blocks") and w.documents.item(0).text().endswith("blocks")
    return w


def wait_run(qtbot, w, timeout=90_000):
    wait_window_run(qtbot, w, timeout)


def drag(w, start, end) -> None:
    vp = w.page_view.viewport()
    QTest.mousePress(vp, LEFT, NOMOD, start)
    for k in range(1, 6):
        QTest.mouseMove(vp, start + (end - start) * k / 5)
    QTest.mouseRelease(vp, LEFT, NOMOD, end)


def key(w, k, mod=NOMOD) -> None:
    QTest.keyClick(w.page_view, k, mod)


def review_what_waits(w) -> None:
    """The person reviews what the run itself left to review — the sample's formula, which the classic
    recogniser read from the image with no LaTeX — with N and Enter, as in the window."""
    waiting = w.flow.needs_review()
    assert [w.work.blocks[rid].region.task for rid in waiting] == ["formula"]
    for rid in waiting:
        key(w, Qt.Key.Key_N)
        assert w.page_view.selected_id == rid and "not read as LaTeX" in w.statusBar().currentMessage()
        key(w, Qt.Key.Key_Return)
    assert w.flow.needs_review() == []


def view_point(w, x_pt: float, y_pt: float) -> QPoint:
    from PySide6.QtCore import QPointF

    return w.page_view.mapFromScene(QPointF(x_pt, y_pt))


def test_a_dragged_edge_is_read_again_with_the_new_box_and_undo_restores_it(qtbot, window, artifacts_dir):
    w = window
    # the sample's table box misses the table's right part: widen it
    block = next(b for b in w.work.layout_blocks(0) if b.region.task == "table" and b.status == "done")
    rid, (x0, y0, x1, y1) = block.id, block.region.box_pt
    w.page_view.set_scale(1.0)
    w.select_region(rid)
    w.page_view.setFocus()
    w.page_view.region_center(rid)
    start = view_point(w, x1, (y0 + y1) / 2)  # the right edge, grabbed
    drag(w, start, start + QPoint(75, 0))
    region = w.work.blocks[rid].region
    assert region.box_pt[2] == pytest.approx(x1 + 75, abs=1.5) and region.box_pt[:2] == (x0, y0)
    assert "user_fixed" in region.flags and w.work.pages[0].layout == "person"
    new_box = region.box_pt
    assert w.page_view.region_items[rid].rect().right() == pytest.approx(new_box[2])

    seen: list = []
    w.decoder.events.connect(seen.extend)
    key(w, Qt.Key.Key_R)  # read again, with the box as it is now
    wait_run(qtbot, w)
    assert [e.region_id for e in seen if isinstance(e, ev.RegionStarted)] == [rid]
    announced = next(e for e in seen if isinstance(e, ev.LayoutDone))
    assert next(r for r in announced.regions if r["id"] == rid)["box_pt"] == list(new_box)  # the crop's box
    assert w.work.blocks[rid].status == "done" and w.work.blocks[rid].region.box_pt == new_box
    w.grab().save(str(artifacts_dir / "region_editing.png"))

    assert w.actions.undo.isEnabled() and w.actions.undo.text() == f"&Undo Move or resize {rid}"
    key(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo: the layout's box again
    assert w.work.blocks[rid].region.box_pt == (x0, y0, x1, y1)
    key(w, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)  # redo
    assert w.work.blocks[rid].region.box_pt == new_box


def test_draw_relabel_delete_and_a_page_rerun_keeps_the_persons_regions(qtbot, window, tmp_path):
    w = window
    # classic OCR has no rounds to show: the Decoding dock made room; its toolbar toggle brings it back
    toggle = w.views_dock.toggleViewAction()
    assert not w.views_dock.isVisible() and toggle in w.actions.toolbar.actions()
    toggle.trigger()
    assert w.views_dock.isVisible() and w.dock_policy.chosen_by_person
    w.page_view.set_scale(1.0)
    w.page_view.setFocus()  # the person works on the page
    before = {b.id for b in w.work.layout_blocks(0)}
    above = sum(1 for b in w.work.layout_blocks(0) if b.region.box_pt[1] <= 500)
    # draw a region (a person adds one the layout missed)
    key(w, Qt.Key.Key_D)
    assert w.page_view.gestures.draw_mode
    w.page_view.ensureVisible(300, 500, 200, 40)
    drag(w, view_point(w, 300, 500), view_point(w, 500, 540))
    new = [b for b in w.work.layout_blocks(0) if b.id not in before]
    assert len(new) == 1 and new[0].id == "p1-u01" and not w.page_view.gestures.draw_mode
    drawn = new[0].region
    assert drawn.box_pt == pytest.approx((300, 500, 500, 540), abs=1.5) and drawn.task == "text"
    assert drawn.order == above  # in reading order where it stands

    # relabel another block as a table, then re-run the whole page: the person's layout stays and is read
    target = next(b for b in w.work.layout_blocks(0) if b.region.label == "text" and b.id != drawn.id)
    w.flow.relabel(target.id, "table")
    assert w.work.blocks[target.id].region.task == "table"
    w.rerun_page()
    wait_run(qtbot, w)
    ids = {b.id for b in w.work.layout_blocks(0)}
    assert ids == before | {"p1-u01"}
    assert w.work.blocks["p1-u01"].region.box_pt == drawn.box_pt and w.work.blocks["p1-u01"].status == "done"
    assert w.work.blocks[target.id].region.task == "table" and w.work.blocks[target.id].status == "done"

    # delete the drawn region; undo brings it back, redo removes it again
    w.select_region("p1-u01")
    key(w, Qt.Key.Key_Delete)
    assert "p1-u01" not in w.work.blocks
    w.flow.undo()
    assert "p1-u01" in w.work.blocks and w.work.blocks["p1-u01"].region.box_pt == drawn.box_pt
    w.flow.redo()
    assert "p1-u01" not in w.work.blocks
    # the journal keeps the person's layout
    from app.core.review.session import Session

    again = Session()
    again.load_dict(json.loads(json.dumps(w.session.to_dict())))
    assert again.documents[0].pages[0].layout == "person" and "p1-u01" not in again.documents[0].blocks


def test_keys_move_through_blocks_to_the_one_needing_review_and_enter_marks_it_reviewed(qtbot, reviewed_window,
                                                                                        tmp_path, artifacts_dir):
    w = reviewed_window
    order = [b.id for b in w.work.layout_blocks()]
    QTest.mouseClick(w.page_view.viewport(), LEFT, NOMOD, w.page_view.region_center(order[0]))  # a click…
    assert w.page_view.selected_id == order[0]
    key(w, Qt.Key.Key_J)  # …and the keys go on from there
    assert w.page_view.selected_id == order[1]
    key(w, Qt.Key.Key_J)
    key(w, Qt.Key.Key_K)
    assert w.page_view.selected_id == order[1] and w.page_view.hasFocus()  # the keys stay on the page
    review_what_waits(w)

    # the model was unsure of one block (an engine that reports token log-probabilities)
    unsure = [b for b in w.work.layout_blocks() if b.region.task == "text"][-1]
    w.handle_event(ev.RegionFinished(unsure.id, unsure.region.text, {"stopped": "stop"},
                                     logprobs=[math.log(0.9), math.log(0.15), math.log(0.95)]))
    w.redraw()
    assert w.flow.needs_review() == [unsure.id]
    w.refresh_documents()  # as at a run's end: the list counts it, and the "Needs review" filter keeps it
    assert "1 to review · " in w.documents.item(0).text()
    w.findChild(QCheckBox, "needs_review_filter").setChecked(True)
    assert not w.documents.item(0).isHidden()
    key(w, Qt.Key.Key_N)
    assert w.page_view.selected_id == unsure.id
    assert "low confidence" in w.statusBar().currentMessage()
    assert "15%" in w.page_view.region_items[unsure.id].badge_text() or "%" in w.page_view.region_items[
        unsure.id].badge_text()
    w.grab().save(str(artifacts_dir / "needs_review.png"))
    key(w, Qt.Key.Key_Return)
    assert w.work.blocks[unsure.id].reviewed and w.flow.needs_review() == []
    assert "to review" not in w.documents.item(0).text()
    key(w, Qt.Key.Key_N)  # nothing left to review: it says so
    assert w.statusBar().currentMessage() == "No block needs review"
    w.export_current(tmp_path / "out" / "report.md")
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    blocks = {b["id"]: b for p in data["pages"] for b in p["blocks"]}
    assert blocks[unsure.id]["reviewed"] is True and blocks[unsure.id]["confidence"]["min"] == 0.15
    assert data["review"]["reviewed"] == 2 and data["review"]["needs_review"] == 0


def test_ctrl_f_highlights_every_hit_in_the_editor_and_on_the_page(qtbot, reviewed_window):
    w = reviewed_window
    holders = [b.id for b in w.work.layout_blocks() if "region" in b.markdown.casefold()]
    assert holders
    w.page_view.setFocus()
    key(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert w.find_bar.isVisible() and w.find_bar.field.hasFocus()
    QTest.keyClicks(w.find_bar.field, "Region")
    expected = sum(w.editor.block_text(rid).casefold().count("region") for rid in w.editor.block_ids())
    assert len(w.find_bar.hits) == expected and expected >= len(holders)
    assert [t.casefold() for t in w.editor.highlighted] == ["region"] * expected  # every hit marked in the editor
    found = {rid for rid, item in w.page_view.region_items.items() if item.found}
    assert found == {rid for rid, _a, _b in w.find_bar.hits if w.work.blocks[rid].region.page == w.page_view.page}
    QTest.keyClick(w.find_bar.field, Qt.Key.Key_Return)  # the first hit: its region selected, its text selected
    rid = w.find_bar.hits[0][0]
    assert w.page_view.selected_id == rid and w.editor.textCursor().selectedText().casefold() == "region"
    QTest.keyClick(w.find_bar.field, Qt.Key.Key_Escape)
    assert not w.find_bar.isVisible() and not any(item.found for item in w.page_view.region_items.values())


def test_n_stops_at_a_block_whose_decoder_overruled_the_recogniser(qtbot, reviewed_window, artifacts_dir):
    """The built-in engine's decoder wrote a line otherwise than the recogniser read it: N goes to that block and
    the status bar names the line's two readings."""
    w = reviewed_window
    order = [b.id for b in w.work.layout_blocks()]
    block = [b for b in w.work.layout_blocks() if b.region.task == "text" and b.id != order[0]][-1]
    QTest.mouseClick(w.page_view.viewport(), LEFT, NOMOD, w.page_view.region_center(order[0]))
    review_what_waits(w)
    lines = [{"text": "the dog", "recogniser": "tbe dog", "disagrees": True, "decoder_taken": 1, "box": [0, 0, 9, 4]}]
    w.handle_event(ev.RegionFinished(block.id, block.region.text, {"stopped": "stop", "line_stats": lines,
                                                                   "disagreements": 1},
                                     logprobs=[-0.01] * 8))
    w.redraw()
    assert block.id in w.flow.needs_review()
    key(w, Qt.Key.Key_N)
    assert w.page_view.selected_id == block.id
    assert "decoder overruled the recogniser on 1 line" in w.statusBar().currentMessage()
    assert "“tbe dog”" in w.statusBar().currentMessage()
    w.grab().save(str(artifacts_dir / "needs_review_disagreement.png"))
