"""How far a text is from its reference: the one edit distance and character error rate of the project, on
rapidfuzz's Levenshtein (C, far faster than a Python loop, and the same number).

    edit_distance(ref, hyp)   # insertions + deletions + substitutions turning ref into hyp
    errors(ref, hyp)          # (edit distance, len(ref)): what a corpus CER sums
    cer(ref, hyp)             # edit distance / len(ref); None when ref is empty (nothing to measure against)
    error_rate(ref, hyp)      # the same, 0 or len(hyp) errors over 1 char for an empty ref (benchmarks' tables)

Callers normalise first when they mean to (app.core.text.textlayer strips markup; benchmarks squash whitespace): the
distance itself is of the strings as given. What must never live here: normalisation policy, I/O.
"""
from __future__ import annotations


def edit_distance(ref: str, hyp: str) -> int:
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(ref, hyp))


def errors(ref: str, hyp: str) -> tuple[int, int]:
    return edit_distance(ref, hyp), len(ref)


def cer(ref: str, hyp: str) -> float | None:
    return edit_distance(ref, hyp) / len(ref) if ref else None


def error_rate(ref: str, hyp: str) -> float:
    return edit_distance(ref, hyp) / max(1, len(ref))
