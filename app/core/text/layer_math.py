"""A formula's LaTeX from a born-digital page's own text layer.

A PDF made from LaTeX keeps a formula as glyphs: "a", a smaller raised "2", "+ 8 = 12", in math fonts (CMMI, CMSY,
CMEX, MSBM…). Its plain text, "a2 + 8 = 12", is wrong; the layer has what it takes to write `a^{2} + 8 = 12`:
each span's size, baseline and font. `latex_from_spans(spans)` rebuilds the formula from them:

- a span smaller than the line's main size (≤ `SCRIPT_SIZE` of it) is a script: raised above the main baseline →
  `^{…}`, lowered below it → `_{…}` (PyMuPDF's superscript flag says "raised" too);
- symbols become their LaTeX commands (`SYMBOLS`: Greek letters, relations, operators, arrows, big operators);
- everything else is kept as it is (digits, Latin letters, brackets).

`set_as_math(spans)`: is a line typeset as math (math fonts, and much of it or a script)? The layout takes some
one-line equations for a section header or a caption; such a line is a formula whatever its words look like.

What must never live here: the layout, rendering, OCR.
"""
from __future__ import annotations

import re

SCRIPT_SIZE = 0.85  # a span at most this share of the line's main size is a super- or subscript
MATH_FONTS = re.compile(r"^(?:[A-Z]{6}\+)?(?:CMMI|CMSY|CMEX|CMBSY|MSAM|MSBM|EUFM|EUSM|LMMath|STIX|Cambria ?Math|"
                        r"Latin ?Modern ?Math|XITS|Asana|MathJax|Symbol|rsfs|esint|wasy|stmary|txsy|pxsy|MnSymbol)",
                        re.IGNORECASE)
SYMBOLS = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon", "ϵ": r"\epsilon",
    "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ϑ": r"\vartheta", "ι": r"\iota", "κ": r"\kappa",
    "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma",
    "τ": r"\tau", "υ": r"\upsilon", "φ": r"\phi", "ϕ": r"\phi", "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega",
    "Γ": r"\Gamma", "Δ": r"\Delta", "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi", "Π": r"\Pi",
    "Σ": r"\Sigma", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
    "≤": r"\leq", "≥": r"\geq", "≠": r"\neq", "≈": r"\approx", "≡": r"\equiv", "∼": r"\sim", "≃": r"\simeq",
    "∝": r"\propto", "∈": r"\in", "∉": r"\notin", "⊂": r"\subset", "⊆": r"\subseteq", "⊃": r"\supset",
    "∪": r"\cup", "∩": r"\cap", "∧": r"\wedge", "∨": r"\vee", "¬": r"\neg", "∀": r"\forall", "∃": r"\exists",
    "→": r"\to", "←": r"\leftarrow", "↔": r"\leftrightarrow", "⇒": r"\Rightarrow", "⇔": r"\Leftrightarrow",
    "↦": r"\mapsto", "×": r"\times", "÷": r"\div", "·": r"\cdot", "⋅": r"\cdot", "∘": r"\circ", "±": r"\pm",
    "∓": r"\mp", "∞": r"\infty", "∂": r"\partial", "∇": r"\nabla", "√": r"\sqrt", "∑": r"\sum", "∏": r"\prod",
    "∫": r"\int", "∮": r"\oint", "⟨": r"\langle", "⟩": r"\rangle", "‖": r"\|", "…": r"\ldots", "⋯": r"\cdots",
    "−": "-", "∗": "*", "′": "'", "ℓ": r"\ell", "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}",
    "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
}


def _latex(text: str) -> str:
    out = []
    for ch in text:
        cmd = SYMBOLS.get(ch)
        if cmd is None:
            out.append(ch)
        else:  # a command followed by a letter needs a space ("\alpha x", not "\alphax")
            out.append(cmd + (" " if cmd[-1].isalpha() and cmd.startswith("\\") else ""))
    return "".join(out)


def math_share(spans: list[dict]) -> float:
    """The share of a line's visible characters set in math fonts."""
    total = sum(len(s.get("text", "").strip()) for s in spans)
    math = sum(len(s.get("text", "").strip()) for s in spans if MATH_FONTS.match(str(s.get("font", ""))))
    return math / total if total else 0.0


def set_as_math(spans: list[dict], share: float = 0.3) -> bool:
    """Is a line typeset as math: some of it in math fonts, and either much of it or with a script (a smaller,
    superscripted span: "a" "2" "+ 8 = 12")?"""
    part = math_share(spans)
    if part <= 0:
        return False
    sizes = [float(s.get("size") or 0) for s in spans if s.get("text", "").strip()]
    script = bool(sizes) and any(0 < z <= SCRIPT_SIZE * max(sizes) for z in sizes)
    return part >= share or script


def latex_from_spans(spans: list[dict]) -> str:
    """One line's LaTeX from its spans (PyMuPDF `get_text("dict")` spans: text, size, flags, origin), in order."""
    spans = [s for s in spans if s.get("text")]
    if not spans:
        return ""
    sizes = [float(s.get("size") or 0) for s in spans if s.get("text", "").strip()]
    main = max(sizes, key=lambda z: sum(len(s["text"]) for s in spans if float(s.get("size") or 0) == z)) \
        if sizes else 0.0
    base = next((float(s["origin"][1]) for s in spans if float(s.get("size") or 0) == main and "origin" in s), None)
    out: list[str] = []
    for s in spans:
        text = _latex(s["text"])
        size = float(s.get("size") or 0)
        if not s["text"].strip() or main <= 0 or size > SCRIPT_SIZE * main or base is None:
            out.append(text)
            continue
        y = float(s.get("origin", (0, base))[1])
        raised = y < base - 0.1 * main or bool(int(s.get("flags") or 0) & 1)
        out.append(("^{" if raised else "_{") + text.strip() + "}")
    return re.sub(r"\s+", " ", "".join(out)).strip()


def layer_latex(lines: list[list[dict]]) -> str:
    """A formula region's LaTeX from its lines' spans (lines top to bottom), lines joined by `\\\\`."""
    parts = [latex_from_spans(spans) for spans in lines]
    return " \\\\ ".join(p for p in parts if p)
