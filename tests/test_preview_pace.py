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


def test_a_long_documents_pictures_are_decoded_only_where_they_are_shown(qtbot):
    """Every picture of a 300-page document decoded at once held about 0.35 MB each in the window for the whole
    session (and a redraw read them all from disk): each <img> now says its size, so only painted ones load."""
    from PySide6.QtGui import QImage

    from app.core.base.paths import user_data_dir
    from app.gui.preview import Preview

    folder = user_data_dir() / "pictures" / "long"
    folder.mkdir(parents=True)
    for i in range(40):
        picture = QImage(900, 300, QImage.Format.Format_RGB32)
        picture.fill(0x3366CC)
        picture.save(str(folder / f"p{i + 1}-r01.png"))
    preview = Preview()
    qtbot.addWidget(preview)
    preview.resize(500, 400)
    preview.show()
    loads: list[str] = []
    original = preview.loadResource

    def counted(kind, url):
        loads.append(url.toString())
        return original(kind, url)

    preview.loadResource = counted
    blocks = [(f"p{i + 1}-r01", f"Page {i + 1}.\n\n![Figure](pictures/long/p{i + 1}-r01.png)") for i in range(40)]
    preview.set_blocks(blocks)
    preview.render_now()
    shown = preview.grab().toImage()
    width = preview._laid_width
    assert width == preview.picture_width()  # the scroll bar the long document brought was foreseen
    assert f'width="{width}" height="{round(300 * width / 900)}"' in preview.sized_pictures(
        '<img src="pictures/long/p1-r01.png" alt="Figure">')
    assert 1 <= len(loads) <= 4, loads  # the pictures in view, not all forty
    assert any(shown.pixelColor(x, y).name() == "#3366cc" for x in range(20, 400, 20) for y in range(20, 380, 10))
    preview.verticalScrollBar().setValue(preview.verticalScrollBar().maximum())
    preview.grab()
    assert "pictures/long/p40-r01.png" in loads and len(loads) <= 8
    # a size already written, a picture that is not ours or not there: the tag is left as it is
    for tag in ('<img src="pictures/long/p1-r01.png" width="10">', '<img src="https://example.com/x.png">',
                '<img src="pictures/long/missing.png">'):
        assert preview.sized_pictures(tag) == tag
