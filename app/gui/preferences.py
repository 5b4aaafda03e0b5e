"""Preferences, generated from the settings registry (app.gui.settings.OPTIONS), never hand-listed."""
from __future__ import annotations


from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.gui.settings import OPTIONS, Settings

class PreferencesDialog(QDialog):
    """One row per option of the registry (except internal state), grouped by `group`."""

    HIDDEN = {"recent_files", "window_geometry", "window_state", "export_dir"}

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.settings = settings
        layout = QVBoxLayout(self)
        self.editors: dict[str, QWidget] = {}
        # one form for every group (a title row per group), so the fields of all groups line up in one column
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.addLayout(form)
        seen: set[str] = set()
        order = list(dict.fromkeys(o.group for o in OPTIONS.values()))  # groups in order of first appearance
        for option in sorted(OPTIONS.values(), key=lambda o: order.index(o.group)):  # stable: registry order inside
            if option.key in self.HIDDEN:
                continue
            if option.group not in seen:
                seen.add(option.group)
                title = QLabel(f"<b>{option.group}</b>")
                title.setContentsMargins(0, 6 if len(seen) > 1 else 0, 0, 0)
                form.addRow(title)
            editor = self._editor(option, settings.get(option.key))
            self.editors[option.key] = editor
            form.addRow(option.title, editor)
        from app.gui.servers_page import add_connection_test

        add_connection_test(self, form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    @staticmethod
    def _editor(option, value) -> QWidget:
        if option.key == "engine":  # the registry's engines by title (the setting keeps the name)
            from app.core.engines import ENGINES
            from app.gui.engine_bar import AUTO_TITLE

            w = QComboBox()
            w.addItem(AUTO_TITLE, "auto")
            for spec in ENGINES.values():
                w.addItem(spec.title, spec.name)
            i = w.findData(str(value))
            if i < 0:  # a name this build does not know: keep it, do not silently change it
                w.addItem(str(value), str(value))
                i = w.count() - 1
            w.setCurrentIndex(i)
            return w
        if option.folder:
            from app.gui.folder_field import FolderField

            return FolderField(str(value), option.title)
        if option.password:  # a secret: shown as dots, kept for the session only (app.gui.settings)
            w = QLineEdit(str(value))
            w.setEchoMode(QLineEdit.EchoMode.Password)
            return w
        if option.choices:
            w = QComboBox()
            w.addItems(list(option.choices))
            w.setCurrentText(str(value))
        elif option.kind is bool:
            w = QCheckBox()
            w.setChecked(bool(value))
        elif option.kind is int:
            w = QSpinBox()
            w.setRange(int(option.minimum or 0), int(option.maximum or 10**6))
            w.setValue(int(value))
        elif option.kind is float:
            w = QDoubleSpinBox()
            w.setRange(float(option.minimum or 0), float(option.maximum or 1e6))
            w.setValue(float(value))
        else:
            w = QLineEdit(str(value))
        return w

    def values(self) -> dict:
        out = {}
        for key, w in self.editors.items():
            if isinstance(w, QComboBox):
                data = w.currentData()
                out[key] = data if isinstance(data, str) else w.currentText()
            elif isinstance(w, QCheckBox):
                out[key] = w.isChecked()
            elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
                out[key] = w.value()
            else:
                out[key] = w.text()
        return out

    def accept(self) -> None:
        for key, value in self.values().items():
            self.settings.set(key, value)
        super().accept()
