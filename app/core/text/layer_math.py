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
                        r"Latin ?Modern ?Math|XITS|Asana|MathJax|Symbol|rsfs|esint|wasy|stmary|txsy|pxsy|MnSymbol|"
                        r"PazoMath|txmi|pxmi|NewTXMI|NewTXSY|NewPXMI|zxxmi|MTMI|MTSY|MTEX)",
                        re.IGNORECASE)
SYMBOLS = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\varepsilon", "ϵ": r"\epsilon",
    "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ϑ": r"\vartheta", "ι": r"\iota", "κ": r"\kappa",
    "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi", "ρ": r"\rho", "σ": r"\sigma",
    "τ": r"\tau", "υ": r"\upsilon", "φ": r"\varphi", "ϕ": r"\phi", "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega",
    "Γ": r"\Gamma", "Δ": r"\Delta", "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi", "Π": r"\Pi",
    "Σ": r"\Sigma", "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega",
    "≤": r"\leq", "≥": r"\geq", "≠": r"\neq", "≈": r"\approx", "≡": r"\equiv", "∼": r"\sim", "≃": r"\simeq",
    "∝": r"\propto", "∈": r"\in", "∉": r"\notin", "⊂": r"\subset", "⊆": r"\subseteq", "⊃": r"\supset",
    "∪": r"\cup", "∩": r"\cap", "∧": r"\wedge", "∨": r"\vee", "¬": r"\neg", "∀": r"\forall", "∃": r"\exists",
    "→": r"\to", "←": r"\leftarrow", "↔": r"\leftrightarrow", "⇒": r"\Rightarrow", "⇔": r"\Leftrightarrow",
    "↦": r"\mapsto", "×": r"\times", "÷": r"\div", "·": r"\cdot", "⋅": r"\cdot", "∘": r"\circ", "±": r"\pm",
    "∓": r"\mp", "∞": r"\infty", "∂": r"\partial", "∇": r"\nabla", "√": r"\sqrt", "∑": r"\sum", "∏": r"\prod",
    "∫": r"\int", "∮": r"\oint", "⟨": r"\langle", "⟩": r"\rangle", "‖": r"\|", "…": r"\ldots", "⋯": r"\cdots",
    "−": "-", "∗": "*", "′": r"\prime", "ℓ": r"\ell", "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}",
    "ℤ": r"\mathbb{Z}",
    "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
    "∅": r"\emptyset", "⊗": r"\otimes", "⊕": r"\oplus", "ħ": r"\hbar", "ı": r"\imath", "ȷ": r"\jmath",
    "↑": r"\uparrow", "↓": r"\downarrow", "⟶": r"\longrightarrow", "⟹": r"\Longrightarrow", "≪": r"\ll",
    "≫": r"\gg", "⊥": r"\perp", "∥": r"\|", "†": r"\dagger", "⋆": r"\star", "≅": r"\cong",
    "∖": r"\setminus", "⌊": r"\lfloor", "⌋": r"\rfloor", "⌈": r"\lceil", "⌉": r"\rceil", "ϕ": r"\phi",
    "ϖ": r"\varpi", "ϱ": r"\varrho", "ς": r"\varsigma", "ℜ": r"\Re", "ℑ": r"\Im", "ℵ": r"\aleph",
    "{": r"\{", "}": r"\}", "%": r"\%", "#": r"\#", "&": r"\&", "$": r"\$", "\u200b": "",
    # what TeX's math fonts draw (app.core.text.tex_fonts)
    "⪯": r"\preceq", "⪰": r"\succeq", "≺": r"\prec", "≻": r"\succ", "↗": r"\nearrow", "↘": r"\searrow",
    "↖": r"\nwarrow", "↙": r"\swarrow", "⇑": r"\Uparrow", "⇓": r"\Downarrow", "∋": r"\ni", "△": r"\triangle",
    "▽": r"\bigtriangledown", "⊤": r"\top", "⊎": r"\uplus", "⊢": r"\vdash", "⊣": r"\dashv",
    "↕": r"\updownarrow",
    "⇕": r"\Updownarrow", "≀": r"\wr", "⨿": r"\amalg", "⊔": r"\sqcup", "⊓": r"\sqcap", "⊑": r"\sqsubseteq",
    "⊒": r"\sqsupseteq", "♣": r"\clubsuit", "♢": r"\diamondsuit", "♡": r"\heartsuit", "♠": r"\spadesuit",
    "⋄": r"\diamond", "≍": r"\asymp", "⊇": r"\supseteq", "⨆": r"\bigsqcup", "⨀": r"\bigodot",
    "⨁": r"\bigoplus", "⨂": r"\bigotimes", "⨄": r"\biguplus", "⋀": r"\bigwedge", "⋁": r"\bigvee",
    "∐": r"\coprod", "⋃": r"\bigcup", "⋂": r"\bigcap", "⊖": r"\ominus", "⊘": r"\oslash", "⊙": r"\odot",
    "◯": r"\bigcirc", "§": r"\S", "¶": r"\P", "‡": r"\ddagger", "\\": r"\backslash", "⏐": "|",
    "∙": r"\bullet", "\u2061": "", "\u2062": "", "\u2063": "",
    "\u200c": "", "\u200d": "", "\ufeff": "", "\u00a0": " ",
}


