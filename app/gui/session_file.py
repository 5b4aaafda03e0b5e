"""Session files: File → Save session (Ctrl+S), Save session as… and Open session… A session file
(`name.scriptorium`, JSON) holds what the person would lose on closing the window: the open documents' work
(their regions, texts, edits and review marks, as the journal keeps them), the window's layout (geometry,
docks, panes) and the undo history (each step's before and after, so Ctrl+Z after opening undoes the steps
made before saving). It is written atomically (app.core.base.atomic): a crash mid-save leaves the previous
file whole.

Reading it back is checked as the journal is (app.gui.journal.validate_journal) before anything is replaced; a
file that does not fit is refused with one line saying why, and the window keeps what it had. The redo tail
(steps undone before saving) is not kept: the saved work is the state the history leads to.

What must never live here: the review rules themselves (app.core.review), decoding, export formats.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QObject
from PySide6.QtGui import QUndoStack

from app.core.base.atomic import atomic_write_text
from app.core.base.schema import SchemaError
from app.core.review.region_edits import LayoutEdit
from app.gui.journal import VERSION as JOURNAL_VERSION
from app.gui.journal import validate_journal
from app.gui.review_flow import LayoutEditCommand, TextEditCommand

FORMAT = "scriptorium-session"
VERSION = 1
SUFFIX = ".scriptorium"


class SessionFileError(ValueError):
    """A session file that cannot be opened; the message is one line for a person."""


def _b64(data) -> str:
    return bytes(data.toBase64()).decode("ascii")


def undo_entries(stack: QUndoStack) -> list[dict[str, Any]]:
    """The steps that can be undone now (oldest first), as plain data; a step of a kind not known here ends
    the list there (what came before it stays undoable)."""
    out = []
    for i in range(stack.index()):
        entry = command_entry(stack.command(i))
        if entry is None:
            break
        out.append(entry)
    return out


def command_entry(cmd) -> dict[str, Any] | None:
    if isinstance(cmd, LayoutEditCommand):
        return {"kind": "layout", "document": cmd.work.path, "edit": asdict(cmd.edit)}
    if isinstance(cmd, TextEditCommand):
        return {"kind": "text", "document": cmd.work.path, "region_id": cmd.region_id, "before": cmd.before,
                "after": cmd.after}
    if cmd.childCount():  # a macro (a table editor change that wrote several blocks)
        children = [command_entry(cmd.child(i)) for i in range(cmd.childCount())]
        if any(c is None for c in children):
            return None
        return {"kind": "steps", "text": cmd.text(), "children": children}
    return None


def rebuild_undo(stack: QUndoStack, flow, session, entries: list[dict[str, Any]]) -> int:
    """Push the saved steps back on `stack` without doing them again (the work already holds their result: the
    commands skip their first redo); returns how many steps were restored."""
    works = {d.path: d for d in session.documents}
    stack.clear()
    done = 0
    for entry in entries:
        try:
            pushed = isinstance(entry, dict) and _push(stack, flow, works, entry)
        except (KeyError, TypeError, ValueError):  # a step of the wrong shape: the history stops before it
            pushed = False
        if not pushed:
            break
        done += 1
    stack.setClean()
    return done


def _push(stack: QUndoStack, flow, works: dict, entry: dict[str, Any]) -> bool:
    kind = entry.get("kind")
    if kind == "steps":
        stack.beginMacro(str(entry.get("text", "")))
        ok = all(_push(stack, flow, works, child) for child in entry.get("children", []))
        stack.endMacro()
        return ok
    work = works.get(entry.get("document", ""))
    if work is None:
        return False
    if kind == "layout":
        edit = entry.get("edit") or {}
        fields = {k: edit[k] for k in LayoutEdit.__dataclass_fields__ if k in edit}
        stack.push(LayoutEditCommand(flow, work, LayoutEdit(**fields)))
        return True
    if kind == "text":
        rid, before, after = (str(entry[k]) for k in ("region_id", "before", "after"))
        stack.push(TextEditCommand(flow, work, rid, before, after))
        return True
    return False


def session_payload(window) -> dict[str, Any]:
    window.editor.flush_edits()
    return {"format": FORMAT, "version": VERSION, "saved_at": time.time(), "state": window.session.to_dict(),
            "layout": {"geometry": _b64(window.saveGeometry()), "state": _b64(window.saveState()),
                       "panes": _b64(window.splitter.saveState())},
            "undo": undo_entries(window.flow.undo_stack)}


def read_session(path: str | Path) -> dict[str, Any]:
    """The payload of a session file, checked; raises SessionFileError with one line saying what is wrong."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SessionFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SessionFileError(f"{path.name}: not a session file ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise SessionFileError(f"{path.name}: not a Scriptorium session file")
    if payload.get("version") != VERSION:
        raise SessionFileError(f"{path.name}: session version {payload.get('version')} "
                               f"(this app reads {VERSION})")
    try:
        validate_journal({"version": JOURNAL_VERSION, "state": payload.get("state")})
    except SchemaError as exc:
        raise SessionFileError(f"{path.name}: {exc}") from None
    if not isinstance(payload.get("undo", []), list) or not isinstance(payload.get("layout", {}), dict):
        raise SessionFileError(f"{path.name}: its undo history or layout is not of the right shape")
    return payload


