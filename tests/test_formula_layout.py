"""Formulas from a born-digital page's glyphs and rules as LaTeX (app.core.text.formula_page /
formula_layout): pages typeset by pdflatex at test time, each formula compared with the LaTeX it was made from
— token by token after normalisation (app.bench.formula_score) and by the symbols latex2mathml renders — and
the default pipeline's Markdown for such a page (display formulas in `$$`, no zero-width spaces, no stray
`\\\\`)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pymupdf
import pytest

from app.bench.formula_score import formula_scores, mathml_symbols, normalise, similarity
from app.core.text.formula_page import formula_from_page
from app.core.text.layer_math import parse_problem
from app.core.text.tex_fonts import glyph_char

REALDOCS = Path(__file__).resolve().parents[1] / "corpora/realdocs"
needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="missing part: pdflatex (apt: "
                                    "texlive-latex-base texlive-fonts-recommended) typesets the test pages")

FORMULAS = [
    r"E = \frac{\rho}{\epsilon_0}",
    r"S = \sum_{i=1}^{n} x_i^2",
    r"A = \begin{pmatrix} a & b \\ c & d \end{pmatrix}",
    r"r = \sqrt{a^2 + b^2}",
    r"\int_{0}^{\infty} e^{-x} \, dx = 1",
    r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}",
    r"\lim_{n \to \infty} \left( 1 + \frac{1}{n} \right)^{n} = e",
    r"f(x) = \begin{cases} 1 & x > 0 \\ 0 & x \leq 0 \end{cases}",
    r"\prod_{k=1}^{N} \hat{a}_k = \mathbb{R} \cap \mathcal{A}",
    r"B = \begin{bmatrix} 1 & 0 & 2 \\ 0 & 1 & 3 \\ 4 & 5 & 6 \end{bmatrix}",
    r"\frac{\partial^2 u}{\partial t^2} = c^2 \nabla^2 u",
    r"\sqrt[3]{x} + \bar{y} = \frac{1}{1 + \frac{1}{z}}",
    r"\det \begin{vmatrix} a & b \\ c & d \end{vmatrix} = ad - bc",
    r"\sum_{k=0}^{\infty} \frac{x^k}{k!} = e^x",
    r"\|x\|_2 \leq \alpha \sum_{j} |x_j|",
]


def _typeset(folder: Path, body: str) -> Path:
    tex = folder / "page.tex"
    head = r"\documentclass{article}\usepackage{amsmath,amssymb}\begin{document}"
    tex.write_text(head + body + r"\end{document}", encoding="utf-8")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=folder,
                   capture_output=True, timeout=120, check=True)
    return folder / "page.pdf"


@pytest.fixture(scope="module")
def one_per_page(tmp_path_factory) -> Path:
    """Each formula alone on its page (no page number), so its box is the page's ink."""
    if shutil.which("pdflatex") is None:
        pytest.skip("missing part: pdflatex (apt: texlive-latex-base texlive-fonts-recommended)")
    body = r"\pagestyle{empty}" + "".join(rf"\[ {f} \] \newpage " for f in FORMULAS)
    return _typeset(tmp_path_factory.mktemp("formulas"), body)


def _ink(page) -> tuple[float, float, float, float]:
    rects = [pymupdf.Rect(b[:4]) for b in page.get_text("blocks")] + [d["rect"] for d in page.get_drawings()]
    box = rects[0]
    for r in rects[1:]:
        box |= r
    return tuple(box)


@needs_pdflatex
@pytest.mark.parametrize("n", range(len(FORMULAS)))
def test_a_typeset_formula_is_read_back_as_the_latex_it_was_made_from(one_per_page, n):
    with pymupdf.open(one_per_page) as doc:
        reading = formula_from_page(doc[n], _ink(doc[n]))
    source = FORMULAS[n]
    assert reading.problem is None, reading.problem
    assert parse_problem(reading.latex) is None
    assert normalise(reading.latex) == normalise(source), (reading.latex, source)
    assert mathml_symbols(reading.latex) == mathml_symbols(source)  # renders to the same symbols
    assert "\u200b" not in reading.latex


