"""Pages the right way up before their layout: a scanned page (no text layer) is turned by 0/90/180/270 degrees and
straightened by a small skew as app.core.layout.orientation finds (`options.rotate == "auto"`, the default; "none"
reads every page as it is). A page a person turned, or laid out after it was turned, keeps the turn it was read
with (`Pipeline.page_turns`, from the window's run request). The document applies the turn to every rendering and
crop of the page, and the page's output records it (`PageOutput.rotation`, `.skew`; the JSON's page `rotation`).

With the built-in engine and PyMuPDF's layout the page's lines are read once first (app.core.pipeline.page_ocr),
and the recogniser's check runs only where they give reason to doubt the page is upright.

Born-digital pages (with a text layer) are read as they are: their words say which way they run, and MuPDF already
applies a PDF page's own /Rotate.

What must never live here: how the turn is found (app.core.layout.orientation), rendering (app.core.document).
"""
from __future__ import annotations

from app.core.base.stages import stage
from app.core.record.events import PhaseChanged

ORIENT_DPI = 100.0  # the page is judged at this resolution (the lines are read at up to 1200 px long side)
ROTATE_CHOICES = ("auto", "none")


def orient_page(pipe, index: int) -> tuple[int, float]:
    """Turn page `index` of the pipeline's document the right way up (see the module); returns (turn, skew)."""
    doc = pipe.document
    if index in pipe.page_turns:
        turn, skew = pipe.page_turns[index]
        doc.set_orientation(index, int(turn), float(skew))
        return doc.orientation(index)
    if pipe.options.rotate != "auto" or index in pipe.fixed_layouts:
        return doc.orientation(index)
    doc.set_orientation(index)  # judged as it is
    if doc.has_text_layer(index):
        return 0, 0.0
    from app.core.layout.orientation import detect

    pipe.emit(PhaseChanged("orientation", detail=f"page {index + 1}"))
    if pipe.text_source.scan.applies(index):  # the page's one OCR pass says whether it needs the check
        found = pipe.text_source.scan.orient(index)
        return found.turn, found.skew
    with stage("orientation", whole=True):  # its own small rendering and readings are its cost
        found = detect(doc.render(index, doc.native_dpi(index) or ORIENT_DPI))
    doc.set_orientation(index, found.turn, found.skew)
    return found.turn, found.skew
