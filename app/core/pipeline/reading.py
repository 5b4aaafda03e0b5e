"""What reading a document's regions needs from a run (`ReadContext`), and how a read that failed is recorded.

The helpers that read regions (app.core.pipeline.batching, app.core.pipeline.page_reader) are given a ReadContext,
never the Pipeline: the open engine and its name, the document's name, the run's emit and cancel token, and how a
region is cropped. `Pipeline.reading()` makes one.

What must never live here: the run's lifecycle events (app.core.pipeline.run), model code (app.core.engines).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from app.core.base.cancel import CancelToken
from app.core.record.events import ErrorRaised, Event, RegionFinished
from app.core.document.regions import Region, record_result


@dataclass(frozen=True)
class ReadContext:
    engine: Any  # the open engine (a RegionEngine)
    engine_name: str  # what each region records as its engine
    document_name: str  # for the messages ("report.pdf: region p1-r03 could not be read (…)")
    emit: Callable[[Event], None]
    cancel: CancelToken
    ocr_dpi: Callable[[int], float]  # the DPI a page's crops are rendered at
    crop: Callable[[int, tuple, float], Any]  # crop(page, box_pt, dpi) → the region's image

    def crop_region(self, region: Region):
        return self.crop(region.page, region.box_pt, self.ocr_dpi(region.page))


def record_failure(ctx: ReadContext, region: Region, exc: BaseException) -> None:
    """A read that raised: say why (ErrorRaised), flag the region `error` and finish it (the engine did not)."""
    msg = f"{ctx.document_name}: region {region.id} could not be read ({type(exc).__name__}: {exc})"
    ctx.emit(ErrorRaised(msg, where="decoding", region_id=region.id, fatal=False))
    stats: dict[str, Any] = {"error": str(exc)}
    record_result(region, "", stats, cancelled=False, engine=ctx.engine_name)
    ctx.emit(RegionFinished(region.id, "", stats))