class SessionFiles(QObject):
    """The window's File → session actions; `path` is the file the work was last saved to or opened from."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.path: Path | None = None

    def save(self, path: str | Path | None = None) -> Path | None:
        """Save to `path`, else to the session's own file, else ask where (Save as)."""
        target = Path(path) if path else self.path
        if target is None:
            return self.save_as()
        if target.suffix != SUFFIX:
            target = target.with_name(target.name + SUFFIX)
        w = self.window
        try:
            atomic_write_text(target, json.dumps(session_payload(w), ensure_ascii=False, indent=1))
        except OSError as exc:
            w.banner.show_message(f"Cannot save the session to {target}: {exc.strerror or exc}")
            return None
        self.path = target
        w.setWindowTitle(f"{target.stem} — Scriptorium")
        w.flow.undo_stack.setClean()
        w.statusBar().showMessage(f"Session saved to {target}", 5000)
        return target

    def save_as(self) -> Path | None:
        from PySide6.QtWidgets import QFileDialog

        start = str(self.path or Path.home() / f"work{SUFFIX}")
        chosen, _ = QFileDialog.getSaveFileName(self.window, "Save session as", start,
                                                f"Scriptorium sessions (*{SUFFIX})")
        return self.save(chosen) if chosen else None

    def ask_open(self) -> bool:
        from PySide6.QtWidgets import QFileDialog

        chosen, _ = QFileDialog.getOpenFileName(self.window, "Open session", str(self.path or Path.home()),
                                                f"Scriptorium sessions (*{SUFFIX});;All files (*)")
        return self.open(chosen) if chosen else False

    def open(self, path: str | Path) -> bool:
        """Replace the window's work, layout and undo history with the file's; False (and a banner) when the
        file cannot be opened, the work untouched."""
        w = self.window
        try:
            payload = read_session(path)
        except SessionFileError as exc:
            w.banner.show_message(str(exc))
            return False
        if w.decoder.running:
            w.cancel_run()
        layout = payload.get("layout", {})
        if layout.get("geometry"):
            w.restoreGeometry(QByteArray.fromBase64(layout["geometry"].encode("ascii")))
        if layout.get("state"):
            w.restoreState(QByteArray.fromBase64(layout["state"].encode("ascii")))
            w._docks_sized = True  # the person's own dock sizes, not the first start's
        if layout.get("panes"):
            w.splitter.restoreState(QByteArray.fromBase64(layout["panes"].encode("ascii")))
        w.session.load_dict(payload["state"])
        w.refresh_documents()
        if w.session.documents:
            w.show_document(w.session.current)
        rebuild_undo(w.flow.undo_stack, w.flow, w.session, payload.get("undo", []))
        self.path = Path(path)
        w.setWindowTitle(f"{self.path.stem} — Scriptorium")
        w.save_journal(wait=False)  # the journal follows the opened work from here
        w.statusBar().showMessage(f"Session opened from {self.path}", 5000)
        return True
