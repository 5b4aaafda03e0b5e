"""Display formulas whose scripts and limits stand on text-layer lines of their own (a page printed from HTML:
`e` and its raised `iπ`, `∫` and its limits, are separate lines): each is one formula, written as LaTeX that
latex2mathml renders to the page's symbols; bold letters stay bold (vectors)."""
from __future__ import annotations

from pathlib import Path

from app.bench.formula_score import display_formulas, mathml_symbols, normalise
from app.core.layout.page_boxes import Line, _one_band
from app.core.text.layer_math import parse_problem
from app.core.text.tex_fonts import bold_font

PAGE = Path(__file__).resolve().parents[1] / "corpora" / "unittests" / "pdfs" / "mathfuncs.pdf"


def test_one_band_takes_scripts_on_their_own_lines() -> None:
    e = Line((195, 192, 201, 199), "e", False, True, "Times-Italic", 14.5)
    sup = Line((201, 186, 209, 193), "iπ", False, True, "Times-Italic", 10.2)
    rest = Line((214, 189, 256, 199), "+ 1 = 0", False, True, "TimesNewRomanPSMT", 14.5)
    assert _one_band([e, sup, rest])
    far = Line((201, 150, 209, 157), "iπ", False, True, "Times-Italic", 10.2)  # a line of its own above
    assert not _one_band([e, far, rest])
    assert bold_font("Times-Bold") and bold_font("ABCDEF+CMBX10") and not bold_font("Times-Italic")


def test_a_page_of_html_formulas_reads_as_latex() -> None:
    from pipeline_kit import read

    md = read(PAGE, markdown=True, engine="auto", layout="auto")
    found = display_formulas(md)
    for latex in found:
        assert parse_problem(latex) is None, latex
    want = {r"e^{i \pi}+1=0", r"a^{2}+b^{2}=c^{2}", r"\int_{a}^{b} f(x) d x=F(b)-F(a)"}
    for ref in want:
        assert any(normalise(ref) == normalise(f) for f in found), (ref, found)
        assert any(mathml_symbols(ref) == mathml_symbols(f) for f in found), ref
    maxwell = next(f for f in found if r"\nabla" in f)
    assert r"\mathbf{E}" in maxwell and r"\mathbf{B}" in maxwell
