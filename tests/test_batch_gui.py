"""Preferences → Decoding → "Regions read together": the app reads one region at a time unless a person asks for
the engine's batch (its rounds interleave in the Decoding views); the choice reaches the pipeline's options."""
from __future__ import annotations


def test_the_batch_setting_reaches_the_pipeline(qtbot):
    from PySide6.QtWidgets import QSpinBox

    from app.gui.engine_bar import EngineBar
    from app.gui.preferences import PreferencesDialog
    from app.gui.settings import Settings

    s = Settings()
    bar = EngineBar(s)
    qtbot.addWidget(bar)
    assert bar.pipeline_options().batch == 1  # the app's default: one region at a time
    dialog = PreferencesDialog(s)
    qtbot.addWidget(dialog)
    editor = dialog.editors["batch"]
    assert isinstance(editor, QSpinBox) and editor.minimum() == 0
    editor.setValue(0)
    dialog.accept()
    assert s.get("batch") == 0 and bar.pipeline_options().batch == 0  # 0: the engine's own batch size