@needs_pdflatex
def test_the_default_pipeline_writes_display_formulas_as_latex_between_dollars(tmp_path):
    from app.core.pipeline import Pipeline, PipelineOptions

    prose = "Ordinary words of a paragraph that explains what follows, long enough to be read as prose. " * 2
    pdf = _typeset(tmp_path, "".join(rf"{prose} \[ {f} \] " for f in FORMULAS[:4]))
    pipe = Pipeline(PipelineOptions(engine="builtin", text_layer="prefer"))
    try:
        md = pipe.run(pdf).to_markdown(anchors=False)
    finally:
        pipe.close()
    blocks = re.findall(r"\$\$\n(.+?)\n\$\$", md, re.S)
    assert r"\frac{\rho}{\epsilon_{0}}" in md and r"\sum_{i = 1}^{n}" in md and r"\begin{pmatrix}" in md
    assert all(parse_problem(b) is None for b in blocks)
    assert "\u200b" not in md
    outside = re.sub(r"\\begin\{(\w+)\}.*?\\end\{\1\}", "", "\n".join(blocks), flags=re.S)
    assert "\\\\" not in outside  # no line break written between the pieces of one formula
    score, parses = formula_scores("\n".join(f"$${f}$$" for f in FORMULAS[:4]), md)
    assert score == pytest.approx(1.0) and parses == 1.0


def test_a_real_formula_page_keeps_its_superscript():
    """docling's test page (corpora/realdocs d03): "a" in CMMI10, a raised 7-pt "2", "+ 8 = 12" in CMR10."""
    with pymupdf.open(REALDOCS / "pages/d03-code-formula-2.pdf") as doc:
        page = doc[0]
        line = next(b for b in page.get_text("blocks") if "= 12" in b[4])
        reading = formula_from_page(page, line[:4])
    assert reading.latex == "a^{2} + 8 = 12" and reading.problem is None


def test_tex_math_fonts_are_read_by_their_own_codes():
    assert glyph_char("ZCRETG+CMEX10", 0x58, known=False) == "∑"  # display sum ("X" read as text)
    assert glyph_char("CMEX10", 0x50, known=False) == "∑" and glyph_char("CMEX10", 0x5A, known=False) == "∫"
    assert glyph_char("CMEX10", 0x70, known=False) == "√"  # radical ("p")
    assert glyph_char("CMEX10", 0x12, known=False) == "("  # a tall parenthesis (control code 0x12)
    assert glyph_char("CMSY10", 0x03, known=False) == "∗"
    assert glyph_char("CMMI10", ord("x"), known=True) == "x"
    assert glyph_char("Helvetica", 0x41, known=False) == "\ufffd"  # no table for a text font: still unknown
    assert glyph_char("CMEX10", 0xF8EE, known=True) == "⎡"  # Adobe's private-use name of a bracket piece


def test_latex_that_does_not_render_is_a_problem():
    assert parse_problem(r"\frac{a}{b} + \sqrt{x}") is None
    assert parse_problem(r"\begin{aligned} a & = b \\ c & = d \end{aligned}") is None
    assert "unbalanced" in parse_problem(r"a^{2")
    assert parse_problem(r"\frac{a}") and parse_problem(r"\notacommand x") and parse_problem(r"x_")


def test_the_formula_score_compares_latex_not_characters():
    ref = r"E = \frac{\rho}{\epsilon_0}"
    assert similarity(ref, r"E=\frac\rho{\varepsilon_{0}}") == 1.0  # bracing and synonyms do not count
    assert similarity(ref, r"E = \rho \\ \epsilon_{0}") < 0.7  # the fraction lost
    assert similarity(r"\begin{align} a &= b \label{x} \end{align}", "a = b") == 1.0
    assert formula_scores("text only", "$$a$$") == (None, 1.0)
    assert formula_scores("$$a+b$$", "no formula") == (0.0, None)


def test_a_formula_that_cannot_be_rebuilt_is_plain_text_and_a_review_reason():
    from app.core.document.regions import Region
    from app.core.pipeline.assembly import format_block
    from app.core.pipeline.quality import review_reasons

    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="formula", task="formula", order=0,
                    box_pt=(0, 0, 10, 10), dpi=72.0, score=1.0, source="pymupdf")
    region.text = "E = ρ ε0"
    region.extra["stats"] = {"engine": "text-layer", "text_source": "text-layer"}
    assert format_block(region) == "$$\nE = ρ ε0\n$$"
    region.extra["stats"]["formula_problem"] = "no usable text layer: the formula is set in a Type-3 font"
    assert format_block(region) == "E = ρ ε0"
    assert any(r.startswith("formula written as plain text") for r in review_reasons(region))


