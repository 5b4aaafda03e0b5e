"""Banners that offer what to do: an engine that cannot load says so with "Choose folder…" and "Use classic"
(which reads the document at once), a long message folds behind "Details"; Preferences' model folder has Browse."""
from __future__ import annotations



def _page(tmp_path):
    from app.core.document.sample_documents import make_sample_pdf

    return make_sample_pdf(tmp_path / "report.pdf", pages=1)


def test_an_engine_without_weights_offers_choose_folder_and_use_classic_which_reads_now(qtbot, tmp_path):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.engine_bar.set_engine("gravity")
    w.engine_bar.set_model_path(str(tmp_path / "empty-model-folder"))
    (tmp_path / "empty-model-folder").mkdir()
    w.open_files([str(_page(tmp_path))], run=True)
    qtbot.waitUntil(lambda: not w.decoder.running and w.banner.text != "", timeout=60_000)
    assert w.banner.action_titles == ["Choose folder…", "Use classic"] and "gravity" in w.banner.text
    use_classic = w.banner.buttons[1]
    use_classic.click()
    assert w.engine_bar.engine_name == "classic" and w.banner.isHidden()
    qtbot.waitUntil(lambda: not w.decoder.running and w.work.summary().endswith("blocks"), timeout=60_000)
    assert sum(b.status == "done" for b in w.work.blocks.values()) > 3


def test_a_long_message_folds_behind_details(qtbot):
    from app.gui.banner import Banner

    banner = Banner()
    qtbot.addWidget(banner)
    long = "The model folder lacks its weights. " + "model.safetensors is missing; " * 12
    banner.show_message(long)
    assert banner.label.text() == "The model folder lacks its weights." and banner.details_button.isVisibleTo(banner)
    banner.details_button.click()
    assert banner.label.text() == long and banner.text == long


def test_preferences_model_folder_has_browse(qtbot):
    from app.gui.folder_field import FolderField
    from app.gui.preferences import PreferencesDialog
    from app.gui.settings import Settings

    dialog = PreferencesDialog(Settings())
    qtbot.addWidget(dialog)
    field = dialog.editors["model_path"]
    assert isinstance(field, FolderField) and field.browse.text() == "Browse…"
    field.line.setText("/models/gravity")
    assert dialog.values()["model_path"] == "/models/gravity"