def command(ch: str) -> str:
    """One glyph's LaTeX: its command (`SYMBOLS`) or itself."""
    return SYMBOLS.get(ch, ch)


def twin_environments(latex: str) -> str:
    """`aligned` and `gathered` (which latex2mathml does not know: it writes their `&` raw) as `split`, the
    twin it knows (rows, alignment marks)."""
    return re.sub(r"\\(begin|end)\{(?:aligned|gathered)\}", r"\\\1{split}", latex)


def mathml_source(latex: str) -> str:
    """`latex` as latex2mathml can take it: `twin_environments`, `<` and `>` as `\\lt`/`\\gt`."""
    return twin_environments(latex).replace("<", r"\lt ").replace(">", r"\gt ")


ARITY = {"mfrac": 2, "mroot": 2, "msub": 2, "msup": 2, "msubsup": 3, "munder": 2, "mover": 2, "munderover": 3}


def parse_problem(latex: str) -> str | None:
    """Why `latex` does not parse as math (latex2mathml, the renderer's own parser), None when it does.
    Stricter than the parser: a command it does not know (it writes `\\foo` as a letter) or a `\\frac` short
    of an argument (it writes a one-child `<mfrac>`) is a problem too."""
    import xml.etree.ElementTree as ET

    from latex2mathml.converter import convert

    if latex.count("{") - latex.count(r"\{") != latex.count("}") - latex.count(r"\}"):
        return "unbalanced braces"
    try:  # (latex2mathml knows `aligned` by its twin `split`, and reads a bare < or > as the start of a tag)
        mathml = convert(mathml_source(latex))
    except Exception as exc:  # noqa: BLE001 - any parser error is a formula that does not render
        return f"{type(exc).__name__}: {exc}"[:160]
    try:
        tree = ET.fromstring(mathml)
    except ET.ParseError as exc:  # the parser let through what it did not understand (a bare & or <)
        return f"the MathML written from it is not well formed ({exc})"
    for node in tree.iter():
        tag = node.tag.rsplit("}", 1)[-1]
        if tag in ARITY and len(node) != ARITY[tag]:
            return f"{tag} with {len(node)} of its {ARITY[tag]} parts"
        if tag in ("mi", "mo") and (node.text or "").startswith("\\") and len(node.text or "") > 1:
            return f"unknown command {node.text}"
    return None


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
    """A formula region's LaTeX from its lines' spans (lines top to bottom); several lines are the rows of a
    `gathered` block (a bare `\\\\` between them is no LaTeX a renderer takes)."""
    parts = [p for p in (latex_from_spans(spans) for spans in lines) if p]
    if len(parts) <= 1:
        return "".join(parts)
    return r"\begin{gathered} " + r" \\ ".join(parts) + r" \end{gathered}"
