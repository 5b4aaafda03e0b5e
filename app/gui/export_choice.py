"""Which formats Export writes: a dialog with one check box per format of `convert --formats`
(app.core.pipeline.options.FORMATS), ticked as the settings say (`export_formats`, Preferences → Files). The
window asks it through the Prompter (key "export_formats") before the file chooser, and keeps the choice in
the settings, so the next Export starts from it.

What must never live here: writing (app.gui.export, the one writer in core), the settings registry.
"""
from __future__ import annotations

from typing import Sequence

from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from app.core.pipeline.options import FORMATS
from app.core.pipeline.output import SUFFIXES

TITLES = {"md": "Markdown", "json": "JSON (blocks, boxes, statistics)", "html": "HTML",
          "pdf": "Searchable PDF", "docx": "Word", "xlsx": "Excel (the tables)", "alto": "ALTO XML",
          "hocr": "hOCR", "docling": "Docling JSON"}


class ExportFormatsDialog(QDialog):
    def __init__(self, chosen: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel("Write these formats (the choice is remembered):"))
        grid = QGridLayout()
        self.boxes: dict[str, QCheckBox] = {}
        for n, fmt in enumerate(FORMATS):
            box = QCheckBox(f"{TITLES.get(fmt, fmt)}  ({SUFFIXES[fmt]})")
            box.setObjectName(f"format_{fmt}")
            box.setChecked(fmt in chosen)
            box.toggled.connect(self._enable)
            grid.addWidget(box, n // 2, n % 2)
            self.boxes[fmt] = box
        lay.addLayout(grid)
        ok, cancel = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel
        self.buttons = QDialogButtonBox(ok | cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self._enable()

    def chosen(self) -> list[str]:
        return [f for f in FORMATS if self.boxes[f].isChecked()]

    def _enable(self, _checked: bool = False) -> None:  # nothing ticked: nothing to export
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.chosen()))


def ask_formats(parent: QWidget | None, chosen: Sequence[str]) -> list[str] | None:
    """The person's choice, or None when they cancelled."""
    dialog = ExportFormatsDialog(chosen, parent)
    return dialog.chosen() if dialog.exec() == QDialog.DialogCode.Accepted else None
