"""What a finished (or cancelled) run says about itself: the document's counts (regions, decoded, tokens,
rates, CER, errors; the `stats` of RunFinished / RunCancelled and of the JSON) and the warnings about pages
that gave no text (only headers and footers, or text no block read).

What must never live here: reading, events other than those warnings, writing files."""
from __future__ import annotations

from typing import Any

from app.core.document.regions import DECODED_TASKS, MARGIN_LABELS
from app.core.engines import Emit
from app.core.pipeline.output import DocumentOutput, rounded
from app.core.pipeline.page_stages import document_stages
from app.core.pipeline.text_source import TEXT_LAYER, text_source
from app.core.record.events import ErrorRaised


def document_stats(out: DocumentOutput, seconds: float) -> dict[str, Any]:
    """The run's counts over the output as it stands now."""
    regions = list(out.regions())
    decoded = [r for r in regions if r.task in DECODED_TASKS and "stats" in r.extra]
    tokens = sum(int(r.extra["stats"].get("tokens", r.extra["stats"].get("new_tokens", 0)) or 0)
                 for r in decoded)
    dec_s = sum(_region_ms(r.extra["stats"]) for r in decoded) / 1000
    return {
        "engine": out.engine, "layout": out.layout, "pages": len(out.pages), "regions": len(regions),
        "decoded": len(decoded), "pictures": sum(r.task == "picture" for r in regions),
        "skipped": sum(r.task == "skipped" for r in regions), "tokens": tokens,
        "tokens_per_s": round(tokens / dec_s, 2) if tokens and dec_s > 0 else 0.0,
        "seconds": round(seconds, 3), "cer": rounded(out.cer),
        "errors": sum("error" in r.flags for r in regions),
        "truncated": sum("truncated" in r.flags for r in regions),
        "text_layer_blocks": sum(text_source(r) == TEXT_LAYER for r in regions),
    }


def final_stats(out: DocumentOutput, seconds: float) -> dict[str, Any]:
    """The counts a run ends with: `document_stats`, the engine's own stats kept; a whole-document engine
    counts its tokens once, for all regions."""
    stats = {**document_stats(out, seconds), **{k: v for k, v in out.stats.items() if k == "engine_stats"}}
    stats["stages"] = document_stages(out.pages)  # where the time went, stage by stage (page_stages.py)
    es = stats.get("engine_stats") or {}
    if es.get("output_tokens"):
        stats["tokens"] = int(es["output_tokens"])
        stats["tokens_per_s"] = round(float(es.get("tokens_per_s") or 0.0), 2)
    return stats


def warn_empty_pages(out: DocumentOutput, name: str, lost_text, emit: Emit) -> None:
    """A page whose only regions are headers, footers, page numbers... gives no Markdown: say so; and a page
    that holds text no block read (`lost_text(page)`, the text layer's word)."""
    for page in out.pages:
        tasks = {r.task for r in page.regions}
        if page.regions and tasks == {"skipped"} and any(r.label in MARGIN_LABELS for r in page.regions):
            emit(ErrorRaised(f"{name}: page {page.index + 1} holds only headers, footers or page numbers, "
                             "which are left out (--keep-headers reads them)", where="layout", fatal=False))
        elif not out.cancelled and lost_text(page):
            emit(ErrorRaised(f"{name}: page {page.index + 1} holds text, but no block of it was read (the "
                             "layout saw no text there)", where="layout", fatal=False))


def _region_ms(stats: dict[str, Any]) -> float:
    for key in ("ms", "total_ms", "request_ms"):
        if stats.get(key):
            return float(stats[key])
    return 0.0
