"""Preferences: the engine is chosen from the registry (by title, stored by name), and every group's fields line
up in one column."""
from __future__ import annotations


def test_preferences_engine_choice_and_aligned_fields(qtbot):
    from PySide6.QtWidgets import QComboBox

    from app.core.engines import ENGINES
    from app.gui.preferences import PreferencesDialog
    from app.gui.settings import Settings

    s = Settings()
    s.set("engine", "classic")
    dialog = PreferencesDialog(s)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    engine = dialog.editors["engine"]
    assert isinstance(engine, QComboBox) and engine.currentText() == ENGINES["classic"].title
    assert [engine.itemData(i) for i in range(engine.count())] == ["auto", *ENGINES]
    engine.setCurrentIndex(engine.findData("gravity"))
    values = dialog.values()
    assert values["engine"] == "gravity" and values["theme"] == s.get("theme")
    lefts = {w.mapTo(dialog, w.rect().topLeft()).x() for w in dialog.editors.values()}
    assert len(lefts) == 1, f"fields start at different x: {sorted(lefts)}"
    # each option sits under its own group's title, even when the registry lists it after another group
    form = dialog.layout().itemAt(0).layout()
    group, under = "", {}
    for row in range(form.rowCount()):
        from PySide6.QtWidgets import QFormLayout

        span = form.itemAt(row, QFormLayout.ItemRole.SpanningRole)
        field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        if span is not None:
            group = span.widget().text().replace("<b>", "").replace("</b>", "")
        elif field is not None:
            under[field.widget()] = group
    from app.gui.settings import OPTIONS

    assert all(under[w] == OPTIONS[key].group for key, w in dialog.editors.items())
    dialog.accept()
    assert s.get("engine") == "gravity"
