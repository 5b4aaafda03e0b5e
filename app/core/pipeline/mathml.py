"""LaTeX shown as math without a browser engine: LaTeX → MathML (latex2mathml) → the rich-text subset Qt's
QTextBrowser draws (italic identifiers, <sup>/<sub>, fractions, roots, arrays as tables).

The HTML export keeps real MathML (browsers render it); only the in-app preview needs this translation. A formula
the converter cannot parse is shown as its source in a code span: readable, never an error.

latex2mathml copies `\text{...}` content into `<mtext>` as it is, so `\text{</math><script>...}` would become live
markup. `<` and `>` therefore never reach it: they travel as private-use stand-ins and come back escaped
(`&lt;` / `&gt;`) in the MathML, as text. (app.core.pipeline.html_render sanitises the result once more.)

What must never live here: Qt (the export and `convert` use this too).
"""
from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from functools import lru_cache

_NS = "{http://www.w3.org/1998/Math/MathML}"
_SPACED_OPS = set("=+−-×÷<>≤≥≈≠→←⇒∈∉⊂⊆∪∩±∓·")


_LT, _GT = "\ue0f0", "\ue0f1"  # stand-ins for < and > while latex2mathml works (private use, never in OCR text)
_STAND_INS = {f"<mi>{_LT}</mi>": "<mo>&lt;</mo>", f"<mi>{_GT}</mi>": "<mo>&gt;</mo>", _LT: "&lt;", _GT: "&gt;"}


def latex_to_mathml(latex: str, display: bool = False) -> str | None:
    from app.core.text.layer_math import twin_environments

    source = twin_environments(latex.strip()).replace(_LT, "").replace(_GT, "")
    source = source.replace("<", _LT).replace(">", _GT)
    try:
        from latex2mathml.converter import convert

        mathml = convert(source, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - any parse failure falls back to the source
        return None
    for stand_in, escaped in _STAND_INS.items():
        mathml = mathml.replace(stand_in, escaped)
    return mathml


@lru_cache(maxsize=512)
def latex_to_rich_text(latex: str, display: bool = False) -> str:
    mathml = latex_to_mathml(latex, display)
    body = None
    if mathml:
        try:
            body = _node(ET.fromstring(mathml))
        except ET.ParseError:
            body = None
    if body is None:
        body = f"<code>{html.escape(latex.strip())}</code>"
    else:
        body = f'<span style="font-family: serif;">{body}</span>'
    if display:
        return f'<p align="center" style="font-size: large; margin: 8px 0;">{body}</p>'
    return body


def _tag(el: ET.Element) -> str:
    return el.tag.replace(_NS, "")


def _kids(el: ET.Element) -> list[str]:
    return [_node(c) for c in el]


def _wrap(text: str) -> str:
    """Parenthesise a compound sub-expression for a linear fraction."""
    plain = text.replace("<i>", "").replace("</i>", "")
    return text if len(plain) <= 2 or plain.isalnum() else f"({text})"


def _node(el: ET.Element) -> str:
    tag = _tag(el)
    text = html.escape(el.text or "")
    kids = _kids(el)
    if tag == "mi":
        return f"<i>{text}</i>" if len(el.text or "") == 1 and (el.text or "").isalpha() else text
    if tag in ("mn", "mtext", "ms"):
        return text
    if tag == "mo":
        raw = el.text or ""
        return f"&#8201;{text}&#8201;" if raw in _SPACED_OPS else text
    if tag == "mspace":
        return "&#8197;"
    if tag == "msup" and len(kids) == 2:
        return f"{kids[0]}<sup>{kids[1]}</sup>"
    if tag == "msub" and len(kids) == 2:
        return f"{kids[0]}<sub>{kids[1]}</sub>"
    if tag in ("msubsup", "munderover") and len(kids) == 3:
        return f"{kids[0]}<sub>{kids[1]}</sub><sup>{kids[2]}</sup>"
    if tag == "munder" and len(kids) == 2:
        return f"{kids[0]}<sub>{kids[1]}</sub>"
    if tag == "mover" and len(kids) == 2:
        accent = (list(el)[1].text or "").strip()
        if accent in ("¯", "‾", "―", "_", "→", "^", "~", "˙", "^", "ˆ", "˜"):
            return f'<span style="text-decoration: overline;">{kids[0]}</span>'
        return f"{kids[0]}<sup>{kids[1]}</sup>"
    if tag == "mfrac" and len(kids) == 2:
        return f"{_wrap(kids[0])}&#8260;{_wrap(kids[1])}"
    if tag == "msqrt":
        return f'√<span style="text-decoration: overline;">{"".join(kids)}</span>'
    if tag == "mroot" and len(kids) == 2:
        return f'<sup>{kids[1]}</sup>√<span style="text-decoration: overline;">{kids[0]}</span>'
    if tag == "mtable":
        rows = "".join(f"<tr>{''.join(_node(c) for c in row)}</tr>" for row in el)
        return f'<table style="border: none;" cellpadding="2">{rows}</table>'
    if tag == "mtd":
        return f'<td style="border: none;">{"".join(kids)}</td>'
    if tag == "mfenced":
        return f"({', '.join(kids)})"
    return text + "".join(kids)
