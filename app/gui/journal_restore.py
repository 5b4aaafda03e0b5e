"""What the window says and does about its own files at start: restoring the journal after a crash, and telling the
person once (the banner, with "Show file") when the journal or the settings file was damaged and set aside.

It is given the journal, the settings, the banner and the prompter, never the window. What must never live here:
reading or checking those files (app.gui.journal, app.gui.settings do).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices


def show_file(path: Path) -> None:
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent)))


def tell_set_aside(journal, settings, banner) -> None:
    """One banner for the files that were set aside at this start (journal, settings)."""
    notes = []
    if journal.set_aside is not None:
        notes.append((f"The saved work (journal) could not be used ({journal.problem}); it was set aside as "
                      f"{journal.set_aside.name}.", journal.set_aside))
    settings_aside = settings.set_aside
    if settings_aside is not None:
        notes.append((f"The settings file could not be read ({settings.problem}); it was set aside as "
                      f"{settings_aside.name} and the defaults are used.", settings_aside))
    if notes:
        banner.show_message(" ".join(text for text, _ in notes), ("Show file", lambda: show_file(notes[0][1])))


def offer_restore(journal, settings, banner, prompter, restore: Callable[[dict], None]) -> bool:
    """After a crash or kill: offer the work the journal kept (`restore(state)` puts it back). Returns whether it
    was restored."""
    payload = journal.load()  # checked against the journal's schema; None (and set aside) when it does not fit
    tell_set_aside(journal, settings, banner)
    if not (payload and not payload.get("clean") and payload["state"].get("documents")):
        return False
    names = ", ".join(Path(d["path"]).name for d in payload["state"]["documents"])
    try:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(payload.get("saved_at", 0)))
    except (OverflowError, OSError, ValueError):  # a time the platform cannot show
        when = "an unknown time"
    if not prompter.confirm("restore_journal", "Restore unsaved work?",
                            f"Scriptorium did not close normally. Restore the work saved at {when} ({names})?"):
        journal.discard()
        return False
    restore(payload["state"])
    return True
