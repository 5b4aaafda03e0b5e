"""A formula region of a born-digital page read as LaTeX: its glyphs and rules taken from the page, built into
structure (app.core.text.formula_layout), checked by parsing the result.

`formula_from_page(page, box)` → `FormulaReading(latex, problem)`. The glyphs come from PyMuPDF's `rawdict`
with TEXT_ACCURATE_BBOXES (a glyph's box is its ink: a script's box does not reach down to the main baseline)
and, for a glyph the PDF cannot name, its font's own code (app.core.text.tex_fonts: CMEX's sums, radicals and
tall brackets); the rules from `get_drawings()`. A prose line the region's box only grazes is left out.
`problem` says why there is no LaTeX to trust: no text layer there, a Type-3 font, glyphs without Unicode
meaning, or LaTeX that does not parse (the block is then flagged and written as plain text by the pipeline).

What must never live here: the structure rules (formula_layout), symbol tables (layer_math, tex_fonts), the
pipeline.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from app.core.text.formula_layout import (BIG_OPERATORS, PIECES, RULE_MAX_THICK, TALL, Atom, Rule, build,
                                          rows_of)
from app.core.text.layer_math import MATH_FONTS, command, layer_latex, parse_problem
from app.core.text.tex_fonts import bold_font, font_style, glyph_char, is_extension_font, unicode_math

_ITALIC = re.compile(r"CMMI|Italic|Oblique|LMMathItalic|-It\b|Ital", re.IGNORECASE)


def page_glyphs(page, box) -> tuple[list[Atom], list[str]]:
    """The glyphs whose centre lies in `box` (points) and the fonts they are set in. Boxes are the glyphs' own
    outlines (TEXT_ACCURATE_BBOXES: a script's box is its ink, not its font's full height); a glyph the PDF
    cannot name is read by its font's own code (app.core.text.tex_fonts: CMEX's sums, radicals, tall
    brackets)."""
    import pymupdf

    x0, y0, x1, y1 = box
    # the page's full width: a line's box is then all of it (a prose line the box grazes, seen whole)
    clip = pymupdf.Rect(page.rect.x0, y0 - 2, page.rect.x1, y1 + 2)
    atoms, fonts = [], []
    for font, size, ch, raw, line in page_chars(page, clip):
        lx0, _, lx1, _ = line
        if lx1 - lx0 > 0 and (min(lx1, x1) - max(lx0, x0)) / (lx1 - lx0) < 0.6:
            continue  # a prose line the formula's box only reaches into (the layout's box is loose)
        fonts.append(font)
        a, b, c1, d = (float(v) for v in raw["bbox"])
        if not (x0 - 1 <= (a + c1) / 2 <= x1 + 1 and y0 - 1 <= (b + d) / 2 <= y1 + 1):
            continue
        atom = glyph_atom(font, size, ch, raw)
        if atom is not None:
            atoms.append(atom)
    return atoms, sorted(set(fonts))


def page_chars(page, clip) -> list[tuple[str, float, dict, dict, tuple]]:
    """Every glyph in `clip` (a pymupdf.Rect) as (font, size, its char as named, its char as coded, its line's
    box): named by its Unicode, coded by its font's own code where it has none (TEXT_CID_FOR_UNKNOWN_UNICODE);
    boxes the glyphs' ink (TEXT_ACCURATE_BBOXES)."""
    import pymupdf

    flags = pymupdf.TEXTFLAGS_RAWDICT | pymupdf.TEXT_ACCURATE_BBOXES
    named = _chars(page.get_text("rawdict", clip=clip, flags=flags))
    coded = _chars(page.get_text("rawdict", clip=clip, flags=flags | pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE))
    if len(coded) != len(named):  # never seen; then no glyph counts as unknown
        named = coded
    return [(font, size, ch, raw, line) for (font, size, ch, line), (_, _, raw, _) in zip(named, coded)]


def glyph_atom(font: str, size: float, ch: dict, raw: dict) -> Atom | None:
    """One glyph (a rawdict char as named, `ch`, and as coded, `raw`) as an atom: its character read by its
    font's code where the PDF cannot name it, its LaTeX, its alphabet, its row's baseline (None: it draws no
    character a formula needs)."""
    c = glyph_char(font, ord(raw["c"][:1] or " "), known=ch["c"] != "\ufffd")
    if not c.strip():
        return None
    a, b, c1, d = (float(v) for v in raw["bbox"])
    c, style = unicode_math(c)  # 𝐸 → E; 𝔾 → G in \mathbb
    tex = command(c)
    style = style or (font_style(font) if "A" <= c <= "Z" else None)
    if style is None and c.isascii() and c.isalpha() and bold_font(font):  # a vector or matrix: E, B, x
        style = r"\boldsymbol" if _ITALIC.search(font) else r"\mathbf"
    if style and c.isalnum():
        tex = style + "{" + tex + "}"
    if not tex.strip():
        return None
    base = float(raw["origin"][1])
    if is_extension_font(font):  # hangs below its origin: its row is where its middle sits (the axis)
        base = (b + d) / 2 + 0.25 * size
    upright = not _ITALIC.search(font) and not MATH_FONTS.match(font)
    return Atom(tex, a, b, c1, d, size, base, c, upright=upright)


