"""The window's interactive dialogs (file choosers, preferences, about). Only people reach these: tests and
scripts call the window methods they end in (`open_files`, `open_trace`, `export_current`)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from app.core.document import DOCUMENT_SUFFIXES

DOCUMENT_FILTER = "Documents (" + " ".join(f"*{s}" for s in sorted(DOCUMENT_SUFFIXES)) + ")"


class WindowDialogs:
    def __init__(self, window) -> None:
        self.window = window

    def ask_open(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.window, "Open documents", "", DOCUMENT_FILTER)
        if paths:
            self.window.open_files(paths)

    def ask_open_trace(self) -> None:
        w = self.window
        path, _ = QFileDialog.getOpenFileName(w, "Open trace", "", "Traces (*.jsonl *.json);;All files (*)")
        if path:
            try:
                w.open_trace(path)
            except Exception as exc:  # noqa: BLE001 - a bad file is reported, not fatal
                w.banner.show_message(str(exc))

    def ask_export(self) -> None:
        w = self.window
        if w.work is None:
            return
        folder = Path(w.settings.get("export_dir") or Path(w.work.path).parent)
        start = folder / (Path(w.work.path).stem + ".md")
        formats = w.settings.get("export_formats").replace(",", ", ")
        path, _ = QFileDialog.getSaveFileName(w, f"Export (writes {formats}: Preferences → Files)", str(start),
                                              "Markdown (*.md)")
        if path:
            w.export_current(path, wait=False)  # the window stays live; the status bar or banner says how it went

    def show_preferences(self) -> None:
        from app.gui.preferences import PreferencesDialog

        PreferencesDialog(self.window.settings, self.window).exec()

    def show_about(self) -> None:
        from app.gui.actions import shortcut_table
        from app.gui.about import show_about

        show_about(self.window, self.window.decoder.device, shortcut_table())
