"""Formulas inside a paragraph's lines written as `$…$` (app.core.text.inline_math): pages typeset by pdflatex
at test time and pages built with PyMuPDF in TeX's own Computer Modern Type 1 fonts, each
inline formula compared with the LaTeX it was made from after normalisation and checked to parse; prose in
italics stays prose; a formula whose LaTeX does not parse is written as plain text and flagged."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pymupdf
import pytest

from app.bench.formula_score import normalise
from app.core.text.inline_math import inline_paragraph
from app.core.text.layer_math import parse_problem

CM = Path("/usr/share/texlive/texmf-dist/fonts/type1/public/amsfonts/cm")  # TeX's own fonts, as Type 1
CM_FONTS = ("cmr10", "cmti10", "cmmi10", "cmsy10", "cmr7", "cmmi7", "cmsy7")

INLINE = [r"S = N_0^s(T, 2T)", r"x^2 + y_i", r"\alpha \leq \beta", r"\sin x", r"f(x)"]
PROSE = (r"Let ${0}$ hold for every case we know, and note that ${1}$ is small. We ask whether ${2}$ "
         r"holds; then ${3}$ is bounded, and ${4}$ is \emph{{strictly increasing}} on the whole line.")


def _typeset(folder: Path, body: str) -> Path:
    if shutil.which("pdflatex") is None:
        pytest.skip("missing part: pdflatex (apt: texlive-latex-base texlive-fonts-recommended)")
    tex = folder / "page.tex"
    tex.write_text(r"\documentclass{article}\usepackage{amsmath,amssymb}\pagestyle{empty}\begin{document}"
                   + body + r"\end{document}", encoding="utf-8")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=folder,
                   capture_output=True, timeout=120, check=True)
    return folder / "page.pdf"


def _whole(page) -> tuple[float, float, float, float]:
    rects = [pymupdf.Rect(b[:4]) for b in page.get_text("blocks")]
    box = rects[0]
    for r in rects[1:]:
        box |= r
    return tuple(box)


def _formulas(text: str) -> list[str]:
    return re.findall(r"(?<!\$)\$([^$]+)\$(?!\$)", text)


def test_a_typeset_paragraphs_inline_formulas_are_written_between_dollars(tmp_path):
    pdf = _typeset(tmp_path, PROSE.format(*INLINE))
    with pymupdf.open(pdf) as doc:
        reading = inline_paragraph(doc[0], _whole(doc[0]))
    found = _formulas(reading.text)
    assert [normalise(f) for f in found] == [normalise(f) for f in INLINE], reading.text
    assert all(parse_problem(f) is None for f in found) and not reading.problems
    assert reading.formulas == len(INLINE)
    # the prose around them stays prose: its words, its comma and full stop outside the formula
    assert reading.text.startswith("Let $")
    assert "$ hold for every case we know, and note that $" in reading.text
    assert "strictly increasing on the whole line." in reading.text
    assert "$ holds; then $" in reading.text


def test_prose_with_italic_words_stays_prose(tmp_path):
    body = (r"Plain prose with \emph{emphasised words}, \textit{an italic phrase} and a date, 12 March 2026 "
            r"(or 3/12), stays as it reads: no formula in it at all.")
    pdf = _typeset(tmp_path, body)
    with pymupdf.open(pdf) as doc:
        assert inline_paragraph(doc[0], _whole(doc[0])) is None  # no math glyph: the paragraph's words stand


def _cm_page():
    for name in CM_FONTS:
        if not (CM / f"{name}.pfb").is_file():
            pytest.skip(f"missing part: {name}.pfb (apt: texlive-fonts-recommended)")
    doc = pymupdf.open()
    return doc, doc.new_page(), {n: pymupdf.Font(fontfile=str(CM / f"{n}.pfb")) for n in CM_FONTS}


def _set(page, fonts, pieces, x: float, y: float) -> None:
    """Pieces (text, font, raise) set one after the other from (x, y), 10 pt (7 pt in a 7-pt font)."""
    writer = pymupdf.TextWriter(page.rect)
    for text, font, rise in pieces:
        size = 7.0 if font.endswith("7") else 10.0
        writer.append((x, y - rise), text, font=fonts[font], fontsize=size)
        x += fonts[font].text_length(text, fontsize=size)
    writer.write_text(page)


def test_a_page_set_in_tex_math_fonts_has_its_formulas_read_from_them():
    """Built with PyMuPDF in Computer Modern's Type 1 fonts as TeX sets a line: prose in CMR10, an italic word
    in CMTI10 (text italic: prose), letters and Greek in CMMI10, "≤" in CMSY10, "+" and digits in CMR,
    scripts in the 7-pt fonts raised or lowered."""
    doc, page, fonts = _cm_page()
    line = [("We know that ", "cmr10", 0), ("x", "cmmi10", 0), ("2", "cmr7", 3.6), (" + ", "cmr10", 0),
            ("y", "cmmi10", 0), ("i", "cmmi7", -1.5), (" is ", "cmr10", 0), ("never", "cmti10", 0),
            (" negative, and ", "cmr10", 0), ("α", "cmmi10", 0), (" ≤ ", "cmsy10", 0), ("β", "cmmi10", 0),
            (".", "cmr10", 0)]
    _set(page, fonts, line, 72, 100)
    reading = inline_paragraph(page, (60, 80, 540, 110))
    doc.close()
    found = [normalise(f) for f in _formulas(reading.text)]
    assert found == [normalise("x^2 + y_i"), normalise(r"\alpha \leq \beta")], reading.text
    assert "is never negative, and $" in reading.text and reading.text.endswith("$.")


def test_an_inline_formula_that_does_not_parse_is_plain_text_and_a_review_reason():
    """A pilcrow in CMSY10 between math letters is `\\P`, which latex2mathml does not know: the formula is
    written as the layer spells it, named in the reading's problems, and the block's stats make it a reason to
    review."""
    from app.core.document.regions import Region
    from app.core.pipeline.quality import review_reasons

    doc, page, fonts = _cm_page()
    _set(page, fonts, [("See ", "cmr10", 0), ("x", "cmmi10", 0), ("¶", "cmsy10", 0), ("y", "cmmi10", 0),
                       (" here.", "cmr10", 0)], 72, 100)
    reading = inline_paragraph(page, (60, 80, 540, 110))
    doc.close()
    assert "$" not in reading.text and "x¶y" in reading.text and reading.formulas == 0
    assert len(reading.problems) == 1 and "unknown command" in reading.problems[0]
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0,
                    box_pt=(0, 0, 10, 10), dpi=72.0, score=1.0, source="pymupdf")
    region.text = reading.text
    region.extra["stats"] = {"engine": "text-layer", "text_source": "text-layer",
                             "inline_formula_problems": "; ".join(reading.problems)}
    assert any(r.startswith("inline formula written as plain text") for r in review_reasons(region))


def test_the_default_pipeline_writes_inline_formulas_in_the_paragraphs_markdown(tmp_path):
    from pipeline_kit import read

    pdf = _typeset(tmp_path, PROSE.format(*INLINE) + "\n\n" + "Another paragraph of ordinary words. " * 6)
    output = read(pdf)
    md = output.to_markdown(anchors=False)
    assert [normalise(f) for f in _formulas(md)] == [normalise(f) for f in INLINE], md
    stats = [r.extra["stats"] for p in output.pages for r in p.regions if r.task == "text"]
    assert sum(s.get("inline_formulas", 0) for s in stats) == len(INLINE)
    assert "Another paragraph of ordinary words." in md


def test_a_footnote_mark_after_a_word_is_no_formula():
    """LaTeX sets `\\thanks`' dagger in CMSY7, raised after the author's name: a mark, not math."""
    doc, page, fonts = _cm_page()
    line = [("Ada Smith", "cmr10", 0), ("†", "cmsy7", 3.6), (" and ", "cmr10", 0), ("x", "cmmi10", 0),
            (".", "cmr10", 0)]
    _set(page, fonts, line, 72, 100)
    reading = inline_paragraph(page, (60, 80, 540, 110))
    doc.close()
    assert reading.text == "Ada Smith† and $x$.", reading.text
