"""The preview's redraw pace (app.gui.preview): every block streamed in is shown within a quarter of a second on a
short document, and a long document's costly redraws are spaced out to ten times their cost, so laying out the whole
document again never takes most of the time the reader has."""
from __future__ import annotations


def test_redraws_follow_the_blocks_and_space_out_when_they_cost(qtbot):
    from app.gui.preview import COST_FACTOR, MIN_INTERVAL_MS, Preview

    preview = Preview()
    qtbot.addWidget(preview)
    preview.set_blocks([("p1-r01", "First paragraph."), ("p1-r02", "| a | b |\n|---|---|\n| 1 | 2 |")])
    assert preview._timer.interval() == MIN_INTERVAL_MS
    qtbot.waitUntil(lambda: preview.renders == 1, timeout=10_000)
    assert "First paragraph." in preview.toPlainText() and preview.render_seconds > 0
    preview.render_seconds = 0.4  # what a 300-page document's redraw costs on a slow machine
    preview.set_blocks([("p1-r01", "First paragraph, read again.")])
    assert preview._timer.interval() == int(COST_FACTOR * 1000 * 0.4) > MIN_INTERVAL_MS
    preview.show_block("p1-r01")  # a person asking for a block is not made to wait
    assert preview.renders == 2 and "read again" in preview.toPlainText()
