"""Page unit tests in the olmOCR-bench style (`bench documents --corpus units`): small facts about one page that a
reader of the Markdown would check by eye, each passing or failing on its own.

Kinds (one JSON object per line, the format of olmOCR-bench's `dataset.jsonl`):
- `present` / `absent`: `text` is (is not) in the output, up to `max_diffs` edits (the best partial alignment's
  similarity against 1 − max_diffs/len; `first_n` / `last_n` look only at the output's start or end; `case_sensitive`);
- `order`: `before` occurs somewhere before `after` (each found with at most `max_diffs` edits);
- `table`: a table cell matching `cell` has the given neighbours `up`/`down`/`left`/`right` (the cells touching it
  in the grid, spans expanded) and headings `top_heading`/`left_heading` (the header cells above / left of it,
  else the first row's / column's cells);
- `math`: a formula of the output (`$…$`, `$$…$$`, `\\(…\\)`, `\\[…\\]`) means the same as `math`;
- `baseline`: the page is not empty (or, with `max_length`, has at most that many letters and digits: a blank page),
  does not end in a loop, and holds no stray CJK or emoji.

Both sides are normalised first (`normalise`: Markdown emphasis and `<br>` dropped, whitespace folded, NFC, curly
quotes and dashes as ASCII, µ as μ).

This is our own implementation of the published semantics, with one deliberate difference: olmOCR-bench compares
formulas by rendering both with KaTeX in a browser; here two formulas are the same when their normalised LaTeX
tokens are (app.bench.formula_score.normalise) or the output's hold the reference's (a line of an aligned block
shows it, as in a picture), or the same holds with alphabet commands and braces set aside and the output renders
(latex2mathml) every symbol of the reference. That is stricter than a picture on markup that renders alike but is
written differently.

What must never live here: converters, reading files (the corpus runner does that).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from rapidfuzz import fuzz

_ASCII = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "＿": "_", "–": "-", "—": "-",
                        "‑": "-", "‒": "-", "−": "-", "\u00b5": "\u03bc"})
_BOLD = re.compile(r"(\*\*|__)(.*?)\1")
_ITALIC = re.compile(r"(\*|_)(.*?)\1")
_TAGS = re.compile(r"</?[bi]>")
_BR = re.compile(r"<br\s*/?>")
_SPACE = re.compile(r"\s+")
KINDS = ("present", "absent", "order", "table", "math", "baseline")


def normalise(text: str) -> str:
    text = _BR.sub(" ", text or "")
    text = _TAGS.sub("", _BOLD.sub(r"\2", text))
    text = _ITALIC.sub(r"\2", text)
    return unicodedata.normalize("NFC", _SPACE.sub(" ", text)).translate(_ASCII)


# ---- present / absent / order ----
def _similar_in(needle: str, hay: str) -> float:
    """The best similarity (0-1) of `needle` to a stretch of `hay`."""
    if not needle:
        return 1.0
    return fuzz.partial_ratio(needle, hay) / 100.0


def near_starts(needle: str, hay: str, max_edits: int) -> list[int]:
    """Where in `hay` a stretch within `max_edits` edits of `needle` starts (ascending). The approximate-match
    dynamic programme (Sellers) runs over the reversed strings, so that its ends are the forward starts."""
    if max_edits == 0:
        out, i = [], hay.find(needle)
        while i >= 0:
            out.append(i)
            i = hay.find(needle, i + 1)
        return out
    import numpy as np

    pat = needle[::-1]
    m = len(pat)
    col = np.arange(m + 1)
    starts = []
    codes = np.frombuffer(pat.encode("utf-32-le"), dtype=np.uint32)
    rev = hay[::-1]
    for j, ch in enumerate(rev):
        cost = (codes != ord(ch)).astype(np.int64)
        new = np.empty_like(col)
        new[0] = 0
        diag = col[:-1] + cost
        up = col[1:] + 1
        best = np.minimum(diag, up)
        # the left neighbour's +1 runs along the row: a cumulative minimum of (best[i] - i) + i
        idx = np.arange(1, m + 1)
        new[1:] = np.minimum.accumulate(np.concatenate(([0], best - idx)))[1:] + idx
        new[1:] = np.minimum(new[1:], best)
        col = new
        if col[m] <= max_edits:
            starts.append(len(hay) - 1 - j)
    return sorted(starts)


# ---- tables ----
@dataclass
class Grid:
    text: dict[tuple[int, int], str]  # by the cell's top-left slot
    heading: set[tuple[int, int]]
    slots: list[list[tuple[int, int] | None]]  # row by row, which cell fills each slot

    def _at(self, r: int, c: int):
        if 0 <= r < len(self.slots) and 0 <= c < len(self.slots[r]):
            return self.slots[r][c]
        return None

    def _span(self, cell) -> list[tuple[int, int]]:
        return [(r, c) for r, row in enumerate(self.slots) for c, v in enumerate(row) if v == cell]

    def neighbours(self, cell, dr: int, dc: int) -> set[tuple[int, int]]:
        out = set()
        for r, c in self._span(cell):
            other = self._at(r + dr, c + dc)
            if other is not None and other != cell:
                out.add(other)
        return out

    def headings(self, cell, dr: int, dc: int) -> set[tuple[int, int]]:
        """The header cells met walking from `cell` (up: dr=-1, left: dc=-1); none met: the cells at the edge."""
        seen, todo, heads, ends = set(), {cell}, set(), set()
        while todo:
            cur = todo.pop()
            seen.add(cur)
            if cur in self.heading:
                heads.add(cur)
            nxt = self.neighbours(cur, dr, dc) - seen
            if not self.neighbours(cur, dr, dc):
                ends.add(cur)
            todo |= nxt
        heads.discard(cell)
        ends.discard(cell)
        return heads or ends


def grids(markdown: str) -> list[Grid]:
    """The tables of a Markdown/HTML text as grids (HTML `<th>` and a pipe table's first row are headings)."""
    from app.bench.teds import tables_in

    out = []
    for rows in tables_in(markdown):
        text, heading, slots = {}, set(), []
        pending: dict[int, tuple[tuple[int, int], int]] = {}  # column -> (cell, rows still to fill below)
        for r, row in enumerate(rows):
            line: list = []
            c = 0
            cells = list(row)
            while cells or any(k >= c for k in pending):
                if c in pending:
                    cell, left = pending[c]
                    line.append(cell)
                    if left > 1:
                        pending[c] = (cell, left - 1)
                    else:
                        del pending[c]
                    c += 1
                    continue
                if not cells:
                    line.append(None)
                    c += 1
                    continue
                tc = cells.pop(0)
                key = (r, c)
                text[key] = tc.text
                if tc.header:
                    heading.add(key)
                for k in range(max(1, tc.colspan)):
                    line.append(key)
                    if tc.rowspan > 1:
                        pending[c + k] = (key, tc.rowspan - 1)
                c += max(1, tc.colspan)
            slots.append(line)
        out.append(Grid(text, heading, slots))
    return out


def table_check(test: dict, markdown: str) -> tuple[bool, str]:
    cell = normalise(test["cell"])
    diffs = int(test.get("max_diffs", 0))
    limit = lambda s: max(0.5, 1.0 - diffs / max(1, len(s)))  # noqa: E731
    found = grids(markdown)
    if not found:
        return False, "no table"
    wants = {k: normalise(test.get(k, "") or "") for k in ("up", "down", "left", "right", "top_heading", "left_heading")}
    near = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
    why = "no cell like it"
    for g in found:
        for key, txt in g.text.items():
            if fuzz.ratio(cell, normalise(txt)) / 100.0 < limit(cell):
                continue
            bad = []
            for rel, want in wants.items():
                if not want:
                    continue
                if rel in near:
                    others = g.neighbours(key, *near[rel])
                else:
                    others = g.headings(key, -1, 0) if rel == "top_heading" else g.headings(key, 0, -1)
                best = max((fuzz.ratio(want, normalise(g.text[o])) / 100.0 for o in others), default=0.0)
                if best < limit(want):
                    bad.append(f"{rel} {best:.2f}")
            if not bad:
                return True, ""
            why = "cell found, " + ", ".join(bad)
    return False, why


# ---- math ----
_MATH = (re.compile(r"\\\((.+?)\\\)", re.S), re.compile(r"\\\[(.+?)\\\]", re.S), re.compile(r"\$\$(.+?)\$\$", re.S),
         re.compile(r"\$(.+?)\$", re.S))


def formulas(markdown: str) -> list[str]:
    out, rest = [], markdown or ""
    for pat in _MATH:
        out += [m.strip() for m in pat.findall(rest)]
        rest = pat.sub("", rest)
    return out


_STYLE = {r"\boldsymbol", r"\mathbf", r"\mathrm", r"\mathit", r"\mathsf", r"\text"}


def _contains(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n == 0 or any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def _bare(tokens: list[str]) -> list[str]:
    """Tokens without alphabet commands and braces: what a picture of the formula cannot tell apart."""
    return [t for t in tokens if t not in _STYLE and t not in "{}"]


def same_formula(reference: str, output: str) -> bool:
    """Does `output` show `reference`: the same formula, or one that holds it (a line of an aligned block), as
    normalised LaTeX tokens; failing that, as tokens without alphabet commands and braces, when what it renders to
    holds every symbol of the reference."""
    from app.bench.formula_score import mathml_symbols, normalise as tokens

    if reference.strip() == output.strip():
        return True
    a, b = tokens(reference), tokens(output)
    if _contains(b, a):
        return True
    if not _contains(_bare(b), _bare(a)):
        return False
    try:
        plain = lambda c: Counter(unicodedata.normalize("NFKC", k) for k in c.elements())  # noqa: E731 - 𝐄 is E
        return not (plain(mathml_symbols(reference)) - plain(mathml_symbols(output)))
    except Exception:  # noqa: BLE001 - a formula latex2mathml cannot read is not the same as anything
        return False


# ---- baseline ----
_STRAY = re.compile("[\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff\U0001f600-\U0001f64f\U0001f300-\U0001f5ff"
                    "\U0001f680-\U0001f6ff\U0001f1e0-\U0001f1ff]")


def _loops(text: str, most: int = 30) -> bool:
    """Whether the text ends in more than `most` repeats of one n-gram of letters (n ≤ 5)."""
    letters = text
    for n in range(1, 6):
        if len(letters) < n * (most + 1):
            continue
        unit, k, i = letters[-n:], 0, len(letters)
        while i - n >= 0 and letters[i - n:i] == unit:
            k += 1
            i -= n
        if k > most:
            return True
    return False


def baseline_check(test: dict, markdown: str) -> tuple[bool, str]:
    text = markdown or ""
    if test.get("max_length_skips_image_alt_tags"):
        text = re.sub(r"!\[.*?\]\(.*?\)", "", text)
    length = sum(ch.isalnum() for ch in text)
    if test.get("max_length") is not None:
        ok = length <= int(test["max_length"])
        return ok, "" if ok else f"{length} letters on a blank page"
    if length == 0:
        return False, "empty"
    if _loops(markdown):
        return False, "ends in a loop"
    stray = _STRAY.findall(markdown)
    if stray and test.get("check_disallowed_characters", True):
        return False, f"stray characters {''.join(stray[:5])}"
    return True, ""


# ---- one test ----
def check(test: dict, markdown: str) -> tuple[bool, str]:
    """(passed, why not) for one unit test on one page's Markdown."""
    kind = test["type"]
    diffs = int(test.get("max_diffs", 0))
    if kind in ("present", "absent"):
        want = normalise(test["text"])
        hay = normalise(markdown)
        if not test.get("case_sensitive", True):
            want, hay = want.lower(), hay.lower()
        first, last = test.get("first_n"), test.get("last_n")
        if first and last:
            hay = hay[:first] + hay[-last:]
        elif first:
            hay = hay[:first]
        elif last:
            hay = hay[-last:]
        sim = _similar_in(want, hay)
        found = sim >= 1.0 - diffs / max(1, len(want))
        if kind == "present":
            return found, "" if found else f"best {sim:.2f}"
        return not found, "" if not found else f"kept ({sim:.2f})"
    if kind == "order":
        hay = normalise(markdown)
        before = near_starts(normalise(test["before"]), hay, diffs)
        after = near_starts(normalise(test["after"]), hay, diffs)
        if not before or not after:
            return False, "before missing" if not before else "after missing"
        ok = before[0] < after[-1]
        return ok, "" if ok else "after comes first"
    if kind == "table":
        return table_check(test, markdown)
    if kind == "math":
        outs = formulas(markdown)
        ok = any(same_formula(test["math"], o) for o in outs)
        return ok, "" if ok else f"not among {len(outs)} formulas"
    if kind == "baseline":
        return baseline_check(test, markdown)
    raise ValueError(f"unknown unit test type {kind!r}")
