"""Dots and equation numbers in formulas read from real born-digital pages (corpora/realdocs f04, lecture notes
set by pdfTeX from their public source): TeX's `\\ldots`, `\\cdots`, `\\vdots`, `\\ddots` are three glyphs each
and must come back as one symbol (a matrix's `\\vdots` is not three rows of "."), and a one-line display's
number, a line of its own in the text layer, is its `\\tag`, not a second row."""
from __future__ import annotations

from pathlib import Path

import pymupdf

from app.bench.formula_score import display_formulas, mathml_symbols, normalise, similarity
from app.core.text.formula_page import formula_from_page
from app.core.text.layer_math import parse_problem

REALDOCS = Path(__file__).resolve().parents[1] / "corpora/realdocs"


def _display(page_id: str, start: str, stop: str):
    """The formula between the text block starting with `start` and the one starting with `stop`, and the
    page's reference displays."""
    with pymupdf.open(REALDOCS / f"pages/{page_id}.pdf") as doc:
        page = doc[0]
        blocks = page.get_text("blocks")
        top = next(b[3] for b in blocks if b[4].startswith(start))
        bottom = next(b[1] for b in blocks if b[4].startswith(stop) and b[1] > top)
        reading = formula_from_page(page, (page.rect.x0 + 40, top + 1, page.rect.x1 - 30, bottom - 1))
    refs = display_formulas((REALDOCS / f"refs/{page_id}.md").read_text(encoding="utf-8"))
    return reading, refs


def test_a_matrix_with_vertical_and_diagonal_dots_keeps_its_four_rows():
    reading, refs = _display("f04-lds-notes-p1", "Diagonal matrices", "Question.")
    source = refs[0]  # diag(λ1, λ2, …, λn) = [λ1 0 ⋯ 0; 0 λ2 ⋯ 0; ⋮ ⋱ ⋮; 0 ⋯ 0 λn]
    assert reading.problem is None and parse_problem(reading.latex) is None
    body = reading.latex.split(r"\begin{bmatrix}")[1]
    assert body.count(r"\\") == 3, reading.latex  # four rows, not six with the ⋮ spread over three
    for dots in (r"\vdots", r"\ddots", r"\cdots", r"\ldots"):
        assert dots in reading.latex, reading.latex
    # (the source's \\operatorname*{diag} against the layer's upright \\mathrm{diag}: the rest matches)
    assert similarity(source, reading.latex) >= 0.9, reading.latex
    assert normalise(source).count(r"\dots") == normalise(reading.latex).count(r"\dots")
    assert mathml_symbols(reading.latex)["⋮"] == mathml_symbols(source)["⋮"] == 2


def test_a_flat_display_keeps_its_dots_and_its_number_as_a_tag():
    reading, refs = _display("f04-lds-notes-p2", "Given an input signal", "where H")
    assert reading.problem is None
    assert reading.latex.endswith(r"\tag{7}"), reading.latex
    assert r"\\" not in reading.latex and ". ." not in reading.latex, reading.latex
    assert reading.latex.count(r"\ldots") == 2
    assert similarity(refs[0], reading.latex) == 1.0, reading.latex


def test_a_matrix_cells_subscript_stays_a_subscript():
    """A cell whose script glyphs outnumber its letter ("c" "n−1") is read at the matrix's size, not its own."""
    reading, refs = _display("f04-lds-notes-p1", "Cross diagonal matrices", "Question.")
    assert reading.problem is None
    assert "c_{n - 1}" in reading.latex and "c_{1}" in reading.latex, reading.latex
    assert reading.latex.split(r"\begin{bmatrix}")[1].count(r"\\") == 3, reading.latex
    assert max(similarity(r, reading.latex) for r in refs) >= 0.95, reading.latex
