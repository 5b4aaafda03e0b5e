"""The review session: every open document, which one is current, and how each event changes them. Events (live
or replayed) are applied here through a table of handlers keyed by event type; widgets redraw from the result; the
journal saves `to_dict()`.

A block's region is recorded exactly as the pipeline records its own (app.core.document.regions.record_result) and every
block's Markdown comes from the pipeline's one assembler (app.core.pipeline.assembly) over its page, so the editor
shows what `convert` would write. An edited block is never overwritten by OCR; a re-run whose OCR differs from the
OCR the edit was made over is a conflict the person resolves (the same OCR again is not). A block keeps its text
and status until it is read again, so a cancelled re-run leaves the rest as it was.

What must never live here: Qt, torch, file dialogs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from app.core.record import events as ev
from app.core.pipeline.assembly import assemble_blocks
from app.core.pipeline.output import PageOutput, region_status
from app.core.pipeline.pictures import picture_link
from app.core.document.regions import DECODED_TASKS, Region, record_result
from app.core.review.document import Block, DocumentWork, RunProgress
from app.core.review.window_spans import window_spans

RESULT_FLAGS = ("error", "cancelled")


def _cer(text: str, reference: str) -> float | None:
    from app.core.text.textlayer import cer

    return cer(text, reference)


@dataclass
class Change:
    """What an applied event changed, so the window redraws only that."""

    blocks: set[str] = field(default_factory=set)  # block text or status changed
    layout_pages: set[int] = field(default_factory=set)  # regions of these pages replaced
    conflicts: list[str] = field(default_factory=list)  # edited blocks whose OCR changed under the edit
    live_region: str | None = None  # the region now being decoded ("" none; None: unchanged)
    run_state: bool = False  # the run started, ended or failed

    def __bool__(self) -> bool:
        return bool(self.blocks or self.layout_pages or self.conflicts or self.live_region is not None
                    or self.run_state)


Handler = Callable[["Session", Any, DocumentWork, Change], None]


class Session:
    """All open documents and which one is current."""

    def __init__(self) -> None:
        self.documents: list[DocumentWork] = []
        self.current: int = -1
        self.live_region: str | None = None
        self.raw_stream_tags = False  # show a whole-document generation's tags as they stream (View menu)

    # --- documents -----------------------------------------------------------------------------------------

    def add_document(self, path: str) -> DocumentWork:
        for work in self.documents:
            if work.path == path:
                return work
        work = DocumentWork(path=path)
        self.documents.append(work)
        return work

    def remove_document(self, index: int) -> None:
        del self.documents[index]
        self.current = min(self.current, len(self.documents) - 1)

    @property
    def document(self) -> DocumentWork | None:
        return self.documents[self.current] if 0 <= self.current < len(self.documents) else None

    def find_block(self, region_id: str) -> Block | None:
        doc = self.document
        return doc.blocks.get(region_id) if doc else None

    # --- events ---------------------------------------------------------------------------------------------

    def apply(self, event: ev.Event, work: DocumentWork | None = None) -> Change:
        """Apply one event to `work` (default: the current document)."""
        work = work or self.document
        change = Change()
        handler = HANDLERS.get(type(event))
        if work is not None and handler is not None:
            handler(self, event, work, change)
        return change

    def _run_started(self, event: ev.RunStarted, work: DocumentWork, change: Change) -> None:
        work.engine = event.engine
        read_before = any(b.status in ("done", "cancelled", "failed") for b in work.blocks.values())
        planned = work.run.planned and not work.run.outcome
        work.run = RunProgress(to_read=work.run.to_read if planned else 0, planned=planned, rerun=read_before)
        change.run_state = True

    def _document_opened(self, event: ev.DocumentOpened, work: DocumentWork, change: Change) -> None:
        work.page_count = event.page_count
        work.warnings = list(event.warnings)
        if event.title:
            work.title = event.title

    def _layout_done(self, event: ev.LayoutDone, work: DocumentWork, change: Change) -> None:
        if event.dpi > 0:
            work.pages[event.page] = PageOutput(event.page, event.width_pt, event.height_pt, event.dpi, event.width_px,
                                                event.height_px, layout=event.source,
                                                has_text_layer=event.has_text_layer, rotation=event.rotation,
                                                skew=event.skew)
        new = [Region.from_dict(r) for r in event.regions]
        keep_ids = {r.id for r in new}
        for rid in [rid for rid, b in work.blocks.items() if b.region.page == event.page]:
            block = work.blocks[rid]
            if rid not in keep_ids and not block.edited and not block.provisional:
                del work.blocks[rid]
                work.raw_spans.pop(rid, None)
        planned = work.run.planned
        for region in new:
            span = region.extra.get("raw_text_span")
            if isinstance(span, (list, tuple)) and len(span) == 2:
                work.raw_spans[region.id] = (int(span[0]), int(span[1]))
            else:
                work.raw_spans.pop(region.id, None)
            old = work.blocks.get(region.id)
            fresh = "stats" not in region.extra  # laid out now, not an earlier layout announced again
            if not planned and fresh and region.task in DECODED_TASKS:
                work.run.to_read += 1
            if old is not None and fresh and "stats" in old.region.extra:
                _carry_result(old.region, region)  # laid out again: the old reading stays until it is read again
            block = work.blocks.get(region.id) or Block(region=region)
            block.region = region
            if old is None:
                block.status = region_status(region) if "stats" in region.extra or region.task not in DECODED_TASKS \
                    else "pending"
            work.blocks[region.id] = block
            self._fill_reference(block)
        work.page_count = max(work.page_count, event.page + 1)
        self._assemble(work, event.page, change)
        self._restart_streams(work, change)
        change.layout_pages.add(event.page)

    def _region_started(self, event: ev.RegionStarted, work: DocumentWork, change: Change) -> None:
        block = work.blocks.get(event.region_id)
        if block is not None:
            block.status = "decoding"
            block.live_text = ""
            change.blocks.add(block.id)
        elif event.task == "document":  # a new generation: offsets into an earlier one mean nothing now
            work.raw_stream = event.region_id
            work.raw_spans.clear()
        self.live_region = event.region_id
        change.live_region = event.region_id

    def _streamed(self, event, work: DocumentWork, change: Change) -> None:
        block = work.blocks.get(event.region_id) or self._stream_block(work, event.region_id)
        if block is None:
            return
        if block.provisional:  # how far into the generation's text the stream is
            block.region.extra["raw_end"] = block.region.extra.get("raw_end", 0) + len(event.text)
        block.live_text += event.text
        block.status = "decoding"
        if not block.edited:
            block.markdown = self.stream_text(block.live_text) if block.provisional else block.live_text
        change.blocks.add(block.id)

    def _region_finished(self, event: ev.RegionFinished, work: DocumentWork, change: Change) -> None:
        block = work.blocks.get(event.region_id)
        if block is None:
            return
        if block.provisional:  # the generation itself ended: its blocks are all laid out, the text is theirs now
            del work.blocks[event.region_id]
            change.blocks.add(event.region_id)
            self._end_live(event.region_id, change)
            return
        if event.text != block.region.text:
            block.reviewed = False  # what the person accepted is not what the block says now
        record_result(block.region, event.text, event.stats, cancelled=event.cancelled,
                      engine=work.engine or str(event.stats.get("engine", "")), logprobs=event.logprobs)
        block.live_text = ""
        block.status = region_status(block.region)
        if block.reference and block.edited:  # the badge measures the text shown: the person's edit, kept
            block.cer = _cer(block.markdown, block.reference)
        work.run.read += 1
        change.blocks.add(block.id)
        self._assemble(work, block.region.page, change)
        self._end_live(event.region_id, change)
        self._restart_streams(work, change)

    def _text_layer_compared(self, event: ev.TextLayerCompared, work: DocumentWork, change: Change) -> None:
        page = work.pages.get(event.page)
        if page is not None:
            page.cer, page.has_text_layer = event.cer, True
        for block in work.layout_blocks(event.page):
            block.region.extra.pop("cer", None)
            block.region.extra.pop("reference_chars", None)
        for item in event.blocks:
            block = work.blocks.get(item.get("region_id", ""))
            if block is None:
                continue
            block.region.extra["cer"] = item.get("cer")
            if item.get("reference_chars") is not None:
                block.region.extra["reference_chars"] = item["reference_chars"]
            block.cer = item.get("cer")
            block.reference = item.get("reference", "") or ""
            if block.edited:
                block.cer = _cer(block.markdown, block.reference)
            change.blocks.add(block.id)

    def _page_finished(self, event: ev.PageFinished, work: DocumentWork, change: Change) -> None:
        page = work.pages.get(event.page)
        if page is not None:
            page.ms, page.decoded, page.stages = float(event.ms), True, dict(event.stages or {})

    def _run_ended(self, event, work: DocumentWork, change: Change) -> None:
        cancelled = isinstance(event, ev.RunCancelled)
        if event.stats:
            work.stats = dict(event.stats)
            work.engine = str(event.stats.get("engine", work.engine))
            work.layout = str(event.stats.get("layout", work.layout))
        work.cancelled = cancelled
        work.run.outcome = "cancelled" if cancelled else "finished"
        self._stop_decoding(work, change)
        change.run_state = True

    def _error(self, event: ev.ErrorRaised, work: DocumentWork, change: Change) -> None:
        if not event.fatal:
            return
        work.run.outcome, work.run.reason = "failed", event.message
        self._stop_decoding(work, change)
        change.run_state = True

    # --- helpers of the handlers ------------------------------------------------------------------------------

    def _stop_decoding(self, work: DocumentWork, change: Change) -> None:
        """The run is over: a block it left mid-decode keeps its previous reading; streams go."""
        for block in work.blocks.values():
            if block.status == "decoding" and not block.provisional:
                block.status = region_status(block.region) if "stats" in block.region.extra else "pending"
                block.live_text = ""
                if not block.edited:
                    block.markdown = block.ocr_markdown
                change.blocks.add(block.id)
        for rid in [rid for rid, b in work.blocks.items() if b.provisional]:
            del work.blocks[rid]
            change.blocks.add(rid)
        self.live_region = None
        change.live_region = ""

    def _end_live(self, region_id: str, change: Change) -> None:
        if self.live_region == region_id:
            self.live_region = None
            change.live_region = ""

    def _assemble(self, work: DocumentWork, page: int, change: Change) -> None:
        """Every block of `page` gets its Markdown from the one assembler (formula numbers merge into their
        formula there). An edited block whose OCR Markdown changed under the edit becomes a conflict."""
        blocks = work.layout_blocks(page)
        pictures = {b.id: picture_link(p) for b in blocks
                    if (p := b.region.extra.get("picture_path")) and isinstance(p, str) and Path(p).is_file()}
        assembled = assemble_blocks([b.region for b in blocks], pictures)
        for block in blocks:
            new = assembled.get(block.id, "")
            if new != block.ocr_markdown:
                old, block.ocr_markdown = block.ocr_markdown, new
                change.blocks.add(block.id)
                if block.edited:
                    if block.pending_ocr is None:
                        block.previous_ocr = old
                    block.pending_ocr = new
                    if new == block.previous_ocr:  # back to what the edit was made over: nothing to resolve
                        block.pending_ocr = None
                    elif block.id not in change.conflicts:
                        change.conflicts.append(block.id)
            # a re-read that reads what it read before still replaces the raw text it streamed with the Markdown
            if not block.edited and block.status != "decoding" and block.markdown != new:
                block.markdown = new
                change.blocks.add(block.id)

    # A whole-document engine (Unlimited-OCR) streams one generation under a document-level id and names its
    # blocks only once each is complete. Its text streams into a provisional block at the end of the editor, which
    # starts again whenever a block is completed and disappears when the run ends.

    def _stream_block(self, work: DocumentWork, region_id: str) -> Block | None:
        if not region_id:
            return None
        page = max((b.region.page for b in work.blocks.values()), default=0)
        region = Region(id=region_id, page=page, box=(0, 0, 0, 0), label="stream", task="text", order=10**6,
                        extra={"provisional": True})
        block = Block(region=region, status="decoding")
        work.blocks[region_id] = block
        return block

    def stream_text(self, raw: str) -> str:
        """What a person sees of a generation's text while it streams: tags hidden unless asked for
        (app.core.engines.unlimited_display.stream_display)."""
        from app.core.engines.unlimited_display import stream_display

        return raw if self.raw_stream_tags else stream_display(raw)

    def set_raw_stream_tags(self, on: bool, work: DocumentWork | None = None) -> set[str]:
        """Show (or hide) the tags of streams; returns the blocks whose text changed."""
        self.raw_stream_tags = bool(on)
        work = work or self.document
        changed = set()
        for block in (work.blocks.values() if work else []):
            if block.provisional and not block.edited:
                block.markdown = self.stream_text(block.live_text)
                changed.add(block.id)
        return changed

    def _restart_streams(self, work: DocumentWork, change: Change) -> None:
        for block in work.blocks.values():
            if block.provisional and block.live_text:
                block.live_text = block.markdown = ""
                change.blocks.add(block.id)

    def _fill_reference(self, block: Block) -> None:
        ref = block.region.extra.get("text_layer")
        if isinstance(ref, str):
            block.reference = ref
        cer = block.region.extra.get("cer")
        if isinstance(cer, (int, float)):
            block.cer = float(cer)

    def window_spans(self, stream_id: str, start: int, end: int, raw: str | None = None,
                     work: DocumentWork | None = None) -> list[tuple[str, int, int]]:
        """The R-SWA window's characters as spans of the blocks that hold them (app.core.review.window_spans)."""
        return window_spans(work or self.document, stream_id, start, end, raw, self.stream_text)

    # --- edits ----------------------------------------------------------------------------------------------

    def edit(self, region_id: str, markdown: str) -> bool:
        block = self.find_block(region_id)
        if block is None or block.markdown == markdown:
            return False
        if not block.edited:
            block.previous_ocr = block.ocr_markdown
        block.markdown = markdown
        block.edited = markdown != block.ocr_markdown
        if block.reference:
            block.cer = _cer(markdown, block.reference)
        return True

    def reassemble(self, work: DocumentWork, page: int) -> Change:
        """A person changed the page's regions (app.core.review.region_edits): its blocks' Markdown again."""
        change = Change(layout_pages={page})
        self._assemble(work, page, change)
        return change

    def set_reviewed(self, region_id: str, reviewed: bool = True) -> bool:
        """A person accepted the block as it reads now (exported as `"reviewed": true`)."""
        block = self.find_block(region_id)
        if block is None or block.provisional or block.reviewed == reviewed:
            return False
        block.reviewed = reviewed
        return True

    def accept_ocr(self, region_id: str) -> None:
        """Replace an edited block with its newest OCR result (the person said yes)."""
        block = self.find_block(region_id)
        if block is not None and block.pending_ocr is not None:
            block.markdown = block.ocr_markdown
            block.pending_ocr = None
            block.edited = False
            if block.reference:
                block.cer = block.region.extra.get("cer")

    def keep_edit(self, region_id: str) -> None:
        """Keep the person's edit over the newest OCR result; the next comparison is against that result."""
        block = self.find_block(region_id)
        if block is not None and block.pending_ocr is not None:
            block.previous_ocr = block.ocr_markdown
            block.pending_ocr = None

    def plan_run(self, work: DocumentWork, pages: list[int] | None, region_ids: list[str] | None = None) -> None:
        """Before OCR runs again on laid-out pages or regions: how many blocks it sets out to read (the status says
        "cancelled (3 of 15 re-read)" if it is stopped). Blocks keep their text and status until read again."""
        laid_out = set(work.pages) | {b.region.page for b in work.layout_blocks()}
        if pages is None and region_ids is None or region_ids is None and not set(pages) <= laid_out:
            work.run = RunProgress()  # pages not laid out yet: the run counts them as it lays them out
            return
        work.run = RunProgress(to_read=len(work.readable(pages, region_ids)), planned=True)

    # --- persistence ----------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current, "documents": [d.to_dict() for d in self.documents]}

    def load_dict(self, data: dict[str, Any]) -> None:
        self.documents = [DocumentWork.from_dict(d) for d in data.get("documents", [])]
        self.current = int(data.get("current", 0 if self.documents else -1))
        if not 0 <= self.current < len(self.documents):
            self.current = 0 if self.documents else -1


def _carry_result(old: Region, new: Region) -> None:
    new.text = old.text
    for key in ("engine", "stats", "cer", "reference_chars", "confidence"):
        if key in old.extra:
            new.extra[key] = old.extra[key]
    new.flags = [f for f in new.flags if f not in RESULT_FLAGS] + [f for f in old.flags if f in RESULT_FLAGS]


HANDLERS: dict[type, Handler] = {
    ev.RunStarted: Session._run_started,
    ev.DocumentOpened: Session._document_opened,
    ev.LayoutDone: Session._layout_done,
    ev.RegionStarted: Session._region_started,
    ev.RoundVerified: Session._streamed,
    ev.TokensCommitted: Session._streamed,
    ev.WindowStepped: Session._streamed,
    ev.RegionFinished: Session._region_finished,
    ev.TextLayerCompared: Session._text_layer_compared,
    ev.PageFinished: Session._page_finished,
    ev.RunFinished: Session._run_ended,
    ev.RunCancelled: Session._run_ended,
    ev.ErrorRaised: Session._error,
}
