"""The text-layer comparison of a read page: per block and per page CER of the OCR text against the PDF's own
text layer, stored in `Region.extra` ("cer", "reference_chars") and `page.cer`, announced as one
TextLayerCompared event.

What must never live here: the CER arithmetic and the word matching (app.core.text.textlayer), deciding which
regions take the text layer instead of the engine (app.core.pipeline.text_source).
"""
from __future__ import annotations

from app.core.engines import Emit
from app.core.pipeline.output import PageOutput, rounded
from app.core.record.events import TextLayerCompared

CER_TASKS = ("text", "table")  # LaTeX against a text layer says nothing useful


def compare_with_layer(page: PageOutput, words: list, comparable, emit: Emit) -> None:
    """Compare `page`'s read blocks with the layer's `words` (`comparable(region)`: the block was read, not
    taken from the layer)."""
    page.has_text_layer = bool(words)
    if not words:
        return
    from app.core.text.textlayer import compare_block, page_cer

    comps = []
    for r in page.regions:
        r.extra.pop("cer", None)
        r.extra.pop("reference_chars", None)
        if r.task not in CER_TASKS or "stats" not in r.extra or not comparable(r):
            continue
        comp = compare_block(r.id, r.text, words, r.box_pt)
        if comp is not None:
            r.extra["cer"] = comp.cer
            r.extra["reference_chars"] = comp.ref_chars
            comps.append(comp)
    page.cer = page_cer(comps)
    blocks = [{"region_id": c.region_id, "cer": float(c.cer), "reference": c.reference,
               "reference_chars": c.ref_chars} for c in comps]
    emit(TextLayerCompared(page=page.index, blocks=blocks, cer=rounded(page.cer, 6)))
