"""The journal: autosave of the open work (documents, regions, texts, edits) so that a crash or a kill loses
nothing. One JSON file under the user data folder, written atomically; it is marked clean when the window closes
normally, and a start that finds an unclean journal offers to restore it.

Before any of it is used, a journal is checked against its schema (`validate_journal`: the envelope here, every
document, page, block and region against the dataclasses they load into, app.core.base.schema) and loaded once on
trial. A journal that cannot be read or does not fit is never fatal and never deleted: it is set aside under a
timestamped name (`work.broken-20261130-152300.json`, never overwriting an earlier one) and `set_aside` says where,
so the window can tell the person once.

What must never live here: widgets. The window decides when to save; this module only reads and writes.
"""
from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from app.core.base.atomic import atomic_write_text, set_aside
from app.core.base.paths import user_data_dir
from app.core.pipeline.output import PageOutput
from app.core.review.document import Block
from app.core.base.schema import SchemaError, check_fields, check_value

VERSION = 1
_ENVELOPE = {"version": int, "saved_at": float, "clean": bool, "pid": int, "state": dict}
_STATE = {"current": int, "documents": list}
_DOCUMENT = {"path": str, "page_count": int, "page_sizes": list[tuple[float, float]], "pages": list,
             "current_page": int, "title": str, "engine": str, "layout": str, "stats": dict[str, Any],
             "warnings": list[str], "cancelled": bool, "blocks": list, "raw_stream": str,
             "skipped_pages": list[int], "person_turns": dict[str, int]}


def _check_keys(data: Any, spec: dict[str, Any], where: str, required: tuple[str, ...] = ()) -> None:
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected an object, found {type(data).__name__}")
    for key in required:
        if key not in data:
            raise SchemaError(f"{where}: {key!r} is missing")
    for key, kind in spec.items():
        if key in data:
            check_value(data[key], kind, f"{where}.{key}")


def validate_journal(payload: Any) -> dict[str, Any]:
    """The payload when it is a journal this app can restore; raises SchemaError (saying where and what) when not."""
    _check_keys(payload, _ENVELOPE, "journal", required=("version", "state"))
    if payload["version"] != VERSION:
        raise SchemaError(f"journal: version {payload['version']} (this app reads version {VERSION})")
    state = payload["state"]
    _check_keys(state, _STATE, "state")
    for i, doc in enumerate(state.get("documents", [])):
        where = f"state.documents[{i}]"
        _check_keys(doc, _DOCUMENT, where, required=("path",))
        if any(w <= 0 or h <= 0 for w, h in doc.get("page_sizes", [])):
            raise SchemaError(f"{where}.page_sizes: a page without a size")
        for n, page in enumerate(doc.get("pages", [])):
            check_fields(PageOutput, page, f"{where}.pages[{n}]")
            if page["index"] < 0:
                raise SchemaError(f"{where}.pages[{n}].index: a negative page")
        for n, block in enumerate(doc.get("blocks", [])):
            check_fields(Block, block, f"{where}.blocks[{n}]")
            if block["region"]["page"] < 0:
                raise SchemaError(f"{where}.blocks[{n}].region.page: a negative page")
    from app.core.review.session import Session

    try:  # the shape is right; loading it once on trial catches what only the loaders know
        Session().load_dict(state)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise SchemaError(f"state: cannot be restored ({type(exc).__name__}: {exc})") from None
    return payload


class Journal:
    """Saves go through one background thread (serialising and fsync never stall the GUI); saves are written in
    the order they were asked for, and `wait=True` (the default) returns once this one is on disk."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else user_data_dir() / "journal" / "work.json"
        self.saves = 0
        self.set_aside: Path | None = None  # where an unusable journal was moved, for the window to say
        self.problem = ""  # why it was unusable, for a person
        self._executor: ThreadPoolExecutor | None = None  # started by the first save, ended by `close`
        self.write_seconds = 0.0  # what the last save cost in the save thread (serialising, writing, fsync)

    def save(self, state: dict[str, Any], *, clean: bool = False, wait: bool = True) -> Path:
        """`state` must be a snapshot (plain data nobody mutates afterwards), e.g. `Session.to_dict()`."""
        payload = {"version": VERSION, "saved_at": time.time(), "clean": clean, "pid": os.getpid(), "state": state}
        self.saves += 1
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scriptorium-journal")
        future = self._executor.submit(self._write, payload)
        if wait:
            future.result()
        return self.path

    def _write(self, payload: dict[str, Any]) -> None:
        started = time.perf_counter()
        try:  # compact: a long document's journal is tens of MB
            atomic_write_text(self.path, json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
        finally:
            self.write_seconds = time.perf_counter() - started

    def load(self) -> dict[str, Any] | None:
        """The saved payload, checked against the schema; None when there is none, or when it cannot be read or
        does not fit (then it is set aside: `set_aside`, `problem`). Never raises: the app must still start."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return self._set_aside(f"it cannot be read ({exc.strerror or exc})")
        try:
            return validate_journal(json.loads(raw.decode("utf-8")))
        except UnicodeDecodeError:
            return self._set_aside("it is not UTF-8 text")
        except RecursionError:
            return self._set_aside("it is nested too deeply")
        except SchemaError as exc:
            return self._set_aside(str(exc))
        except ValueError as exc:  # JSONDecodeError
            return self._set_aside(f"it is not JSON ({exc})")

    def _set_aside(self, problem: str) -> None:
        self.problem = problem
        try:
            self.set_aside = set_aside(self.path, "broken")
        except OSError:  # cannot even move it: leave it, and say so
            self.set_aside = self.path
        return None

    def needs_restore(self) -> bool:
        payload = self.load()
        return bool(payload and not payload.get("clean") and payload["state"].get("documents"))

    def mark_clean(self, state: dict[str, Any]) -> None:
        self.save(state, clean=True)

    def close(self) -> None:
        """Finish the saves asked for and end the save thread (the window closes). A later save starts a new
        one: closing is never what loses work."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    def discard(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
