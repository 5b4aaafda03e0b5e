"""How close a converter's formulas are to a page's reference LaTeX (`bench documents --corpus real`,
`formula`).

The text scores strip `$$` and compare characters, which says little about a formula: `\\frac{a}{b}` against
`a \\\\ b` loses only a few characters. Here each display formula of the reference (`$$…$$`, `\\[…\\]`) is
compared with the output's formulas as LaTeX tokens after normalisation (`normalise`: spacing,
`\\left`/`\\right`, sizes, alignment marks, equation environments, labels and tags dropped; synonyms folded,
`\\le` → `\\leq`, `\\varepsilon` → `\\epsilon`; every script and argument braced, other braces dropped), and
scored 1 − the token edit distance over the reference's length (capped at 0), the best output formula for each
reference formula; `formula` is the mean over the reference's formulas. `parses`: the share of the output's
formulas that latex2mathml renders (app.core.text.layer_math.parse_problem). `mathml_symbols` is the multiset
of symbols a formula renders to (what a reader sees, whatever the markup), for tests that a rebuilt formula
means what its source does.

No Qt; leaf functions on strings.
"""
from __future__ import annotations

import re
from collections import Counter

from rapidfuzz.distance import Levenshtein

_DISPLAY = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]", re.S)
_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|[^\s]")
_DROP = {r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr",
         r"\biggl", r"\biggr", r"\Biggl", r"\Biggr", r"\displaystyle", r"\textstyle", r"\scriptstyle", r"\,",
         r"\;", r"\:", r"\!", r"\ ", r"\quad", r"\qquad", "~", "&", r"\\", r"\nonumber", r"\notag",
         r"\limits", r"\nolimits", r"\middle", "."}
_WITH_ARG_DROPPED = {r"\label", r"\tag", r"\hspace", r"\vspace"}
_ENVS = {"equation", "equation*", "align", "align*", "aligned", "eqnarray", "eqnarray*", "split", "gather",
         "gather*", "gathered", "multline", "multline*", "alignat", "alignat*", "alignedat", "array"}
_UNWRAP = {r"\mathrm", r"\text", r"\textrm", r"\mathit", r"\mbox", r"\rm", r"\mathnormal", r"\textit", r"\it"}
_SYNONYMS = {r"\le": r"\leq", r"\ge": r"\geq", r"\ne": r"\neq", r"\rightarrow": r"\to",
             r"\gets": r"\leftarrow", r"\varepsilon": r"\epsilon", r"\varphi": r"\phi",
             r"\vartheta": r"\theta",
             r"\ldots": r"\dots", r"\cdots": r"\dots", r"\lbrace": r"\{", r"\rbrace": r"\}", r"\vert": "|",
             r"\lvert": "|", r"\rvert": "|", r"\Vert": r"\|", r"\lVert": r"\|", r"\rVert": r"\|",
             r"\parallel": r"\|", r"\land": r"\wedge", r"\lor": r"\vee", r"\lnot": r"\neg",
             r"\dfrac": r"\frac",
             r"\tfrac": r"\frac", "−": "-", r"\colon": ":", r"\mid": "|", r"\bm": r"\boldsymbol",
             r"\mathbf": r"\boldsymbol"}
_ARITY = {r"\frac": 2, r"\binom": 2, r"\sqrt": 1, r"\hat": 1, r"\widehat": 1, r"\tilde": 1, r"\widetilde": 1,
          r"\bar": 1, r"\overline": 1, r"\vec": 1, r"\dot": 1, r"\ddot": 1, r"\mathbb": 1, r"\mathcal": 1,
          r"\mathfrak": 1, r"\mathscr": 1, r"\boldsymbol": 1, r"\underline": 1, r"\acute": 1, r"\check": 1,
          r"\breve": 1, r"\grave": 1, "^": 1, "_": 1}


def display_formulas(markdown: str) -> list[str]:
    """The display formulas of a Markdown text (their bodies, `$$…$$` and `\\[…\\]`)."""
    return [(m.group(1) or m.group(2) or "").strip() for m in _DISPLAY.finditer(markdown or "")]


def _tokens(latex: str) -> list[str]:
    from app.core.text.formula_layout import OPERATOR_NAMES

    latex = re.sub(r"(?<!\\)%.*", "", latex)
    # \operatorname{lim} is \lim; \operatorname{Ann} is upright letters, as \mathrm{Ann} (they render alike)
    latex = re.sub(r"\\operatorname\*?\{\s*([A-Za-z]+)\s*\}",
                   lambda m: "\\" + m.group(1) + " " if m.group(1) in OPERATOR_NAMES else r"\mathrm{" + m.group(1) + "}",
                   latex)
    return _TOKEN.findall(latex)


def _group(tokens: list[str], i: int) -> tuple[list, int]:
    """Tokens from `i` up to the matching `}` (or the end) as a nested list; the index after it."""
    out: list = []
    while i < len(tokens):
        t = tokens[i]
        if t == "}":
            return out, i + 1
        if t == "{":
            inner, i = _group(tokens, i + 1)
            out.append(inner)
            continue
        out.append(t)
        i += 1
    return out, i


