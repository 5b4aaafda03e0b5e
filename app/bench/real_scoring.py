"""Scores of one converter's output against a page's reference text (`bench documents --corpus real`).

- `edit`: the Levenshtein distance between reference and output, both as plain text (markup stripped, inline
  formulas as the symbols they render to (app.bench.formula_score.inline_as_text), NFKC,
  whitespace collapsed, no spaces next to CJK, Hangul or Thai characters — scripts whose word spacing a reader
  does not see or that engines write differently), over the reference length, capped at 1. 0 = identical.
  Arabic-script text is folded where one letter has two encodings (Arabic yeh/alef maksura and Persian yeh;
  Arabic kaf and keheh), kashida (tatweel) is dropped, and Arabic-Indic digits count as ASCII digits: PDF text
  layers store ASCII digits that the font draws in Persian shapes, so reference and reader differ there by design.
  Bidirectional controls (LRM, RLM, ALM, embeddings, isolates), which engines write around right-to-left runs, are
  invisible and dropped.
- `presence`: the share of the reference's units (lines; long lines cut into sentences) found fuzzily in the output
  (rapidfuzz partial ratio ≥ PRESENT_AT).
- `order`: of the pairs of present units, the share whose order in the output is the reference's (a Kendall-style
  agreement: 1 = the reference's reading order, 0 = reversed). None when fewer than two units are present.
- `cells`: for pages whose reference has tables (Markdown pipe tables or HTML), the share of horizontally and
  vertically adjacent cell pairs of the reference that are adjacent the same way in one of the output's tables.
  None when the reference has no table.
- `teds`: for the same pages, TEDS (app.bench.teds: the tree edit distance similarity of PubTabNet, over the
  tables' HTML structure — spans, empty cells, header rows — and cell texts), mean over the reference's tables.
- `formula`: for pages whose reference has display formulas (`$$…$$`), their LaTeX against the output's, token
  by token after normalisation (app.bench.formula_score); `parses`: the share of the output's formulas that
  render.

No Qt, no app imports: leaf functions on strings.
"""
from __future__ import annotations

import html
import re
import unicodedata
from html.parser import HTMLParser

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from app.bench.formula_score import formula_scores, inline_as_text
from app.bench.teds import page_teds

PRESENT_AT = 85.0  # partial ratio (0-100) at which a reference unit counts as found
MAX_UNIT = 160  # characters: longer reference lines are cut at sentence ends (then at this length)
MIN_UNIT = 4  # shorter units (a lone page number, "A") are not counted, unless they are all the page has

_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f\u0e00-\u0e7f"  # CJK, Hangul, Thai
# one letter, two encodings (Persian/Arabic orthographies), kashida, Arabic-Indic digits → one form each; bidi
# controls dropped
_ARABIC_FOLD = str.maketrans({"\u064a": "\u06cc", "\u0649": "\u06cc", "\u0643": "\u06a9", "\u0640": None,
                              **{chr(0x0660 + d): str(d) for d in range(10)},
                              **{chr(0x06f0 + d): str(d) for d in range(10)},
                              **dict.fromkeys(map(ord, "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e"
                                                       "\u2066\u2067\u2068\u2069"))})
_SPACE_CJK = re.compile(rf"(?<=[{_CJK}])\s+|\s+(?=[{_CJK}])")
_TAGS = re.compile(r"<[^>]+>")
_IMG = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$", re.M)
_MARKS = re.compile(r"^\s{0,3}(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s?)", re.M)
_EMPH = re.compile(r"(\*\*|__|\*|`+|~~)")
_MATH = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|(?<!\\)\$")
_SPACES = re.compile(r"\s+")
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*")


def strip_markup(text: str) -> str:
    """Markdown/HTML → plain text with its line structure kept (table rows become lines of cells)."""
    t = text or ""
    t = re.sub(r"(?i)<br\s*/?>|</(p|div|tr|h\d|li|table)>", "\n", t)
    t = re.sub(r"(?i)</t[dh]>", " ", t)
    t = _TAGS.sub(" ", t)
    t = html.unescape(t)
    t = _IMG.sub(" ", t)
    t = _LINK.sub(r"\1", t)
    t = _TABLE_RULE.sub("", t)
    t = t.replace("|", " ")
    t = _MARKS.sub("", t)
    t = _EMPH.sub("", t)
    t = _MATH.sub(" ", inline_as_text(t))
    return unicodedata.normalize("NFKC", t).translate(_ARABIC_FOLD)


def flat(text: str) -> str:
    """Plain text on one line: markup stripped, whitespace collapsed, no spaces next to CJK characters."""
    t = _SPACES.sub(" ", strip_markup(text)).strip()
    return _SPACE_CJK.sub("", t)


def edit(reference: str, output: str) -> float:
    ref = flat(reference)
    return min(1.0, Levenshtein.distance(ref, flat(output)) / max(1, len(ref)))


