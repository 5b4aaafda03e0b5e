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


def test_a_display_cut_into_rows_by_the_layout_is_one_formula_again() -> None:
    """The same equations as cards in the other order: the layout boxes Maxwell's equations row by row, the
    fractions' denominators as text between them, and Euler's identity over a card's background picture."""
    from pipeline_kit import read

    md = read(PAGE.with_name("mathfuncs_colswitch.pdf"), markdown=True, engine="auto", layout="auto")
    found = display_formulas(md)
    maxwell = [f for f in found if r"\nabla" in f]
    assert len(maxwell) == 1, found
    for part in (r"\frac{\rho}{\varepsilon_{0}}", r"\frac{\partial \mathbf{B}}{\partial t}", r"\mu_{0} \mathbf{J}"):
        assert part in maxwell[0]
    assert any(normalise(f) == normalise(r"e^{i \pi}+1=0") for f in found)
    assert "∂t ∇×" not in md  # no fragment left as prose


def test_numbered_cards_in_a_grid_read_in_their_numbers_order() -> None:
    from app.core.layout.regroup import numbered_order

    def box(cls, text, y):
        return {"boxclass": cls, "x0": 0, "y0": y, "x1": 10, "y1": y + 5, "t": text}

    cards = [box("section-header", "1. One", 0), box("text", "a", 1), box("section-header", "3. Three", 2),
             box("text", "c", 3), box("section-header", "2. Two", 4), box("text", "b", 5),
             box("section-header", "4. Four", 6)]
    text_of = {(b["x0"], b["y0"], b["x1"], b["y1"]): b["t"] for b in cards}.get
    assert [b["t"] for b in numbered_order(cards, text_of)] == ["1. One", "a", "2. Two", "b", "3. Three", "c",
                                                                "4. Four"]
    gap = [cards[0], cards[2], cards[6]]  # 1, 3, 4: not consecutive, left alone
    assert numbered_order(gap, text_of) == gap
    from pipeline_kit import read

    md = read(PAGE, markdown=True, engine="auto", layout="auto")
    spots = [md.index(h) for h in ("1. Euler", "2. Pythagorean", "3. The Fundamental", "4. Maxwell")]
    assert spots == sorted(spots)


def test_a_display_with_many_scripts_keeps_them_as_scripts() -> None:
    """An arXiv paper's displays where script-size glyphs outnumber the main ones (ζ_n^{ψ(gs)} twice, sums with
    limits, a bracket around a sum): the row is read in its main size, the bracket is no matrix, and a comma
    under a sum is part of its limit."""
    from pipeline_kit import read

    md = read(PAGE.with_name("math_2503_04086.pdf"), markdown=True, engine="auto", layout="auto")
    found = display_formulas(md)
    strip = lambda f: [t for t in normalise(f) if t != "."]  # noqa: E731 - a display's closing full stop
    first = r"\lambda_{g}=\sum_{s \in S} \zeta_{n}^{\psi(g s)}=\sum_{i=1}^{k}\left[\sum_{s, R s=\mathcal{I}_{i}} " \
            r"\zeta_{n}^{\psi(g s)}\right]"
    assert any(strip(first) == strip(f) for f in found), found
    head, tail = strip(r"\sum_{s, R s=\mathcal{I}_{i}} \zeta_{n}^{\psi(g s)}="), strip(r"=c(g, R / \mathrm{Ann}_{R}(x_{i}))")
    assert any(strip(f)[:len(head)] == head and strip(f)[-len(tail):] == tail for f in found), found
    for latex in found:
        assert parse_problem(latex) is None, latex
    assert not any(r"\begin{bmatrix}" in f or r"\begin{gathered}" in f for f in found)


def test_inline_math_whose_letters_are_the_text_italics() -> None:
    """mathpazo sets a formula's letters in the text face's italics (URW Palladio Italic) and its symbols in
    PazoMath: a lone italic letter beside math is a variable, so "u ∈ (R/Ann_R(x_i))^×" is one formula."""
    from pipeline_kit import read

    from app.bench.unit_checks import formulas, same_formula

    md = read(PAGE.with_name("math_2503_04086.pdf"), markdown=True, engine="auto", layout="auto")
    found = formulas(md)
    assert any(same_formula(r"u \in\left(R / \operatorname{Ann}_{R}\left(x_{i}\right)\right)^{\times}", f)
               for f in found), found
    assert any(same_formula(r"\lambda_{g}=\sum_{i=1}^{k} c\left(g, R / \operatorname{Ann}_{R}\left(x_{i}\right)\right)",
                            f) for f in found), found
    assert "We remark that by Corollary 2.7, if $s \\in R$ such that" in md
    assert "$$\n□\n$$" not in md
    # the end-of-proof box, which the layout boxed again inside the proof's last paragraph, is written once
    assert md.count("□") == 1, md


def test_a_piece_of_a_paragraph_boxed_again_inside_it_goes() -> None:
    from app.core.layout.regroup import nested_pieces

    def box(cls, x0, y0, x1, y1):
        return {"boxclass": cls, "x0": x0, "y0": y0, "x1": x1, "y1": y1}

    para, qed, header = box("text", 72, 279, 531, 310), box("text", 522, 298, 531, 306), box("section-header", 80, 282, 200, 290)
    side = box("text", 500, 250, 560, 300)  # beside it, half out: its own
    picture, caption = box("picture", 60, 100, 540, 260), box("text", 100, 240, 300, 255)
    assert nested_pieces([para, qed, header, side, picture, caption]) == [para, header, side, picture, caption]


def test_a_sentence_cut_at_a_column_s_foot_goes_on_in_its_continuation() -> None:
    from app.core.layout.regroup import continued_sentences

    def box(cls, text, y, x=0):
        return {"boxclass": cls, "x0": x, "y0": y, "x1": x + 10, "y1": y + 5, "t": text}

    boxes = [box("text", "This paper examines whether a", 50), box("text", "Correspondence to: Dr N", 60),
             box("section-header", "Received", 70), box("text", "tobacco company espousing CSR.", 0, 20),
             box("text", "A new paragraph.", 10, 20)]
    text_of = {(b["x0"], b["y0"], b["x1"], b["y1"]): b["t"] for b in boxes}.get
    order = [b["t"] for b in continued_sentences(boxes, text_of)]
    assert order.index("tobacco company espousing CSR.") == 1
    ended = [box("text", "A sentence that ends.", 0), box("text", "Other", 1), box("text", "lower start", 0, 20)]
    text_of2 = {(b["x0"], b["y0"], b["x1"], b["y1"]): b["t"] for b in ended}.get
    assert continued_sentences(ended, text_of2) == ended
    # "…the energy is" and its display formula, "where E is …" under it: the formula goes on the sentence
    maths = [box("text", "the energy is", 0), box("formula", "E = mc^2", 10), box("text", "where E is", 20)]
    text_of3 = {(b["x0"], b["y0"], b["x1"], b["y1"]): b["t"] for b in maths}.get
    assert continued_sentences(maths, text_of3) == maths
    from pipeline_kit import read

    md = read(PAGE.with_name("multi_column_miss.pdf"), markdown=True, engine="auto", layout="auto")
    assert "This paper examines whether a\n\ntobacco company espousing CSR" in md
