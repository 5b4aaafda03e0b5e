"""Help → Keyboard shortcuts and Help → User guide.

- `shortcut_rows(window)`: every shortcut the window really has, read from its QActions (menu, title, keys as
  Qt shows them), then the keys and gestures that are not actions (app.gui.actions.MORE_KEYS); the dialog
  lists them with a filter field. Reading the actions, not a table beside them, means the list cannot drift
  from the keys.
- `GuideBrowser`: the user guide (docs/user-guide.md, and the docs it links to) rendered from Markdown in a
  QTextBrowser, safely: raw `<script>`, `<style>`, `<iframe>`, `<object>` and `<embed>` are removed with their
  contents, `on…=` handlers and `javascript:` links are dropped, and only files under docs/ are ever loaded
  (an image or page on the web is never fetched; a web link opens in the person's browser only when clicked).

What must never live here: the actions themselves (app.gui.actions), the docs' text.
"""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QLineEdit, QTableWidget,
                               QTableWidgetItem, QTextBrowser, QVBoxLayout, QWidget)

from app.core.base.paths import project_root

GUIDE = "user-guide.md"
_DROPPED = re.compile(r"<(script|style|iframe|object|embed)\b.*?(</\1\s*>|$)", re.I | re.S)
_LONE_TAG = re.compile(r"<(script|style|iframe|object|embed|link|meta|base)\b[^>]*>", re.I)
_HANDLER = re.compile(r"\s+on[a-z]+\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
_JS_LINK = re.compile(r"(href|src)\s*=\s*([\"'])\s*javascript:[^\"']*\2", re.I)


def docs_dir() -> Path:
    return project_root() / "docs"


def shortcut_rows(window) -> list[tuple[str, str, str]]:
    """(menu, what it does, keys) for every QAction of `window` with a shortcut, in menu order, then the keys
    that are not actions."""
    from app.gui.actions import MORE_KEYS

    rows, seen = [], set()
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is None:
            continue
        for action in _actions_of(menu):
            keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
            if keys and id(action) not in seen:
                seen.add(id(action))
                rows.append((menu_action.text().replace("&", ""), _title(action), keys))
    for action in window.findChildren(QAction):  # outside the menus (the decoding views' playback keys)
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
        if keys and id(action) not in seen and action.text():
            seen.add(id(action))
            rows.append(("Other", _title(action), keys))
    return rows + [("Gestures", title, keys) for title, keys in MORE_KEYS]


def _actions_of(menu):
    for action in menu.actions():
        if action.menu() is not None:
            yield from _actions_of(action.menu())
        elif not action.isSeparator():
            yield action


def _title(action: QAction) -> str:
    return action.text().replace("&", "").rstrip("…").strip()


class ShortcutsDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(640, 560)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: a word or a key")
        self.filter.setClearButtonEnabled(True)
        self.table = QTableWidget(len(rows), 3)
        self.table.setObjectName("shortcuts")
        self.table.setHorizontalHeaderLabels(["Menu", "Action", "Keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for c in (0, 2):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.filter.textChanged.connect(self._filter)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.filter)
        lay.addWidget(self.table, 1)
        lay.addWidget(buttons)

    def _filter(self, text: str) -> None:
        text = text.strip().lower()
        for r in range(self.table.rowCount()):
            row = " ".join(self.table.item(r, c).text().lower() for c in range(3))
            self.table.setRowHidden(r, bool(text) and text not in row)


def safe_html(markdown_text: str) -> str:
    """The guide's Markdown as HTML with anything active taken out (see the module docstring)."""
    import markdown

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code", "toc"])
    body = _DROPPED.sub("", body)
    body = _LONE_TAG.sub("", body)
    body = _HANDLER.sub("", body)
    return _JS_LINK.sub(r'\1=\2#\2', body)


class GuideBrowser(QTextBrowser):
    """Shows a doc of docs/ and follows links between them; never loads anything from outside docs/."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("user_guide")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self.follow)
        self.shown: Path | None = None
        self.refused: list[str] = []  # what a page asked to load and was not given (tests read it)

    def show_doc(self, name: str = GUIDE, fragment: str = "") -> bool:
        path = (docs_dir() / name).resolve()
        if not self._ours(path) or not path.is_file():
            self.setPlainText(f"The guide page {name} is not installed with this copy of Scriptorium.")
            return False
        self.shown = path
        self.setSearchPaths([str(path.parent)])
        self.setHtml(safe_html(path.read_text(encoding="utf-8")))
        if fragment:
            self.scrollToAnchor(fragment)
        return True

    def follow(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)  # the person's browser, on their click
            return
        if not url.path():  # an anchor on this page
            self.scrollToAnchor(url.fragment())
            return
        target = ((self.shown.parent if self.shown else docs_dir()) / url.path()).resolve()
        if target.suffix == ".md" and self._ours(target):
            self.show_doc(str(target.relative_to(docs_dir().resolve())), url.fragment())

    def loadResource(self, kind: int, url: QUrl):  # noqa: N802 - images: local files under docs/ only
        local = Path(url.toLocalFile()) if url.isLocalFile() else None
        if local is None and not url.scheme() and self.shown is not None:
            local = self.shown.parent / url.path()
        if local is None or not self._ours(local.resolve()):
            self.refused.append(url.toString())
            return None
        return super().loadResource(kind, QUrl.fromLocalFile(str(local.resolve())))

    @staticmethod
    def _ours(path: Path) -> bool:
        try:
            path.relative_to(docs_dir().resolve())
        except ValueError:
            return False
        return True


class GuideDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Scriptorium user guide")
        self.resize(820, 720)
        self.browser = GuideBrowser()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)
        self.browser.show_doc()
