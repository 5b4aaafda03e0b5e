"""The window's interactive dialogs (file choosers, preferences, about). Only people reach these: tests and
scripts call the window methods they end in (`open_files`, `open_trace`, `export_current`), which are what the
dialogs are given, with their parent, the settings and the banner: never the window."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtWidgets import QFileDialog, QWidget

from app.core.document import DOCUMENT_SUFFIXES

if TYPE_CHECKING:  # pragma: no cover
    from app.core.review.document import DocumentWork
    from app.gui.banner import Banner
    from app.gui.settings import Settings

DOCUMENT_FILTER = "Documents (" + " ".join(f"*{s}" for s in sorted(DOCUMENT_SUFFIXES)) + ")"


class WindowDialogs:
    def __init__(self, parent: QWidget, settings: Settings, banner: Banner, *,
                 current: Callable[[], DocumentWork | None], open_files: Callable[[list[str]], object],
                 open_trace: Callable[[str], object], export: Callable[..., object], device: Callable[[], str]) -> None:
        self.parent, self.settings, self.banner = parent, settings, banner
        self.current, self.open_files, self.open_trace, self.export, self.device = (current, open_files, open_trace,
                                                                                    export, device)

    def ask_open(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.parent, "Open documents", "", DOCUMENT_FILTER)
        if paths:
            self.open_files(paths)

    def ask_open_trace(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.parent, "Open trace", "", "Traces (*.jsonl *.json);;All files (*)")
        if path:
            try:
                self.open_trace(path)
            except Exception as exc:  # noqa: BLE001 - a bad file is reported, not fatal
                self.banner.show_message(str(exc))

    def ask_export(self) -> None:
        work = self.current()
        if work is None:
            return
        folder = Path(self.settings.get("export_dir") or Path(work.path).parent)
        start = folder / (Path(work.path).stem + ".md")
        formats = self.settings.get("export_formats").replace(",", ", ")
        path, _ = QFileDialog.getSaveFileName(self.parent, f"Export (writes {formats}: Preferences → Files)", str(start),
                                              "Markdown (*.md)")
        if path:
            self.export(path, wait=False)  # the window stays live; the status bar or banner says how it went

    def show_preferences(self) -> None:
        from app.gui.preferences import PreferencesDialog

        PreferencesDialog(self.settings, self.parent).exec()

    def show_about(self) -> None:
        from app.gui.actions import shortcut_table
        from app.gui.about import show_about

        show_about(self.parent, self.device(), shortcut_table())
