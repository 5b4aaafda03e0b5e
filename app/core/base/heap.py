"""Handing freed memory back to the system between pages.

A page's read frees most of what it allocated (crops, tensors, line images, the recogniser's batches), but glibc's
malloc keeps the freed pages in its arenas (one per thread that allocated), so a long run's resident memory climbs
by a few hundred MB of free heap that nothing uses. `release_free_memory()` asks glibc to give it back
(`malloc_trim(0)`: a few milliseconds); the pipeline calls it after every page, and after a region it reads one at
a time when that region took REGION_TRIM or longer (`took`). Trimming after every region cost 5-15 ms each, 20 ms
of a scanned page, whose regions mostly take milliseconds once its lines are read, and the next region reuses
what the last one freed. Elsewhere (no glibc: macOS, Windows,
musl) it does nothing and says so.

What must never live here: caches, limits on what a run keeps (their owners bound them), platform checks of
anything but the C library.
"""
from __future__ import annotations

import ctypes
import sys
import threading

_lock = threading.Lock()
_trim = None  # glibc's malloc_trim, once looked up; False: not there
releases = 0  # times the heap was trimmed (tests read it)
REGION_TRIM = 1.0  # seconds: a region read this long or longer has the heap trimmed after it


def _malloc_trim():
    global _trim
    if _trim is None:
        _trim = False
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):  # musl, or a libc without it
                fn = None
            if fn is not None:
                fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
                _trim = fn
    return _trim


def release_free_memory(took: float | None = None) -> bool:
    """Give the heap's free pages back to the system, after work that `took` REGION_TRIM seconds or more (None:
    always); False where nothing was done (that, or the C library cannot)."""
    global releases
    fn = _malloc_trim()
    if not fn or (took is not None and took < REGION_TRIM):
        return False
    with _lock:  # two threads finishing pages at once trim once each, never together
        fn(0)
        releases += 1
    return True
