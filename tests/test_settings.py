"""The settings registry: typed values with defaults, coercion of what an INI file gives back, persistence."""
from __future__ import annotations

from app.gui.settings import OPTIONS, Option, Settings


def test_defaults_types_and_persistence(qapp, tmp_path):
    path = str(tmp_path / "s.ini")
    s = Settings(path)
    for key, option in OPTIONS.items():
        assert s.get(key) == option.default, key
    changed = []
    s.changed.connect(lambda k, v: changed.append((k, v)))
    s.set("render_dpi", "200")
    s.set("show_order", "false")
    s.set("device", "tpu")  # not a choice: falls back to the default
    s.set("autosave_seconds", 0.0)  # clamped to the minimum
    again = Settings(path)
    assert again.get("render_dpi") == 200 and isinstance(again.get("render_dpi"), int)
    assert again.get("show_order") is False
    assert again.get("device") == "auto"
    assert again.get("autosave_seconds") == OPTIONS["autosave_seconds"].minimum
    assert ("render_dpi", 200) in changed


def test_recent_files_are_most_recent_first_and_bounded(qapp, tmp_path):
    s = Settings(str(tmp_path / "s.ini"))
    s.set("recent_limit", 3)
    for name in ("a", "b", "c", "a", "d"):
        s.add_recent(f"/docs/{name}.pdf")
    assert Settings(str(tmp_path / "s.ini")).get("recent_files") == ["/docs/d.pdf", "/docs/a.pdf", "/docs/c.pdf"]
    s.add_recent("/docs/only.pdf")
    s.set("recent_limit", 1)
    s.add_recent("/docs/only.pdf")
    assert s.get("recent_files") == ["/docs/only.pdf"]  # a one-element list survives the INI round trip


def test_coerce_rejects_garbage():
    o = Option("n", 5, "n", minimum=1, maximum=9)
    assert o.coerce("x") == 5 and o.coerce("12") == 9 and o.coerce(None) == 5


def test_preferences_page_is_generated_from_the_registry(qtbot, tmp_path):
    from app.gui.about import about_html
    from app.gui.preferences import PreferencesDialog

    s = Settings(str(tmp_path / "s.ini"))
    dialog = PreferencesDialog(s)
    qtbot.addWidget(dialog)
    shown = set(dialog.editors)
    assert shown == set(OPTIONS) - PreferencesDialog.HIDDEN
    dialog.editors["theme"].setCurrentText("dark")
    dialog.editors["show_order"].setChecked(False)
    dialog.accept()
    assert s.get("theme") == "dark" and s.get("show_order") is False
    about = about_html("cuda:0", [("Open", "Ctrl+O")])
    assert "cuda:0" in about and "PySide6" in about and "Ctrl+O" in about
