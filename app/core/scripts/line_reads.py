"""The script router's Tesseract readings of one image's lines, each (line, language) read once, and read ahead on
the machine's second core where the router knows which it will ask for next (the next language to compare, the
lines of the language found). What a reading is does not change with who reads it or when: the same function of
the same crop, read here or on the other thread.

    reads = LineReads(fetch)       # fetch(i, lang) -> TessLine: how the router reads line i in `lang`
    reads.ahead([3, 5], "rus")     # queued for the other core
    got = reads.read(3, "rus")     # its reading: started there, waited for; not yet started, read here
    reads.mean_conf([3, 5], "ell", in_script)
    reads.settle()                 # what is queued and not started is dropped

Tesseract's calls run side by side (app.core.scripts.tesseract gives each call its own API object); on a
one-core machine nothing is read ahead.

What must never live here: which lines or languages to read (router.py), Tesseract itself (tesseract.py).
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

from app.core.scripts.tesseract import PER_LANGUAGE, TessLine

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor | None:
    """The process's one reading-ahead thread (None on a one-core machine: nothing to read beside)."""
    global _POOL
    if PER_LANGUAGE < 2:  # (one API object of a language at most: a one-core machine)
        return None
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tesseract-ahead")
        return _POOL


class LineReads:
    def __init__(self, fetch: Callable[[int, str], TessLine]) -> None:
        self._fetch = fetch
        self._done: dict[tuple[int, str], TessLine] = {}
        self._queued: dict[tuple[int, str], Future] = {}

    def read(self, i: int, lang: str) -> TessLine:
        key = (i, lang)
        if key not in self._done:
            queued = self._queued.pop(key, None)
            if queued is not None and not queued.cancel():  # started there: its reading, once it is done
                self._done[key] = queued.result()
            else:
                self._done[key] = self._fetch(i, lang)
        return self._done[key]

    def ahead(self, ids, lang: str) -> None:
        """Line `ids` in `lang`, read on the other core from now (in order) unless read or queued already."""
        pool = _pool()
        if pool is None:
            return
        for i in ids:
            key = (i, lang)
            if key not in self._done and key not in self._queued:
                self._queued[key] = pool.submit(self._fetch, i, lang)

    def mean_conf(self, ids, lang: str, counts: Callable[[str, str], bool]) -> float:
        """The mean confidence of `ids` read in `lang`, a reading whose letters are not `lang`'s (`counts`) as 0."""
        got = [self.read(i, lang) for i in ids]
        return sum(r.conf if counts(r.text, lang) else 0.0 for r in got) / len(got)

    def settle(self) -> None:
        """Nothing read ahead from here on: the queued readings not started are dropped (one under way finishes on
        its own; nothing waits for it)."""
        queued, self._queued = self._queued, {}
        for future in queued.values():
            future.cancel()
