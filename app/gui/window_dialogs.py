"""The window's interactive dialogs (file choosers, preferences, about, the keyboard shortcuts and the user
guide, the formats Export writes). Only people reach the file choosers: tests and scripts call the window
methods they end in (`open_files`, `open_trace`, `export_current`), which are what the dialogs are given, with
their parent, the settings, the banner and the prompter (which tests script): never the window."""
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
                 open_trace: Callable[[str], object], export: Callable[..., object],
                 device: Callable[[], str], prompter=None) -> None:
        self.parent, self.settings, self.banner, self.prompter = parent, settings, banner, prompter
        self.open_dialogs: dict[str, QWidget] = {}  # the Help dialogs, kept open beside the window
        self.current, self.open_files, self.open_trace = current, open_files, open_trace
        self.export, self.device = export, device

    def ask_open(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self.parent, "Open documents", "", DOCUMENT_FILTER)
        if paths:
            self.open_files(paths)

    def ask_open_trace(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.parent, "Open trace", "",
                                              "Traces (*.jsonl *.json);;All files (*)")
        if path:
            try:
                self.open_trace(path)
            except Exception as exc:  # noqa: BLE001 - a bad file is reported, not fatal
                self.banner.show_message(str(exc))

    def ask_export(self) -> None:
        work = self.current()
        if work is None:
            return
        if not self.choose_export_formats():
            return
        folder = Path(self.settings.get("export_dir") or Path(work.path).parent)
        start = folder / (Path(work.path).stem + ".md")
        formats = self.settings.get("export_formats").replace(",", ", ")
        path, _ = QFileDialog.getSaveFileName(self.parent, f"Export (writes {formats})", str(start),
                                              "Markdown (*.md)")
        if path:
            self.export(path, wait=False)  # the window stays live; the status bar or banner says how it went

    def choose_export_formats(self) -> bool:
        """Ask which formats Export writes (check boxes, from the last choice) and remember the answer in the
        settings; False when the person cancelled."""
        from app.core.pipeline.options import parse_formats

        current = list(parse_formats(self.settings.get("export_formats")))
        chosen = self.prompter.choose_formats(current) if self.prompter is not None else current
        if not chosen:
            return False
        self.settings.set("export_formats", ",".join(chosen))
        return True

    def show_shortcuts(self) -> QWidget:
        from app.gui.help_dialogs import ShortcutsDialog, shortcut_rows

        return self._keep("shortcuts", ShortcutsDialog(shortcut_rows(self.parent), self.parent))

    def show_guide(self) -> QWidget:
        from app.gui.help_dialogs import GuideDialog

        return self._keep("guide", GuideDialog(self.parent))

    def _keep(self, key: str, dialog: QWidget) -> QWidget:
        old = self.open_dialogs.pop(key, None)
        if old is not None:
            old.close()
        self.open_dialogs[key] = dialog
        dialog.show()  # beside the window, not modal: a person reads it while trying the keys
        return dialog

    def show_preferences(self) -> None:
        from app.gui.preferences import PreferencesDialog

        PreferencesDialog(self.settings, self.parent).exec()

    def show_about(self) -> None:
        from app.gui.actions import shortcut_table
        from app.gui.about import show_about

        show_about(self.parent, self.device(), shortcut_table())