def units(reference: str) -> list[str]:
    """The reference cut into units to look for: its non-empty lines, long ones cut at sentence ends."""
    out: list[str] = []
    for line in strip_markup(reference).splitlines():
        line = _SPACE_CJK.sub("", _SPACES.sub(" ", line).strip())
        if not line:
            continue
        pieces = [line] if len(line) <= MAX_UNIT else [s for s in _SENTENCE.split(line) if s.strip()]
        for piece in pieces:
            while len(piece) > MAX_UNIT:
                cut = piece.rfind(" ", MAX_UNIT // 2, MAX_UNIT)
                cut = cut if cut > 0 else MAX_UNIT
                out.append(piece[:cut].strip())
                piece = piece[cut:].strip()
            if piece:
                out.append(piece)
    long_enough = [u for u in out if len(u) >= MIN_UNIT]
    return long_enough or out


def _find(unit: str, hay: str, after: int = 0) -> int | None:
    """Where `unit` is found in `hay` (its start), or None when it is not there. Looked for past `after` (where
    the previous unit was found) first, then anywhere: repeated text (a table's "True", a heading that recurs)
    counts where it continues the reading, and text out of order is still found where it is."""
    if not unit or not hay:
        return None
    for start in ((after, 0) if after else (0,)):
        at = hay.find(unit, start)
        if at >= 0:
            return at
    for start in ((after, 0) if after else (0,)):
        window = hay[start:]
        if len(window) < len(unit):  # partial ratio would look for the window inside the unit: compare whole
            if fuzz.ratio(unit, window) >= PRESENT_AT:
                return start
            continue
        m = fuzz.partial_ratio_alignment(unit, window, score_cutoff=PRESENT_AT)
        if m is not None:
            return start + m.dest_start
    return None


def positions(reference: str, output: str) -> list[int | None]:
    hay = flat(output)
    out: list[int | None] = []
    after = 0
    for u in units(reference):
        at = _find(u, hay, after)
        out.append(at)
        if at is not None:
            after = at + 1
    return out


def presence(reference: str, output: str, found: list[int | None] | None = None) -> float:
    found = positions(reference, output) if found is None else found
    return sum(p is not None for p in found) / len(found) if found else 1.0


def order(reference: str, output: str, found: list[int | None] | None = None) -> float | None:
    """Pairwise order agreement of the present units (reference order against output positions)."""
    found = positions(reference, output) if found is None else found
    pos = [p for p in found if p is not None]
    pairs = agree = 0
    for i in range(len(pos)):
        for j in range(i + 1, len(pos)):
            if pos[i] == pos[j]:
                continue
            pairs += 1
            agree += pos[i] < pos[j]
    return agree / pairs if pairs else None


# ---- tables ----
class _HtmlTables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._rows: list[list[tuple[str, int, int]]] | None = None
        self._cell: list[str] | None = None
        self._span = (1, 1)
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self._rows = []
        elif self._depth == 1 and tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif self._depth == 1 and tag in ("td", "th") and self._rows is not None:
            if not self._rows:
                self._rows.append([])
            self._cell = []
            self._span = (_int(a.get("rowspan")), _int(a.get("colspan")))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._rows:
            self._rows[-1].append(("".join(self._cell), *self._span))
            self._cell = None
        elif tag == "table":
            self._depth -= 1
            if self._depth == 0 and self._rows is not None:
                self.tables.append(_grid(self._rows))
                self._rows = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _int(v) -> int:
    try:
        return max(1, int(v))
    except (TypeError, ValueError):
        return 1


def _grid(rows: list[list[tuple[str, int, int]]]) -> list[list[str]]:
    """HTML rows with row/col spans → a grid (a spanned cell's text repeated in every slot it covers)."""
    grid: dict[tuple[int, int], str] = {}
    for r, row in enumerate(rows):
        c = 0
        for text, rs, cs in row:
            while (r, c) in grid:
                c += 1
            for dr in range(rs):
                for dc in range(cs):
                    grid[(r + dr, c + dc)] = text
            c += cs
    if not grid:
        return []
    nr, nc = max(k[0] for k in grid) + 1, max(k[1] for k in grid) + 1
    return [[grid.get((r, c), "") for c in range(nc)] for r in range(nr)]


_PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def tables(text: str) -> list[list[list[str]]]:
    """The tables in Markdown/HTML text as grids of cell texts (HTML tables, then Markdown pipe tables)."""
    parser = _HtmlTables()
    parser.feed(text or "")
    found = list(parser.tables)
    block: list[str] = []
    for line in (text or "").splitlines():
        if _PIPE_ROW.match(line):
            block.append(line)
            continue
        if block:
            found.append(_pipe_grid(block))
            block = []
    if block:
        found.append(_pipe_grid(block))
    return [t for t in found if t and len(t) * max(len(r) for r in t) > 1]


def _pipe_grid(lines: list[str]) -> list[list[str]]:
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if not _TABLE_RULE.fullmatch(ln)]
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows]


def _cell(text: str) -> str:
    return _SPACES.sub("", flat(text)).lower()


def _pairs(grid: list[list[str]]) -> set[tuple[str, str, str]]:
    """("h"|"v", left/top cell, right/bottom cell) for adjacent non-empty, different cells."""
    g = [[_cell(c) for c in row] for row in grid]
    out = set()
    for r, row in enumerate(g):
        for c, a in enumerate(row):
            if not a:
                continue
            if c + 1 < len(row) and row[c + 1] and row[c + 1] != a:
                out.add(("h", a, row[c + 1]))
            if r + 1 < len(g) and c < len(g[r + 1]) and g[r + 1][c] and g[r + 1][c] != a:
                out.add(("v", a, g[r + 1][c]))
    return out


def cells(reference: str, output: str) -> float | None:
    """Share of the reference tables' adjacent cell pairs that are adjacent the same way in the output's tables."""
    want: set[tuple[str, str, str]] = set()
    for grid in tables(reference):
        want |= _pairs(grid)
    if not want:
        return None
    have: set[tuple[str, str, str]] = set()
    for grid in tables(output):
        have |= _pairs(grid)
    return len(want & have) / len(want)


def score(reference: str, output: str) -> dict[str, float | None]:
    found = positions(reference, output)
    formula, parses = formula_scores(reference, output)
    return {"edit": edit(reference, output), "present": presence(reference, output, found),
            "order": order(reference, output, found), "cells": cells(reference, output),
            "teds": page_teds(reference, output), "formula": formula, "parses": parses}
