"""A formula's LaTeX from a born-digital page's own text layer (app.core.text.layer_math): scripts from span sizes and
baselines, symbols as commands, and a one-line equation the layout took for a heading read as a formula."""
from __future__ import annotations

from pathlib import Path

import pymupdf

from app.core.text.layer_math import latex_from_spans, layer_latex, set_as_math

D03 = Path(__file__).resolve().parents[1] / "corpora/realdocs/pages/d03-code-formula-2.pdf"


def _spans(pdf: Path, needle: str) -> list[dict]:
    page = pymupdf.open(pdf)[0]
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            if needle in "".join(s["text"] for s in line["spans"]):
                return line["spans"]
    raise AssertionError(f"{needle!r} not on the page")


def test_a_real_latex_formula_keeps_its_superscript():
    """docling's test page (corpora/realdocs d03): "a" in CMMI10, a raised 7-pt "2", "+ 8 = 12" in CMR10."""
    spans = _spans(D03, "= 12")
    assert "".join(s["text"] for s in spans).replace(" ", "") == "a2+8=12"  # the plain text loses the square
    assert latex_from_spans(spans) == "a^{2} + 8 = 12"
    assert set_as_math(spans)


def test_scripts_and_symbols():
    main = {"size": 10.0, "flags": 0, "font": "CMMI10"}
    spans = [dict(main, text="x", origin=(0, 100)), dict(main, text="i", size=7.0, origin=(5, 102)),
             dict(main, text=" ≤ α·β", origin=(9, 100), font="CMSY10")]
    assert latex_from_spans(spans) == r"x_{i} \leq \alpha \cdot \beta"
    two = layer_latex([spans, [dict(main, text="y = 1", origin=(0, 120))]])
    assert two == r"\begin{gathered} x_{i} \leq \alpha \cdot \beta \\ y = 1 \end{gathered}"  # no bare \\
    prose = [{"text": "The sum is 12 = 3 + 9.", "size": 10.0, "flags": 0, "font": "Times-Roman", "origin": (0, 0)}]
    assert not set_as_math(prose)  # no math font: prose with numbers


def test_an_equation_laid_out_as_a_heading_becomes_a_formula():
    from app.core.layout.page_boxes import Line, refine

    boxes = [{"boxclass": "section-header", "x0": 50, "y0": 50, "x1": 200, "y1": 65}]
    out = refine(boxes, [Line((55, 52, 150, 63), "a2 + 8 = 12", False, True)])
    assert out[0]["boxclass"] == "formula"
    heading = refine(boxes, [Line((55, 52, 150, 63), "2 Results = Findings", False, False)])
    assert heading[0]["boxclass"] == "section-header"
