"""The journal: autosave of the open work (documents, regions, texts, edits) so that a crash or a kill loses
nothing. One JSON file under the user data folder, written atomically; it is marked clean when the window closes
normally, and a start that finds an unclean journal offers to restore it.

What must never live here: widgets. The window decides when to save; this module only reads and writes.
"""
from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from app.core.atomic import atomic_write_text
from app.core.paths import user_data_dir

VERSION = 1


class Journal:
    """Saves go through one background thread (serialising and fsync never stall the GUI); saves are written in
    the order they were asked for, and `wait=True` (the default) returns once this one is on disk."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else user_data_dir() / "journal" / "work.json"
        self.saves = 0
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scriptorium-journal")

    def save(self, state: dict[str, Any], *, clean: bool = False, wait: bool = True) -> Path:
        """`state` must be a snapshot (plain data nobody mutates afterwards), e.g. `Session.to_dict()`."""
        payload = {"version": VERSION, "saved_at": time.time(), "clean": clean, "pid": os.getpid(), "state": state}
        self.saves += 1
        future = self._executor.submit(lambda: atomic_write_text(self.path, json.dumps(payload, ensure_ascii=False, indent=1)))
        if wait:
            future.result()
        return self.path

    def load(self) -> dict[str, Any] | None:
        """The saved payload, or None when there is none or it cannot be read (a broken journal is set aside, not
        fatal: the app must still start)."""
        try:
            payload = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            try:
                self.path.replace(self.path.with_suffix(".broken"))
            except OSError:
                pass
            return None
        if not isinstance(payload, dict) or payload.get("version") != VERSION or "state" not in payload:
            return None
        return payload

    def needs_restore(self) -> bool:
        payload = self.load()
        return bool(payload and not payload.get("clean") and payload["state"].get("documents"))

    def mark_clean(self, state: dict[str, Any]) -> None:
        self.save(state, clean=True)

    def discard(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