def _chars(raw: dict) -> list[tuple[str, float, dict, tuple]]:
    return [(str(span.get("font", "")), float(span.get("size") or 0), ch, tuple(line["bbox"]))
            for block in raw.get("blocks", []) for line in block.get("lines", [])
            for span in line.get("spans", []) for ch in span.get("chars", [])]


def page_rules(page, box) -> list[Rule]:
    """Thin horizontal strokes and filled bars in `box`: fraction rules, radicals' bars, overlines."""
    x0, y0, x1, y1 = box
    out = []
    for path in page.get_drawings():
        for item in path.get("items", []):
            if item[0] == "re":
                r = item[1]
                if r.height <= RULE_MAX_THICK and r.width > 2 * max(r.height, 0.3):
                    out.append(Rule(r.x0, (r.y0 + r.y1) / 2, r.x1))
            elif item[0] == "l":
                p, q = item[1], item[2]
                if abs(p.y - q.y) < 0.5 and abs(p.x - q.x) > 2 and (path.get("width") or 1) <= RULE_MAX_THICK:
                    out.append(Rule(min(p.x, q.x), (p.y + q.y) / 2, max(p.x, q.x)))
    # mostly inside (a fraction's rule runs a little past its widest glyph, and a layout box may stop there)
    return [r for r in out if y0 - 1 <= r.y <= y1 + 1 and min(r.x1, x1) - max(r.x0, x0) >= 0.8 * r.width]


@dataclass(frozen=True)
class FormulaReading:
    """A formula region's LaTeX, or why there is none (`problem`: written as plain text then, and flagged)."""
    latex: str
    problem: str | None = None


def formula_from_page(page, box) -> FormulaReading:
    """The formula in `box` (points, unrotated page) as LaTeX, checked by parsing it."""
    atoms, fonts = page_glyphs(page, box)
    type3 = {str(f[3]).split("+")[-1] for f in page.get_fonts() if f[2] == "Type3"}
    if any(f.split("+")[-1] in type3 for f in fonts):
        return FormulaReading("", "no usable text layer: the formula is set in a Type-3 font")
    if not atoms:
        return FormulaReading("", "no usable text layer under the formula")
    unnamed = sum(1 for a in atoms if a.char == "\ufffd" or 0xE000 <= ord(a.char[:1] or " ") <= 0xF8FF)
    if unnamed > len(atoms) / 4:
        return FormulaReading("", "no usable text layer: the formula's glyphs have no Unicode meaning")
    rules = page_rules(page, box)
    latex = build(atoms, rules) if rules or not _flat(atoms) else _as_typed(page, box)
    problem = parse_problem(latex)
    return FormulaReading(latex, f"the LaTeX rebuilt from the text layer does not parse ({problem})"
                          if problem else None)


def _flat(atoms: list[Atom]) -> bool:
    """Glyphs with no structure to rebuild: one row, one size, nothing built of parts (no big operator,
    radical or tall bracket) — a line typed as it reads ("E = m c^2 + sum_i x_i" in a text font)."""
    sizes = [a.size for a in atoms]
    built = any(a.char in BIG_OPERATORS or a.char in PIECES or a.char in "∫∮√" or a.height > TALL * a.size
                for a in atoms)
    return max(sizes) <= 1.1 * min(sizes) and len(rows_of(atoms)) == 1 and not built


def _as_typed(page, box) -> str:
    """A flat formula as its line reads, symbols as commands (app.core.text.layer_math.layer_latex)."""
    x0, y0, x1, y1 = box
    lines = [line["spans"] for b in page.get_text("dict", clip=box).get("blocks", [])
             for line in b.get("lines", []) if x0 - 1 <= (line["bbox"][0] + line["bbox"][2]) / 2 <= x1 + 1
             and y0 - 1 <= (line["bbox"][1] + line["bbox"][3]) / 2 <= y1 + 1]
    number = [spans for spans in lines if _NUMBER.match("".join(s.get("text", "") for s in spans).strip())]
    tag = "".join(s["text"] for s in number[-1]).strip()[1:-1] if number and len(lines) > 1 else None
    latex = layer_latex([spans for spans in lines if tag is None or spans is not number[-1]])
    latex = _DOTS.sub(lambda m: r"\cdots " if "cdot" in m.group() else r"\ldots ", latex).strip()
    return latex + (rf" \tag{{{tag}}}" if tag else "")


_NUMBER = re.compile(r"^\(\d+(?:\.\d+)?[a-z]?\)$")  # an equation number set on its own: "(7)", "(2.1a)"
# TeX's \ldots and \cdots, three glyphs the layer spells as dots
_DOTS = re.compile(r"(?<![\d.])\.\s?\.\s?\.(?![\d.])|\\cdot\s*\\cdot\s*\\cdot(?![A-Za-z])\s?")
