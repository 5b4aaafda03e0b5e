"""A formula with no usable text layer (a page image) read by a recogniser that writes no LaTeX: the block
says so — plain text, not `$$`, and the review reason "formula read from the image: not read as LaTeX" — in
`convert`'s output and in the window's blocks rebuilt from the run's events alike
(app.core.pipeline.assembly.formula_problem)."""
from __future__ import annotations

import pymupdf

from app.core.document.regions import Region


def _scan(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=400, height=200)
    page.insert_text((60, 100), "x + y = 12", fontsize=24, fontname="helv")
    image = pymupdf.open()
    image.new_page(width=400, height=200).insert_image((0, 0, 400, 200), pixmap=page.get_pixmap(dpi=150))
    image.save(tmp_path / "scan.pdf")
    return tmp_path / "scan.pdf"


class OneFormula:
    """The layout as given: one formula box over the equation."""
    name = "fixed"

    def analyse(self, document, index, image, dpi, *, keep_headers=False, **_):
        from app.core.layout import make_regions
        from app.core.layout.postprocess import Detection

        det = Detection("formula", 1.0, tuple(v * dpi / 72.0 for v in (50, 70, 300, 110)), 0)
        return make_regions([det], index, dpi, self.name, keep_headers=keep_headers)


def test_a_scanned_formula_read_by_ocr_is_plain_text_and_says_why(tmp_path):
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.assembly import SCANNED_FORMULA, formula_problem
    from app.core.pipeline.quality import review_reasons
    from app.core.review.session import Session

    pdf = _scan(tmp_path)
    events = []
    pipe = Pipeline(PipelineOptions(engine="classic", text_layer="prefer"), layout=OneFormula(),
                    emit=events.append)
    try:
        out = pipe.run(pdf)
    finally:
        pipe.close()
    (region,) = out.pages[0].regions
    assert "12" in region.text  # the recogniser read it ...
    assert formula_problem(region) == SCANNED_FORMULA  # ... but wrote no LaTeX, and the block says so
    assert "formula written as plain text: formula read from the image: not read as LaTeX" in review_reasons(region)
    md = out.to_markdown(anchors=False)
    assert "$$" not in md and "12" in md

    session = Session()  # the window: its blocks rebuilt from the events alone say the same
    work = session.add_document(str(pdf))
    session.current = 0
    for e in events:
        session.apply(e, work)
    assert work.to_output().to_markdown(anchors=False) == md
    (block,) = work.blocks.values()
    assert formula_problem(block.region) == SCANNED_FORMULA


def _formula(stats: dict, engine: str) -> Region:
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="formula", task="formula", order=0,
                    box_pt=(0, 0, 10, 10), dpi=72.0, score=1.0, source="pymupdf")
    region.text = r"\frac{a}{b}"
    region.extra.update(stats={"engine": engine, **stats}, engine=engine)
    return region


def test_a_formula_from_the_layer_or_from_a_latex_reader_is_not_flagged():
    from app.core.engines import ENGINES
    from app.core.pipeline.assembly import format_block, formula_problem

    assert formula_problem(_formula({"text_source": "text-layer"}, "text-layer")) is None
    latex_reader = next(name for name, spec in ENGINES.items() if spec.reads_formulas)
    region = _formula({}, latex_reader)  # an engine that writes LaTeX (GLM-OCR's kind): its formula stands
    assert formula_problem(region) is None and format_block(region).startswith("$$")
    assert formula_problem(_formula({}, "builtin")) is not None  # the built-in recogniser writes no LaTeX
