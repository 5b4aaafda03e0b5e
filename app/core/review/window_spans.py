"""The R-SWA window of a whole-document generation mapped onto the blocks it covers: which characters of which
blocks' text a window over the raw output (tags included) holds, for the editor's highlight.

What must never live here: Qt, the window's drawing, parsing the raw output
(app.core.engines.unlimited_output)."""
from __future__ import annotations

from typing import Callable

from app.core.engines.unlimited_display import text_offset
from app.core.review.document import Block, DocumentWork


def window_spans(work: DocumentWork | None, stream_id: str, start: int, end: int, raw: str | None,
                 stream_text: Callable[[str], str]) -> list[tuple[str, int, int]]:
    """The characters [start, end) of generation `stream_id`'s raw output `raw` (the R-SWA window) as spans of
    the blocks that hold them: (block id, start, end) in each block's decoded text, in reading order. Blocks
    still streaming count too (the provisional block, in its live text); blocks the person edited do not.
    Without `raw`, raw offsets are taken as text offsets (exact only when the blocks hold no special strings).
    """
    if work is None or end <= start:
        return []
    found: list[tuple[Block, int, int]] = []
    if stream_id == work.raw_stream:
        for rid, (a, b) in work.raw_spans.items():
            block = work.blocks.get(rid)
            lo, hi = max(start, a), min(end, b)
            if block is None or block.edited or hi <= lo:
                continue
            if raw is not None:
                size = len(block.raw_text)
                lo, hi = min(size, text_offset(raw, a, lo)), min(size, text_offset(raw, a, hi))
            else:
                lo, hi = lo - a, hi - a
            if hi > lo:
                found.append((block, lo, hi))
    stream = work.blocks.get(stream_id)
    if stream is not None and stream.provisional and not stream.edited:
        b = int(stream.region.extra.get("raw_end", 0))
        a = b - len(stream.live_text)
        lo, hi = max(start, a), min(end, b)
        if hi > lo:  # offsets in the text shown (tags hidden)
            shown = lambda n: len(stream_text(stream.live_text[:n]))  # noqa: E731
            lo, hi = shown(lo - a), shown(hi - a)
            if hi > lo:
                found.append((stream, lo, hi))
    found.sort(key=lambda f: (f[0].region.page, f[0].region.order, f[0].id))
    return [(block.id, lo, hi) for block, lo, hi in found]
