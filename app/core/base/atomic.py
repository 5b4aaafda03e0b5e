"""Atomic file writes for everything the app hands to a person (Markdown, JSON, picture crops, the journal):
the bytes go to a temporary file next to the target, which is then renamed over it, so a crash, a full disk or a
kill mid-write leaves the old file (or none), never half of one.

Temporary names carry the writer's process id (`.report.md.4242-k3j9.tmp`): a run that was killed leaves its
temporaries behind, and `remove_stale_temporaries` removes exactly those of ours whose writer is gone (never a
file of a run still writing, never anything that is not ours). `set_aside` moves a damaged file out of the way
under a timestamped name instead of deleting it.

What must never live here: Qt, or knowledge of what is being written.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
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
    with temporary_file(path, mode, **open_kw) as (f, tmp):
        yield f
    os.replace(tmp, path)


@contextmanager
def temporary_file(path: str | Path, mode: str = "wb", **open_kw) -> Iterator[tuple[IO, Path]]:
    """A complete temporary file next to `path`, synced, with the permissions a plain `open` would give, for the
    caller to rename into place (several at once: app.core.pipeline.output writes an output set as a unit). On an
    exception it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{_tag(path.name)}.{os.getpid()}-", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, mode, **open_kw) as f:
            yield f, Path(tmp)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; outputs are for the person's other programs too
    except BaseException:
        discard(Path(tmp))
        raise


def _tag(name: str) -> str:
    """The target's name as its temporaries carry it: cut so that a long (but legal) name still leaves room."""
    return name[:120]


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl+C (SIGINT) waits until the block is done: a set of renames is never stopped half-way."""
    import signal

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def discard(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but not ours to signal
        return True
    return True


_OLD_STYLE_AGE_S = 3600  # temporaries written before names carried a pid: stale once an hour old


def remove_stale_temporaries(folder: str | Path, names: list[str]) -> list[Path]:
    """Remove the temporaries our writers left next to `folder/<name>` (for each of `names`) when the process that
    wrote them is gone (killed mid-write). Returns what was removed."""
    folder = Path(folder)
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    wanted = {_tag(n) for n in names}
    pattern = re.compile(r"^\.(?P<name>.+)\.(?:(?P<pid>\d+)-)?[A-Za-z0-9_]{6,}\.tmp$")
    for entry in entries:
        m = pattern.match(entry.name)
        if m is None or m.group("name") not in wanted:
            continue
        pid = m.group("pid")
        try:
            stale = (not _alive(int(pid))) if pid else time.time() - entry.stat().st_mtime > _OLD_STYLE_AGE_S
        except OSError:
            continue
        if stale and entry.is_file():
            discard(entry)
            removed.append(entry)
    return removed


def set_aside(path: str | Path, tag: str = "broken") -> Path:
    """Move a damaged `path` out of the way as `<stem>.<tag>-<YYYYmmdd-HHMMSS>[-N]<suffix>` beside it (never over an
    earlier one) and return the new path. Raises OSError when it cannot be moved."""
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.stem}.{tag}-{stamp}{path.suffix}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.stem}.{tag}-{stamp}-{n}{path.suffix}")
    os.replace(path, target)
    return target


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
