"""Counts in messages for people: "1 page", "2 pages", "0 regions" — never "1 pages" or "page(s)".

What must never live here: anything but wording.
"""
from __future__ import annotations

_IRREGULAR = {"entry": "entries", "is": "are", "was": "were"}


def plural(n: int, word: str, many: str | None = None) -> str:
    """`word` for one, its plural otherwise (`many`, or a known irregular one, or word + "s")."""
    return word if n == 1 else (many or _IRREGULAR.get(word) or f"{word}s")


def count(n: int, word: str, many: str | None = None) -> str:
    """"1 page", "3 pages", "1,200 regions"."""
    return f"{n:,} {plural(n, word, many)}"
