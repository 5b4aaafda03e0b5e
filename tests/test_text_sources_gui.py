"""The block bar says where a block's text came from: the PDF's own text layer or OCR."""
from __future__ import annotations

from app.core.document.regions import Region, record_result
from app.core.review.document import Block


def test_the_block_bar_names_the_text_source(qtbot):
    from app.gui.block_bar import BlockBar

    bar = BlockBar()
    qtbot.addWidget(bar)
    layer = Region("p1-r01", 0, (0, 0, 10, 10), "text", "text", 0)
    record_result(layer, "Exact text", {"engine": "text-layer", "text_source": "text-layer"}, cancelled=False,
                  engine="text-layer")
    bar.show_block(Block(layer, status="done"))
    assert "from the text layer" in bar.title.text()
    ocr = Region("p1-r02", 0, (0, 0, 10, 10), "text", "text", 1)
    record_result(ocr, "Read text", {"engine": "classic"}, cancelled=False, engine="classic")
    bar.show_block(Block(ocr, status="done"))
    assert "OCR" in bar.title.text() and "text layer" not in bar.title.text()
    bar.show_block(Block(Region("p1-r03", 0, (0, 0, 10, 10), "image", "picture", 2), status="skipped"))
    assert "OCR" not in bar.title.text()


def test_the_text_layer_policy_is_one_switch_away_in_the_window(qtbot):
    """The window compares by default (it exists to watch the OCR models); Preferences → Decoding switches it."""
    from PySide6.QtWidgets import QComboBox

    from app.gui.engine_bar import EngineBar
    from app.gui.preferences import PreferencesDialog
    from app.gui.settings import Settings

    s = Settings()
    bar = EngineBar(s)
    qtbot.addWidget(bar)
    assert bar.pipeline_options().text_layer == "compare"
    dialog = PreferencesDialog(s)
    qtbot.addWidget(dialog)
    editor = dialog.editors["text_layer"]
    assert isinstance(editor, QComboBox)
    editor.setCurrentIndex(editor.findText("prefer") if editor.findText("prefer") >= 0 else editor.findData("prefer"))
    dialog.accept()
    assert s.get("text_layer") == "prefer" and bar.pipeline_options().text_layer == "prefer"
