"""Formulas inside a paragraph's lines (inline math) written as `$…$` in the paragraph's text.

A born-digital paragraph made by TeX sets "Let S = N₀ˢ(T, 2T) and …" as prose glyphs (CMR) and math glyphs:
letters in a math italic font (CMMI), symbols in CMSY, scripts smaller and raised or lowered from the line's
baseline. Read as plain text that is "Let S = Ns 0(T, 2T)"; `inline_paragraph(page, box)` writes it
"Let $S = N_{0}^{s}(T, 2T)$ and …": each glyph of the region is classed as

- math: set in a math font (`layer_math.MATH_FONTS`, Unicode's mathematical letters too), never a list bullet;
- a script: smaller than its row's main size and off its baseline (in a text font: only inside a formula, so a
  footnote mark on a word stays text);
- glue: a digit, bracket, operator or space of a text font (TeX sets "=", "(", "2" in roman), or an operator
  name ("sin", "log") — part of a formula only between math glyphs, or attached to one;
- text: anything else (letters of prose, italic prose words included: a text italic is no math font).

A formula is a run from one math glyph to another with only glue between, grown over the brackets and digits
attached to its ends (never the sentence's own full stop or comma after it); its LaTeX comes from the display
builder (app.core.text.formula_layout.build, on the same atoms a display formula is made of) and is checked by
parsing it (`layer_math.parse_problem`). One that does not parse is written as the layer spells it and
named in `problems` (a reason to review the block). A paragraph with no math glyph is None: the caller
keeps its words.

What must never live here: reading display formulas (formula_page), the structure rules (formula_layout), the
pipeline.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from statistics import median

from app.core.text.formula_layout import OPERATOR_NAMES, SCRIPT_SIZE, build
from app.core.text.formula_page import glyph_atom, page_chars, page_rules
from app.core.text.hyphens import join_line
from app.core.text.layer_math import MATH_FONTS, parse_problem
from app.core.text.tex_fonts import glyph_char

SHIFT = 0.12  # of the row's size: a glyph's baseline this far off the row's is raised or lowered
GAP = 0.15  # of the size: a gap this wide between glyphs (with no space glyph) is a space
_GLUE = set("0123456789()[]{}=+-−*/<>|,.;:!'′ ") | set("×·±∓÷≤≥≠≈")
_NOT_MATH = set("•∙◦▪‣⋄\u2022□■∎")  # list bullets, set in CMSY by LaTeX's itemize; the end-of-proof box
_TRAILING = set(".,;:")
_MARKS = set("†‡∗*§¶♯♭♮")  # a footnote's mark (CMSY's dagger after "Smith"): no formula on its own
# "N ( T , 2 T )" → "N(T, 2 T)": the same formula, written as a person would
_TIGHT = re.compile(r"(?<=\() | (?=[),])|(?<=[\w}]) (?=\()")


@dataclass
class Glyph:
    c: str
    font: str
    size: float
    box: tuple[float, float, float, float]
    base: float
    ch: dict
    raw: dict
    kind: str = "text"  # math, script, glue, name (an operator's: "sin"), space, text
    shifted: bool = False  # smaller than its row's glyphs, off their baseline: a script, whatever its font


@dataclass
class InlineReading:
    """A paragraph's text with its inline formulas as `$…$`; `formulas` how many, `problems` why each one
    written as plain text could not be (its LaTeX did not parse)."""
    text: str
    formulas: int = 0
    problems: list[str] = field(default_factory=list)


def _math_font(font: str) -> bool:
    return bool(MATH_FONTS.match(font or ""))


def _symbol(c: str) -> bool:
    """A math symbol or a Greek letter in a text font (TeX sets upright Δ in roman): glue, never an anchor (a
    page of Greek prose holds no formula for being Greek)."""
    return unicodedata.category(c) == "Sm" or "GREEK" in unicodedata.name(c, "")


def _rows(glyphs: list[Glyph]) -> list[list[Glyph]]:
    """The region's glyphs in visual rows (a script's PyMuPDF line joins its base line's row), left to
    right."""
    lines: dict[tuple, list[Glyph]] = {}
    for g in glyphs:
        lines.setdefault(g.ch.get("_line"), []).append(g)
    rows: list[list[Glyph]] = []
    spans: list[tuple[float, float]] = []
    for key in sorted(lines, key=lambda k: k[1]):
        y0, y1 = key[1], key[3]
        for i, (t, b) in enumerate(spans):
            if min(b, y1) - max(t, y0) >= 0.3 * min(b - t, y1 - y0):
                rows[i].extend(lines[key])
                spans[i] = (min(t, y0), max(b, y1))
                break
        else:
            rows.append(list(lines[key]))
            spans.append((y0, y1))
    order = sorted(range(len(rows)), key=lambda i: spans[i][0])
    return [sorted(rows[i], key=lambda g: g.box[0]) for i in order]


def _classify(row: list[Glyph]) -> float:
    """Each glyph's kind (module docstring); the row's main size."""
    sized = [g for g in row if g.c.strip()]
    if not sized:
        return 0.0
    sizes = [round(g.size, 1) for g in sized]
    main = max(set(sizes), key=lambda z: (sizes.count(z), z))
    base = median(g.base for g in sized if round(g.size, 1) == main)
    for g in row:
        small = g.size <= SCRIPT_SIZE * main and abs(g.base - base) >= SHIFT * main
        g.shifted = small
        if not g.c.strip():
            g.kind = "space"
        elif g.c in _NOT_MATH or 0xE000 <= ord(g.c[0]) <= 0xF8FF:
            g.kind = "text"
        elif _math_font(g.font) or 0x1D400 <= ord(g.c[0]) <= 0x1D7FF:
            g.kind = "math"
        elif small:
            g.kind = "script"
        elif g.c in _GLUE or _symbol(g.c):
            g.kind = "glue"
        else:
            g.kind = "text"
    _operator_names(row)
    _italic_variables(row)
    return main


_TEXT_ITALIC = re.compile(r"Ital|Oblique|-It\b|Slanted", re.IGNORECASE)


def _italic_variables(row: list[Glyph]) -> None:
    """A lone italic letter in a text font is a variable where the row holds math: TeX setups whose math letters
    are the text face's italics (mathpazo, newtx, mathptmx: "u ∈ (R/Ann_R(x_i))^×" has its u, R and x in
    URW Palladio Italic). A letter standing alone between spaces, glue or math, not beside an italic word of two
    letters or more (italic prose keeps its "a"), becomes math."""
    if not any(g.kind in ("math", "script") for g in row):
        return
    words: list[list[int]] = []
    for i, g in enumerate(row):
        italic = g.kind == "text" and g.c.isalpha() and bool(_TEXT_ITALIC.search(g.font or ""))
        if italic and words and words[-1][-1] == i - 1:
            words[-1].append(i)
        elif italic:
            words.append([i])
        elif g.kind == "text" and g.c.isalpha() and words and words[-1][-1] == i - 1:
            words[-1].append(-1)  # an italic letter stuck to an upright one: part of a prose word
    lone = [w[0] for w in words if len(w) == 1]
    prose = {i for w in words if len(w) >= 2 for i in w}
    for i in lone:
        before = next((k for k in range(i - 1, -1, -1) if row[k].kind != "space"), None)
        after = next((k for k in range(i + 1, len(row)) if row[k].kind != "space"), None)
        if (before is None or before not in prose) and (after is None or after not in prose) and not (
                before is not None and row[before].kind == "text" and row[before].c.isalpha()
                and row[before].box[2] >= row[i].box[0] - 0.5):
            row[i].kind = "math"


def _operator_names(row: list[Glyph]) -> None:
    """Text letters spelling an operator name ("sin", "log") are glue: `\\sin x` is one formula."""
    i = 0
    while i < len(row):
        j = i
        while j < len(row) and row[j].kind == "text" and row[j].c.isalpha():
            j += 1
        if j > i and "".join(g.c for g in row[i:j]) in OPERATOR_NAMES:
            for g in row[i:j]:
                g.kind = "name"
        i = max(j, i + 1)


def _spaced(row: list[Glyph]) -> list[Glyph]:
    """The row with a space glyph wherever two glyphs stand apart without one (lines PyMuPDF cut at a
    script)."""
    out: list[Glyph] = []
    reach = None
    for g in row:
        if out and reach is not None and out[-1].c.strip() and g.c.strip() \
                and g.box[0] - reach > GAP * max(g.size, 1):
            out.append(Glyph(" ", g.font, g.size, g.box, g.base, {}, {}, "space"))
        out.append(g)
        reach = g.box[2] if reach is None or not g.c.strip() else max(reach, g.box[2])
    return out


def _runs(row: list[Glyph]) -> list[tuple[int, int]]:
    """Formulas in a row as [start, end) index ranges: math/script anchors joined over glue, grown over
    attached glue, holding at least one math glyph."""
    anchors = [i for i, g in enumerate(row) if g.kind in ("math", "script")]
    runs: list[list[int]] = []
    for i in anchors:
        if runs and all(row[k].kind in ("glue", "name", "space", "math", "script")
                        for k in range(runs[-1][1], i)):
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    out: list[tuple[int, int]] = []
    for start, end in runs:
        start, end = _grow(row, start, end)
        if out and all(row[k].kind in ("glue", "name", "space") for k in range(out[-1][1], start)):
            out[-1] = (out[-1][0], end)  # grown until they meet ("ρ′ = Tr_E[…]")
        elif any(row[k].kind == "math" and row[k].c not in _MARKS for k in range(start, end)):
            out.append((start, end))
    return out


def _binary(g: Glyph) -> bool:
    return g.c in "+-−=<>/" or unicodedata.category(g.c[:1] or " ") == "Sm"


def _word_before(row: list[Glyph], i: int) -> int:
    """Where the text word that ends just before `i` (attached, no space) starts; `i` when there is none."""
    j = i
    while j > 0 and row[j - 1].kind in ("text", "name") and row[j - 1].c.isalpha():
        j -= 1
    return j


def _grow(row: list[Glyph], start: int, end: int) -> tuple[int, int]:
    """A formula's run grown over what belongs to it: glue stuck to its ends, glue across a space next to an
    operator ("x = 1", "D − 1"), an operator's name ("sin x"), an upright word set straight before its
    bracket or its script ("Var(Y)", "Tr_E"). Never over a hyphen stuck to a word ("finite-$m$": the hyphen
    is the prose's), never over the sentence's comma or full stop after it."""
    while True:
        if start > 0 and row[start - 1].kind == "name":
            start -= 1
        elif start > 0 and row[start - 1].kind == "glue" and row[start - 1].c not in _TRAILING:
            word = _word_before(row, start - 1)
            if word < start - 1 and row[start - 1].c not in "([|":
                break  # a hyphen (or digit) stuck to a prose word
            start = word if row[start - 1].c in "([|" else start - 1
        elif start > 0 and row[start].shifted and row[start].c not in _MARKS \
                and _word_before(row, start) < start:
            start = _word_before(row, start)
        elif start > 1 and row[start - 1].kind == "space" and row[start - 2].kind in ("glue", "name") \
                and (row[start - 2].kind == "name" or _binary(row[start]) or _binary(row[start - 2])):
            start -= 1
        else:
            break
    for g in row[start:end]:
        if g.kind == "text":
            g.kind = "name"  # an upright word inside the formula (\mathrm{Var}, \mathrm{Tr})
    while end < len(row):
        nxt = row[end]
        stuck = end + 1 < len(row) and row[end + 1].kind == "text" and row[end + 1].c.isalpha()
        if nxt.kind in ("glue", "script") and not (nxt.kind == "glue" and stuck):
            end += 1
        elif nxt.kind == "space" and end + 1 < len(row) and row[end + 1].kind == "glue" \
                and (_binary(row[end - 1]) or _binary(row[end + 1])):
            end += 1
        else:
            break
    while end > start and (row[end - 1].c in _TRAILING or row[end - 1].kind == "space"
                           or (row[end - 1].kind == "glue" and _binary(row[end - 1]))):
        end -= 1  # the sentence's comma or full stop after the formula is the sentence's
    return start, end


def _plain(glyphs: list[Glyph]) -> str:
    return "".join(g.c for g in glyphs)


def _row_text(row: list[Glyph], main: float, rules, reading: InlineReading) -> str:
    parts: list[str] = []
    last = 0
    for start, end in _runs(row):
        parts.append(_plain(row[last:start]))
        piece = row[start:end]
        atoms = [a for a in (glyph_atom(g.font, g.size, g.ch, g.raw) for g in piece if g.c.strip()) if a]
        x0, x1 = min(g.box[0] for g in piece), max(g.box[2] for g in piece)
        top, bottom = min(g.box[1] for g in piece), max(g.box[3] for g in piece)
        inside = [r for r in rules if x0 - 1 <= r.x0 and r.x1 <= x1 + 1 and top <= r.y <= bottom]
        latex = build(atoms, inside, main) if atoms else ""
        problem = parse_problem(latex) if latex else "nothing to write"
        if problem is None and "\\begin{" not in latex:
            parts.append(f"${_TIGHT.sub('', latex)}$")
            reading.formulas += 1
        else:
            parts.append(_plain(piece))
            reading.problems.append(f"{_plain(piece).strip()!r}: {problem or 'more than one row'}")
        last = end
    parts.append(_plain(row[last:]))
    return " ".join("".join(parts).split())


def inline_paragraph(page, box) -> InlineReading | None:
    """The text of the paragraph in `box` (points, unrotated page) with its inline formulas as `$…$`; its rows
    joined by spaces, a hyphen at a row's end rejoining its word. None when it holds no math glyph."""
    import pymupdf

    x0, y0, x1, y1 = box
    glyphs = []
    for font, size, ch, raw, line in page_chars(page, pymupdf.Rect(x0 - 1, y0 - 1, x1 + 1, y1 + 1)):
        a, b, c, d = (float(v) for v in raw["bbox"])
        if not (x0 - 1 <= (a + c) / 2 <= x1 + 1 and y0 - 1 <= (b + d) / 2 <= y1 + 1):
            continue
        text = unicodedata.normalize("NFC", ch["c"]) or " "
        if text == "\ufffd":  # a glyph the PDF cannot name: its font's own code says (CMEX's sums, radicals)
            text = glyph_char(font, ord(raw["c"][:1] or " "), known=False) or "\ufffd"
        origin = float(raw["origin"][1])
        glyphs.append(Glyph(text, font, size, (a, b, c, d), origin, {**ch, "_line": line}, raw))
    if not any(_math_font(g.font) and g.c.strip() and g.c not in _NOT_MATH for g in glyphs):
        return None
    rules = page_rules(page, box)
    reading = InlineReading("")
    out = ""
    for row in _rows(glyphs):
        main = _classify(row)
        line = _row_text(_spaced(row), main, rules, reading)
        if not line:
            continue
        out = join_line(out, line)
    reading.text = out
    return reading
