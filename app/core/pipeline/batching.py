"""Batched reading of a page's regions: a local engine that offers `decode_batch` (GLM-OCR / GravityOCR:
several regions in one forward per step, the tokens of reading each alone) reads a page's regions in groups.

    size = batch_size(engine, options.batch)  # options.batch: 0 = the engine's batch_size, 1 = one at a time, N = ≤ N
    if size > 1:
        read_in_batches(pipe.reading(), size, page_index, regions)

Groups follow reading order (a page's regions to read, `Pipeline.regions_to_read`) and may mix tasks (decode_batch
takes each crop's own task and token budget). Each region is cropped and recorded exactly as one read alone
(`Pipeline._decode_one`): a region whose crop fails is flagged `error` and the rest of its group is read; an
engine exception flags the group's regions `error` with the reason and the run goes on; a Cancel records the
group's partial reads (flagged `cancelled`) and ends the run as cancelled. Every region keeps exactly one
RegionStarted and one RegionFinished (the engine's), its rounds interleaved with the group's others.

A group is at most the engine's `batch_size` (8), so one `decode_batch` call is one batched decode.

What must never live here: model code (app.core.engines), the run's lifecycle events (app.core.pipeline.run),
servers' concurrency (app.core.engines.scheduler). It is given a ReadContext (app.core.pipeline.reading), never the
Pipeline.
"""
from __future__ import annotations

from typing import Sequence

from app.core.base.cancel import Cancelled
from app.core.record.events import PhaseChanged, RegionFinished
from app.core.pipeline.reading import ReadContext, record_failure
from app.core.document.regions import Region, record_result


def batch_size(engine, asked: int | None) -> int:
    """How many regions of a page `engine` reads together: 1 unless it offers `decode_batch`; then `asked` (the
    option `batch`; 0: the engine's own `batch_size`), at most the engine's batch_size."""
    if not callable(getattr(engine, "decode_batch", None)):
        return 1
    most = max(1, int(getattr(engine, "batch_size", 1) or 1))
    asked = int(asked or 0)
    return most if asked <= 0 else min(asked, most)


def read_in_batches(ctx: ReadContext, size: int, index: int, regions: Sequence[Region]) -> None:
    """Read `regions` (page `index`, in reading order) in groups of `size`, one `decode_batch` each."""
    for start in range(0, len(regions), size):
        ctx.cancel.check()
        group = list(regions[start:start + size])
        ctx.emit(PhaseChanged("decoding", detail=f"page {index + 1}, {len(group)} regions together",
                              current=start + len(group), total=len(regions)))
        read_group(ctx, group)


def read_group(ctx: ReadContext, group: Sequence[Region]) -> None:
    """One `decode_batch` over the group's crops; every region recorded as `Pipeline._decode_one` records it."""
    from app.core.engines.glm_engine import RegionCrop
    from app.core.pipeline.searchable_pdf import crop_note

    crops, chosen, notes = [], [], {}
    for r in group:
        try:
            dpi = ctx.ocr_dpi(r.page)
            crops.append(RegionCrop(ctx.crop(r.page, r.box_pt, dpi), r.task, r.id, r.page))
            notes[r.id] = crop_note(r.box_pt, dpi)  # as a read alone records it (line boxes → page points)
            chosen.append(r)
        except Exception as exc:  # noqa: BLE001 - one region's crop must not end the document
            record_failure(ctx, r, exc)
    if not crops:
        return
    finished: dict[str, RegionFinished] = {}

    def emit(event) -> None:
        if isinstance(event, RegionFinished):
            if isinstance(event.stats, dict) and event.region_id in notes:
                event.stats.setdefault("crop", notes[event.region_id])
            finished[event.region_id] = event
        ctx.emit(event)

    try:
        results = ctx.engine.decode_batch(crops, emit=emit, cancel=ctx.cancel)
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - one failing group must not end the document
        for r in chosen:  # a region the engine finished before it raised keeps what it said; the rest failed
            done = finished.get(r.id)
            if done is None:
                record_failure(ctx, r, exc)
            else:
                record_result(r, done.text, done.stats, cancelled=done.cancelled, engine=ctx.engine_name,
                              logprobs=done.logprobs)
        return
    for r, result in zip(chosen, results):
        result.stats.setdefault("crop", notes[r.id])
        record_result(r, result.text, result.stats, cancelled=result.cancelled, engine=ctx.engine_name,
                      logprobs=result.logprobs)
    if any(result.cancelled for result in results):
        raise Cancelled()

