"""Atomic file writes for everything the app hands to a person (Markdown, JSON, picture crops, the journal):
the bytes go to a temporary file next to the target, which is then renamed over it, so a crash, a full disk or a
kill mid-write leaves the old file (or none), never half of one.

What must never live here: Qt, or knowledge of what is being written.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(path: str | Path, mode: str = "wb", **open_kw) -> Iterator[IO]:
    """Open a temporary file next to `path` for writing; on a clean exit it is synced and renamed to `path` (with
    the permissions a plain `open` would have given it), on an exception it is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, mode, **open_kw) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; outputs are for the person's other programs too
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write `text` (UTF-8, "\\n" line ends) to `path` atomically; returns the path."""
    with atomic_file(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return Path(path)


def atomic_save_image(image, path: str | Path, format: str = "PNG") -> Path:
    """Save a PIL image to `path` atomically (the format is given: the temporary name has no telling suffix)."""
    with atomic_file(path, "wb") as f:
        image.save(f, format=format)
    return Path(path)
