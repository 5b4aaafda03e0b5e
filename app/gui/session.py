"""The open work as plain data: documents, their regions and block texts, the person's edits, the text-layer
comparison. Events (live or replayed) are applied here; widgets redraw from it; the journal saves `to_dict()`.

Every block is keyed by its region id, the one id shared with the page overlay, the editor, the decoding views and
the exports. An edited block is never overwritten by a later OCR result unless the caller says so.

What must never live here: Qt, torch, file dialogs. (Plain Python so that it is cheap to test and to journal.)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from app.core import events as ev
from app.core.regions import Region

LIVE_EVENTS = (ev.RoundVerified, ev.TokensCommitted, ev.WindowStepped)


@dataclass
class Block:
    region: Region
    markdown: str = ""  # what the editor shows and the exports write (edited or OCR)
    ocr_markdown: str = ""  # the latest OCR result, formatted
    raw_text: str = ""  # the latest OCR result as the decoder wrote it
    live_text: str = ""  # text streamed while the region is being decoded
    status: str = "pending"  # pending | decoding | done | cancelled | skipped | failed
    edited: bool = False
    pending_ocr: str | None = None  # a newer OCR result that was not applied over an edit
    cer: float | None = None  # against the page's text layer, when it has one
    reference: str = ""  # the text-layer text of the region, for the diff
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.region.id

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["region"] = self.region.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Block":
        d = dict(d)
        region = Region.from_dict(d.pop("region"))
        known = set(cls.__dataclass_fields__)
        return cls(region=region, **{k: v for k, v in d.items() if k in known})


def pictures_dir(document_path: str) -> Path:
    """Where a document's picture crops are kept while it is worked on (the pipeline saves them there at layout
    time): one folder per document under the user data folder, named by a hash of its path (no spaces, so the
    Markdown links stay plain)."""
    import hashlib

    from app.core.paths import user_data_dir

    return user_data_dir() / "pictures" / hashlib.sha1(str(document_path).encode("utf-8")).hexdigest()[:16]


def prune_pictures(work: "DocumentWork") -> list[Path]:
    """Delete the crops in `work`'s picture folder that no block links to any more (a re-run laid the page out
    again and the region is gone, or is no longer a picture). Called when a run of the document ends, so the
    worker has saved every crop it meant to. Returns the deleted files."""
    folder = pictures_dir(work.path)
    if not folder.is_dir():
        return []
    keep = set()
    for block in work.blocks.values():
        path = block.region.extra.get("picture_path") if block.region.extra else None
        if isinstance(path, str) and path:
            keep.add(Path(path).name if Path(path).parent.resolve() == folder.resolve() else None)
    removed = []
    for f in folder.glob("*.png"):
        if f.name not in keep:
            try:
                f.unlink()
                removed.append(f)
            except OSError:
                pass
    return removed


def picture_link(path: str) -> str:
    """The link target a picture block uses in the editor: relative to the user data folder (the preview resolves
    it there), else a file URL."""
    from app.core.paths import user_data_dir

    p = Path(path)
    try:
        return p.resolve().relative_to(user_data_dir().resolve()).as_posix()
    except ValueError:
        return p.resolve().as_uri()


def _default_formatter(region: Region, text: str) -> str:
    """Markdown of one block, by the pipeline's own assembly rules (headings, tables, formulas, lists). A picture
    links to its saved crop (none when the file is not here, e.g. a trace replayed from another machine)."""
    from app.core.assembly import format_block

    if region.task == "picture":
        path = region.extra.get("picture_path") if region.extra else None
        return format_block(region, picture_path=picture_link(path)) if path and Path(path).is_file() else ""
    return format_block(replace(region, text=text))


def _cer(text: str, reference: str, fallback: float | None) -> float | None:
    try:
        from app.core.textlayer import cer
    except ImportError:
        return fallback
    return cer(text, reference)


@dataclass
class DocumentWork:
    path: str
    page_count: int = 0
    page_sizes: list[tuple[float, float]] = field(default_factory=list)  # points
    blocks: dict[str, Block] = field(default_factory=dict)
    current_page: int = 0
    title: str = ""
    # a whole-document generation's text (its id, e.g. "doc") and where each of its blocks' text sits in it
    # (`region.extra["raw_text_span"]`): the R-SWA window view points at that text (journaled with the blocks)
    raw_stream: str = field(default="", repr=False)
    raw_spans: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.title or Path(self.path).name

    def summary(self) -> str:
        """What the document list shows beside the name: "15 blocks", "3 blocks, 2 cancelled", "" before a run."""
        done = sum(1 for b in self.blocks.values() if b.status == "done")
        stopped = sum(1 for b in self.blocks.values() if b.status == "cancelled")
        if not done and not stopped:
            return ""
        return f"{done} block{'' if done == 1 else 's'}" + (f", {stopped} cancelled" if stopped else "")

    def ordered(self, page: int | None = None) -> list[Block]:
        blocks = [b for b in self.blocks.values() if page is None or b.region.page == page]
        return sorted(blocks, key=lambda b: (b.region.page, b.region.order, b.id))

    def text_blocks(self) -> list[Block]:
        """Blocks that appear in the Markdown (skipped regions do not)."""
        return [b for b in self.ordered() if b.region.task != "skipped"]

    def markdown(self) -> str:
        parts = [b.markdown for b in self.text_blocks() if b.markdown.strip()]
        return "\n\n".join(parts) + ("\n" if parts else "")

    def guess_page_sizes(self) -> list[tuple[float, float]]:
        """Page sizes (points) when the document itself is not at hand (a trace from another machine): A4, grown
        to hold every region."""
        pages: dict[int, tuple[float, float]] = {}
        for b in self.blocks.values():
            w, h = pages.get(b.region.page, (595.0, 842.0))
            pages[b.region.page] = (max(w, b.region.box_pt[2] + 20), max(h, b.region.box_pt[3] + 20))
        count = max(self.page_count, max(pages, default=-1) + 1)
        return [pages.get(i, (595.0, 842.0)) for i in range(count)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "page_count": self.page_count,
            "page_sizes": [list(s) for s in self.page_sizes],
            "current_page": self.current_page,
            "title": self.title,
            "blocks": [b.to_dict() for b in self.ordered()],
            "raw_stream": self.raw_stream,  # the spans themselves travel in each region's extra["raw_text_span"]
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DocumentWork":
        work = cls(
            path=d["path"],
            page_count=int(d.get("page_count", 0)),
            page_sizes=[tuple(s) for s in d.get("page_sizes", [])],
            current_page=int(d.get("current_page", 0)),
            title=d.get("title", ""),
        )
        for bd in d.get("blocks", []):
            block = Block.from_dict(bd)
            work.blocks[block.id] = block
            span = block.region.extra.get("raw_text_span") if block.region.extra else None
            if isinstance(span, (list, tuple)) and len(span) == 2:
                work.raw_spans[block.id] = (int(span[0]), int(span[1]))
        work.raw_stream = str(d.get("raw_stream") or "")
        return work


@dataclass
class Change:
    """What an applied event changed, so the window redraws only that."""

    blocks: set[str] = field(default_factory=set)  # block text or status changed
    layout_pages: set[int] = field(default_factory=set)  # regions of these pages replaced
    conflicts: list[str] = field(default_factory=list)  # edited blocks that got a new OCR result
    live_region: str | None = None

    def __bool__(self) -> bool:
        return bool(self.blocks or self.layout_pages or self.conflicts or self.live_region)


class Session:
    """All open documents and which one is current."""

    def __init__(self, formatter: Callable[[Region, str], str] | None = None) -> None:
        self.documents: list[DocumentWork] = []
        self.current: int = -1
        self.format_block = formatter or _default_formatter
        self.live_region: str | None = None

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
        if work is None:
            return change
        if isinstance(event, ev.DocumentOpened):
            work.page_count = event.page_count
            if event.title:
                work.title = event.title
        elif isinstance(event, ev.LayoutDone):
            self._apply_layout(work, event, change)
            self._restart_streams(work, change)
        elif isinstance(event, ev.RegionStarted):
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
        elif isinstance(event, LIVE_EVENTS):
            block = work.blocks.get(event.region_id) or self._stream_block(work, event.region_id)
            if block is not None:
                if block.region.extra.get("provisional"):  # how far into the generation's text the stream is
                    block.region.extra["raw_end"] = block.region.extra.get("raw_end", 0) + len(event.text)
                block.live_text += event.text
                block.status = "decoding"
                if not block.edited:
                    block.markdown = block.live_text
                change.blocks.add(block.id)
        elif isinstance(event, ev.RegionFinished):
            stream = work.blocks.get(event.region_id)
            if stream is not None and stream.region.extra.get("provisional"):  # the generation itself ended: its
                del work.blocks[event.region_id]  # blocks are all laid out, the stream's text is theirs now
                change.blocks.add(event.region_id)
                if self.live_region == event.region_id:
                    self.live_region = None
                    change.live_region = ""
                return change
            self._apply_finished(work, event, change)
            if event.region_id in work.blocks and not work.blocks[event.region_id].region.extra.get("provisional"):
                self._restart_streams(work, change)
        elif isinstance(event, ev.TextLayerCompared):
            for item in event.blocks:
                block = work.blocks.get(item.get("region_id", ""))
                if block is not None:
                    block.cer = item.get("cer")
                    block.reference = item.get("reference", "") or ""
                    if block.edited:
                        block.cer = _cer(block.markdown, block.reference, block.cer)
                    change.blocks.add(block.id)
        elif isinstance(event, (ev.RunFinished, ev.RunCancelled)):
            for block in work.blocks.values():
                if block.status == "decoding":
                    block.status = "cancelled"
                    if not block.edited:
                        block.markdown = self.format_block(block.region, block.live_text)
                    change.blocks.add(block.id)
            for rid in [rid for rid, b in work.blocks.items() if b.region.extra.get("provisional")]:
                del work.blocks[rid]
                change.blocks.add(rid)
            self.live_region = None
            change.live_region = ""
        return change

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

    def _restart_streams(self, work: DocumentWork, change: Change) -> None:
        for block in work.blocks.values():
            if block.region.extra.get("provisional") and block.live_text:
                block.live_text = block.markdown = ""
                change.blocks.add(block.id)

    def _apply_layout(self, work: DocumentWork, event: ev.LayoutDone, change: Change) -> None:
        new = [Region.from_dict(r) for r in event.regions]
        keep_ids = {r.id for r in new}
        for rid in [rid for rid, b in work.blocks.items() if b.region.page == event.page]:
            block = work.blocks[rid]
            if rid not in keep_ids and not block.edited and not block.region.extra.get("provisional"):
                del work.blocks[rid]
                work.raw_spans.pop(rid, None)
        for region in new:
            span = region.extra.get("raw_text_span") if region.extra else None
            if isinstance(span, (list, tuple)) and len(span) == 2:
                work.raw_spans[region.id] = (int(span[0]), int(span[1]))
            else:
                work.raw_spans.pop(region.id, None)
            old = work.blocks.get(region.id)
            if old is None:
                block = Block(region=region)
                if region.task in ("picture", "skipped"):
                    block.status = "skipped"
                if region.task == "picture":
                    block.markdown = block.ocr_markdown = self.format_block(region, "")
                work.blocks[region.id] = block
            else:
                old.region = region
            self._fill_reference(work.blocks[region.id])
        work.page_count = max(work.page_count, event.page + 1)
        change.layout_pages.add(event.page)

    def _fill_reference(self, block: Block) -> None:
        ref = block.region.extra.get("text_layer") if block.region.extra else None
        if isinstance(ref, str):
            block.reference = ref
        cer = block.region.extra.get("cer") if block.region.extra else None
        if isinstance(cer, (int, float)):
            block.cer = float(cer)

    def _apply_finished(self, work: DocumentWork, event: ev.RegionFinished, change: Change) -> None:
        block = work.blocks.get(event.region_id)
        if block is None:
            return
        formatted = self.format_block(block.region, event.text)
        block.raw_text = event.text
        block.ocr_markdown = formatted
        block.live_text = ""
        block.stats = dict(event.stats)
        block.status = "cancelled" if event.cancelled else "failed" if event.stats.get("error") else "done"
        for key in ("cer", "text_layer_cer"):
            if isinstance(event.stats.get(key), (int, float)):
                block.cer = float(event.stats[key])
        for key in ("reference", "text_layer"):
            if isinstance(event.stats.get(key), str):
                block.reference = event.stats[key]
        if block.edited and block.reference:  # the badge measures the text shown: the person's edit, kept
            block.cer = _cer(block.markdown, block.reference, block.cer)
        if block.edited:
            if formatted != block.markdown:
                block.pending_ocr = formatted
                change.conflicts.append(block.id)
        else:
            block.markdown = formatted
        change.blocks.add(block.id)
        if self.live_region == event.region_id:
            self.live_region = None
            change.live_region = ""

    def window_spans(self, stream_id: str, start: int, end: int, raw: str | None = None,
                     work: DocumentWork | None = None) -> list[tuple[str, int, int]]:
        """The characters [start, end) of generation `stream_id`'s raw output `raw` (the R-SWA window) as spans of
        the blocks that hold them: (block id, start, end) in each block's decoded text, in reading order. Blocks
        still streaming count too (the provisional block, in its live text); blocks the person edited do not.
        Without `raw`, raw offsets are taken as text offsets (exact only when the blocks hold no special strings)."""
        from app.core.unlimited_output import text_offset

        work = work or self.document
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
        if stream is not None and stream.region.extra.get("provisional") and not stream.edited:
            b = int(stream.region.extra.get("raw_end", 0))
            a = b - len(stream.live_text)
            lo, hi = max(start, a), min(end, b)
            if hi > lo:
                found.append((stream, lo - a, hi - a))
        found.sort(key=lambda f: (f[0].region.page, f[0].region.order, f[0].id))
        return [(block.id, lo, hi) for block, lo, hi in found]

    # --- edits ----------------------------------------------------------------------------------------------

    def edit(self, region_id: str, markdown: str) -> bool:
        block = self.find_block(region_id)
        if block is None or block.markdown == markdown:
            return False
        block.markdown = markdown
        block.edited = markdown != block.ocr_markdown
        if block.reference:
            block.cer = _cer(markdown, block.reference, block.cer)
        return True

    def accept_ocr(self, region_id: str) -> None:
        """Replace an edited block with its newest OCR result (the person said yes)."""
        block = self.find_block(region_id)
        if block is not None and block.pending_ocr is not None:
            block.markdown = block.pending_ocr
            block.ocr_markdown = block.pending_ocr
            block.pending_ocr = None
            block.edited = False

    def prepare_rerun(self, work: DocumentWork, pages: list[int] | None, region_ids: list[str] | None = None) -> None:
        """Before OCR runs again on some pages (None: the whole document) or regions: their blocks go back to
        pending (their text stays until the new text arrives)."""
        for block in work.blocks.values():
            if region_ids is not None and block.id not in region_ids:
                continue
            if pages is None or block.region.page in pages:
                block.pending_ocr = None
                if block.status != "skipped":
                    block.status = "pending"

    # --- persistence ----------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current, "documents": [d.to_dict() for d in self.documents]}

    def load_dict(self, data: dict[str, Any]) -> None:
        self.documents = [DocumentWork.from_dict(d) for d in data.get("documents", [])]
        self.current = int(data.get("current", 0 if self.documents else -1))
        if not 0 <= self.current < len(self.documents):
            self.current = 0 if self.documents else -1