def test_aligned_rows_render_as_mathml_in_the_exports():
    import xml.etree.ElementTree as ET

    from app.core.pipeline.mathml import latex_to_mathml

    mathml = latex_to_mathml(r"\begin{aligned} r & = \sqrt{a^{2}} \\ A & = 1 \end{aligned}", True)
    assert ET.fromstring(mathml).iter() and "<mtable" in mathml


def test_a_real_papers_display_formula_matches_its_latex_source():
    """corpora/realdocs f01-p2: a paper's own pdfTeX output; the reference is its LaTeX source."""
    from app.bench.formula_score import display_formulas

    ref = (REALDOCS / "refs/f01-zeta-pressure-p2.md").read_text(encoding="utf-8")
    sources = display_formulas(ref)
    with pymupdf.open(REALDOCS / "pages/f01-zeta-pressure-p2.pdf") as doc:
        page = doc[0]
        sums = [b for b in page.get_text("blocks") if "F(g)" in b[4] or "aijW" in b[4]]
        box = (min(b[0] for b in sums), min(b[1] for b in sums) - 12, max(b[2] for b in sums),
               max(b[3] for b in sums) + 12)
        reading = formula_from_page(page, box)
    assert reading.problem is None
    assert max(similarity(s, reading.latex) for s in sources) == 1.0, reading.latex
    assert r"\sum_{0 \leq i < j \leq 6}" in reading.latex


def test_unicode_math_letters_are_plain_letters_in_their_alphabet():
    """Word and MathML fonts (Cambria Math) write 𝐸, 𝜌, 𝔾 — letters of Unicode's mathematical alphabets."""
    from app.core.text.tex_fonts import unicode_math

    assert unicode_math("𝐸") == ("E", None) and unicode_math("𝜌") == ("ρ", None)
    assert unicode_math("𝔾") == ("G", r"\mathbb") and unicode_math("𝐱") == ("x", r"\mathbf")
    assert unicode_math("𝒜") == ("A", r"\mathcal") and unicode_math("x") == ("x", None)
    assert unicode_math("𝛂")[1] == r"\boldsymbol"


def test_a_fraction_with_zero_width_spaces_in_a_text_font_is_one_fraction(tmp_path):
    """The held-out failure's shape: E = ρ over ε₀ with zero-width spaces between the glyphs, in a text font
    (not TeX's) and a drawn rule — once written `E = \\ ​ \\ \\epsilon \\ ​0 \\ \\rho`."""
    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    if not font.is_file():
        pytest.skip("missing part: DejaVu Sans (apt: fonts-dejavu-core)")
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="dv", fontfile=str(font))
    page.insert_text((100, 100), "E\u200b = ", fontsize=12, fontname="dv")
    page.insert_text((141, 92), "\u200bρ", fontsize=12, fontname="dv")
    page.draw_line((136, 95.5), (156, 95.5), width=0.5)
    page.insert_text((138, 108), "ε\u200b", fontsize=12, fontname="dv")
    page.insert_text((145, 110), "0", fontsize=8, fontname="dv")
    reading = formula_from_page(page, (90, 80, 170, 112))
    assert reading.latex == r"E = \frac{\rho}{\varepsilon_{0}}" and reading.problem is None
    assert "\u200b" not in reading.latex and "\\\\" not in reading.latex



def test_a_formula_typed_as_it_reads_in_a_text_font_stays_as_typed():
    """The sample report's formula line, "E = m c^2 + sum_i x_i" in Times: one row of one size, nothing to
    rebuild — written as it reads, not taken apart (its underscores hang below the baseline)."""
    from app.core.base.paths import sample_document

    with pymupdf.open(sample_document()) as doc:
        page = doc[0]
        line = next(b for b in page.get_text("blocks") if "sum_i" in b[4])
        reading = formula_from_page(page, (line[0] - 3, line[1] - 3, line[2] + 3, line[3] + 3))
    assert reading.latex == "E = m c^2 + sum_i x_i" and reading.problem is None