def _canon(tree: list) -> list[str]:
    """Normalised tokens: arguments always braced, other groups flattened, tokens dropped and folded."""
    out: list[str] = []
    i = 0
    while i < len(tree):
        t = tree[i]
        i += 1
        if isinstance(t, list):
            out.extend(_canon(t))
            continue
        if t in (r"\begin", r"\end") and i < len(tree) and isinstance(tree[i], list):
            name = "".join(x for x in tree[i] if isinstance(x, str))
            i += 1
            spec = name in ("array", "alignat", "alignat*", "alignedat")
            if spec and i < len(tree) and isinstance(tree[i], list):
                i += 1  # the column spec
            if name not in _ENVS:
                out.extend([t, "{" + name + "}"])
            continue
        if t in _WITH_ARG_DROPPED:
            i += 1
            continue
        if t in _UNWRAP or t in _DROP:
            continue
        t = _SYNONYMS.get(t, t)
        if t == "'":
            out.extend(["^", "{", r"\prime", "}"])
            continue
        out.append(t)
        if t == r"\sqrt" and i < len(tree) and tree[i] == "[":
            j = tree.index("]", i) if "]" in tree[i:] else len(tree)
            out.extend(["["] + _canon(tree[i + 1:j]) + ["]"])
            i = j + 1
        for _ in range(_ARITY.get(t, 0)):
            if i >= len(tree):
                break
            arg = tree[i] if isinstance(tree[i], list) else [tree[i]]
            out.extend(["{"] + _canon(arg) + ["}"])
            i += 1
    return out


def normalise(latex: str) -> list[str]:
    """A formula's LaTeX as comparable tokens (see the module's docstring)."""
    tree, _ = _group(_tokens(latex), 0)
    return _canon(tree)


def similarity(reference: str, output: str) -> float:
    """1 − the normalised token edit distance over the reference's length, at least 0."""
    ref, out = normalise(reference), normalise(output)
    if not ref:
        return 1.0 if not out else 0.0
    return max(0.0, 1.0 - Levenshtein.distance(ref, out) / len(ref))


def formula_scores(reference_md: str, output_md: str) -> tuple[float | None, float | None]:
    """(`formula`, `parses`) for a page: the mean over the reference's display formulas of the best similarity
    to an output formula (None when the reference has none), and the share of the output's formulas that
    render (None when it wrote none)."""
    from app.core.text.layer_math import parse_problem

    refs, outs = display_formulas(reference_md), display_formulas(output_md)
    formula = None
    if refs:
        formula = sum(max((similarity(r, o) for o in outs), default=0.0) for r in refs) / len(refs)
    parses = sum(parse_problem(o) is None for o in outs) / len(outs) if outs else None
    return formula, parses


def mathml_symbols(latex: str) -> Counter:
    """The symbols a formula renders to (latex2mathml's `mi`/`mn`/`mo` leaves), as a multiset."""
    import xml.etree.ElementTree as ET

    from latex2mathml.converter import convert

    from app.core.text.layer_math import mathml_source

    tree = ET.fromstring(convert(mathml_source(latex)))
    leaves = (n.text.strip() for n in tree.iter() if n.tag.rsplit("}", 1)[-1] in ("mi", "mn", "mo", "mtext")
              and n.text and n.text.strip())
    return Counter(ch for leaf in leaves for ch in leaf if not ch.isspace())


_INLINE = re.compile(r"(?<![\\$])\$([^$\n]+?)\$(?!\$)")
_SPACED = set("=+−-<>≤≥≈≠∼→←⇒∈⊂⊆×±,")


def inline_as_text(markdown: str) -> str:
    """Each inline formula (`$…$` with LaTeX markup in it) as the symbols it renders to, in their order, as a
    text layer spells them (`$d_{S}$` → "dS", `$\\alpha \\leq \\beta$` → "α ≤ β"): the text scores compare
    reading text, and the references spell inline math as the page's layer does (their formulas are scored as
    LaTeX on their own). `$5 and $10`, with no markup, is left alone."""
    def plain(m: re.Match) -> str:
        import xml.etree.ElementTree as ET

        from latex2mathml.converter import convert

        from app.core.text.layer_math import mathml_source

        body = m.group(1)
        if not any(c in body for c in "\\^_{"):
            return m.group(0)
        try:
            tree = ET.fromstring(convert(mathml_source(body)))
        except Exception:  # noqa: BLE001 - a formula that does not render keeps its source
            return body
        out = ""
        for node in tree.iter():
            tag, text = node.tag.rsplit("}", 1)[-1], (node.text or "").strip()
            if tag in ("mi", "mn", "mo", "mtext") and text:
                out += f" {text} " if tag == "mo" and text in _SPACED else text
        return " ".join(out.split()).replace(" ,", ",")

    return _INLINE.sub(plain, markdown or "")
