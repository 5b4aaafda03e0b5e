"""Every question the app asks a person goes through one `Prompter`, so that tests (and any non-interactive run)
can answer it: a modal dialog on the offscreen platform would hang a test run.

Known questions (key → default when nobody can be asked):
- "restore_journal": restore unsaved work found after a crash? (default True when asked non-interactively)
- "overwrite_edited": a re-run produced new text for a block the person edited; replace it? (default False)
- "password": the password of an encrypted PDF (default None = give up)
- "export_formats": which formats Export writes (`choose_formats`; default: the choice it was given)
"""
from __future__ import annotations

from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

DEFAULTS: dict[str, Any] = {"restore_journal": True, "overwrite_edited": False, "password": None}


class Prompter:
    """Asks yes/no and text questions. `answers` pre-answers questions by key (tests script it); when nobody can be
    asked (offscreen platform, or `interactive=False`) the question's default is taken. `asked` records every
    question for inspection."""

    def __init__(self, parent: QWidget | None = None, interactive: bool | None = None) -> None:
        self.parent = parent
        if interactive is None:
            interactive = QGuiApplication.platformName() not in ("offscreen", "minimal")
        self.interactive = interactive
        self.answers: dict[str, Any] = {}
        self.asked: list[tuple[str, str]] = []

    def _scripted(self, key: str) -> tuple[bool, Any]:
        if key in self.answers:
            answer = self.answers[key]
            if isinstance(answer, list):  # a script of answers, one per time the question is asked
                return True, answer.pop(0) if answer else None
            return True, answer
        if not self.interactive:
            return True, DEFAULTS.get(key)
        return False, None

    def confirm(self, key: str, title: str, text: str) -> bool:
        self.asked.append((key, text))
        scripted, answer = self._scripted(key)
        if scripted:
            return bool(answer)
        buttons = QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        default = QMessageBox.StandardButton.Yes if DEFAULTS.get(key) else QMessageBox.StandardButton.No
        return QMessageBox.question(self.parent, title, text, buttons, default) == QMessageBox.StandardButton.Yes

    def choose_formats(self, chosen: list[str]) -> list[str] | None:
        """Which formats to export (app.gui.export_choice), starting from `chosen`; None: cancelled."""
        self.asked.append(("export_formats", ",".join(chosen)))
        scripted, answer = self._scripted("export_formats")
        if scripted:
            return answer if "export_formats" in self.answers else list(chosen)  # nobody to ask: as it was
        from app.gui.export_choice import ask_formats

        return ask_formats(self.parent, chosen)

    def password(self, title: str, text: str) -> str | None:
        self.asked.append(("password", text))
        scripted, answer = self._scripted("password")
        if scripted:
            return answer
        value, ok = QInputDialog.getText(self.parent, title, text, QLineEdit.EchoMode.Password)
        return value if ok else None
