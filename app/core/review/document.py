"""The open work of one document as plain data: its pages (the frame each was laid out in), its blocks (a region
as the pipeline records it, plus what the person sees and did), the run's engine, stats and warnings.

A block's `region` is kept exactly as the pipeline keeps its regions (text = the raw OCR text, extra = engine,
stats, CER), so `to_output(work)` is a `DocumentOutput` and the window exports through the pipeline's one writer
(app.core.pipeline.output.write_document): what the window exports and what `convert` writes are the same bytes.

What must never live here: Qt, torch, file dialogs, event handling (app.core.review.session).
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.pipeline.output import DocumentOutput, PageOutput, region_status
from app.core.pipeline.quality import review_reasons
from app.core.document.regions import DECODED_TASKS, Region


TO_REVIEW = "to review"  # the document list's word for blocks that need review (its filter looks for it)


def _page_dict(page: PageOutput) -> dict[str, Any]:
    """A page for the journal: its frame and figures; not its regions, which the blocks carry (asdict would copy them
    all, statistics and all, at every save only for the copy to be dropped)."""
    return {**{f.name: copy.deepcopy(getattr(page, f.name)) for f in fields(page) if f.name != "regions"},
            "regions": []}


@dataclass
class Block:
    region: Region  # text = the latest OCR text as the decoder wrote it
    markdown: str = ""  # what the editor shows and the exports write (edited or OCR)
    ocr_markdown: str = ""  # the latest OCR result, assembled
    live_text: str = ""  # text streamed while the region is being decoded
    status: str = "pending"  # pending | decoding | done | cancelled | skipped | failed
    edited: bool = False
    pending_ocr: str | None = None  # a newer OCR result that differs from the one the edit was made over
    previous_ocr: str = ""  # the OCR result the person's edit was made over (what `pending_ocr` changed)
    cer: float | None = None  # of what the block shows, against the page's text layer, when it has one
    reference: str = ""  # the text-layer text of the region, for the diff
    reviewed: bool = False  # a person looked and accepted it (Enter); a new reading of it is not reviewed

    @property
    def id(self) -> str:
        return self.region.id

    @property
    def raw_text(self) -> str:
        return self.region.text

    @property
    def stats(self) -> dict[str, Any]:
        return self.region.extra.get("stats", {})

    @property
    def provisional(self) -> bool:
        """A whole-document generation's text still streaming, not yet a block of the layout."""
        return bool(self.region.extra.get("provisional"))

    def to_dict(self) -> dict[str, Any]:
        # the region copied once (asdict would copy it, statistics and all, only for the copy to be replaced: the
        # journal's snapshot of a long document cost twice its size every save); the other fields are plain values
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "region"}
        d["region"] = self.region.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Block":
        d = dict(d)
        if not isinstance(d.get("region"), dict):
            raise ValueError("a block without its region")
        region = Region.from_dict(d.pop("region"))
        if isinstance(d.get("raw_text"), str) and not region.text:  # journals before the region kept the result
            region.text = d["raw_text"]
        if isinstance(d.get("stats"), dict) and d["stats"] and "stats" not in region.extra:
            region.extra["stats"] = d["stats"]
        known = set(cls.__dataclass_fields__) - {"region"}
        return cls(region=region, **{k: v for k, v in d.items() if k in known})


@dataclass
class RunProgress:
    """What the last run of a document did, for the document list and the status bar."""

    outcome: str = ""  # "" (running or none yet) | finished | cancelled | failed
    reason: str = ""  # why it failed
    to_read: int = 0  # blocks the run set out to read
    read: int = 0  # blocks it finished reading
    rerun: bool = False  # a re-run of blocks that had been read before
    planned: bool = False  # to_read was counted before the run (a re-run of laid-out pages), not from its layout

    def summary(self, blocks_done: int) -> str:
        if self.outcome == "failed":
            return f"failed: {self.reason}" if self.reason else "failed"
        if self.outcome == "cancelled":
            verb = "re-read" if self.rerun else "read"
            return f"cancelled ({self.read} of {self.to_read} {verb})"
        if blocks_done or self.outcome == "finished":
            return f"{blocks_done} block{'' if blocks_done == 1 else 's'}"
        return ""


@dataclass
class DocumentWork:
    path: str
    page_count: int = 0
    page_sizes: list[tuple[float, float]] = field(default_factory=list)  # points, of every page (for drawing)
    pages: dict[int, PageOutput] = field(default_factory=dict)  # laid-out pages: frame and source (no regions)
    blocks: dict[str, Block] = field(default_factory=dict)
    current_page: int = 0
    title: str = ""
    engine: str = ""
    layout: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cancelled: bool = False
    run: RunProgress = field(default_factory=RunProgress)
    # a whole-document generation's text (its id, e.g. "doc") and where each of its blocks' text sits in it
    # (`region.extra["raw_text_span"]`): the R-SWA window view points at that text (journaled with the blocks)
    raw_stream: str = field(default="", repr=False)
    raw_spans: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    skipped_pages: list[int] = field(default_factory=list)  # pages the person chose not to read (0-based)
    person_turns: dict[int, int] = field(default_factory=dict)  # page → the turn a person chose (app.core.review.page_turns)

    def pages_to_read(self) -> list[int] | None:
        """The pages a run of the whole document reads: all (None) unless the person skipped some."""
        if not self.skipped_pages or not self.page_count:
            return None
        return [i for i in range(self.page_count) if i not in set(self.skipped_pages)]

    @property
    def name(self) -> str:
        return self.title or Path(self.path).name

    def needs_review(self) -> list[Block]:
        """Blocks a person should look at and has not reviewed yet (app.core.pipeline.quality)."""
        return [b for b in self.layout_blocks() if not b.reviewed and review_reasons(b.region)]

    def summary(self) -> str:
        """What the document list shows beside the name: "15 blocks", "3 to review · 15 blocks", "cancelled (3 of 15
        re-read)", "failed: …"."""
        text = self.run.summary(sum(1 for b in self.blocks.values() if b.status == "done"))
        waiting = len(self.needs_review())
        plain = not waiting or not text or self.run.outcome in ("failed", "cancelled")  # those say how the run ended
        return text if plain else f"{waiting} {TO_REVIEW} · {text}"

    def open_failed(self, message: str) -> None:
        """The file could not be opened (damaged, encrypted, too large): the list shows "failed: <why>"."""
        self.run = RunProgress(outcome="failed", reason=message.removeprefix(f"{Path(self.path).name}: "))

    def ordered(self, page: int | None = None) -> list[Block]:
        blocks = [b for b in self.blocks.values() if page is None or b.region.page == page]
        return sorted(blocks, key=lambda b: (b.region.page, b.region.order, b.id))

    def layout_blocks(self, page: int | None = None) -> list[Block]:
        """The blocks of the layout (a stream still being generated is not one)."""
        return [b for b in self.ordered(page) if not b.provisional]

    def text_blocks(self) -> list[Block]:
        """Blocks that appear in the Markdown (skipped regions do not)."""
        return [b for b in self.ordered() if b.region.task != "skipped"]

    def readable(self, pages: list[int] | None = None, region_ids: list[str] | None = None) -> list[Block]:
        """The blocks a run of these pages (None: all) or regions would read."""
        return [b for b in self.layout_blocks() if b.region.task in DECODED_TASKS
                and (pages is None or b.region.page in pages) and (region_ids is None or b.id in region_ids)]

    def markdown(self) -> str:
        """The editor's text: every block's Markdown, joined as the editor shows them."""
        parts = [b.markdown for b in self.text_blocks() if b.markdown.strip()]
        return "\n\n".join(parts) + ("\n" if parts else "")

    def to_output(self) -> DocumentOutput:
        """The work as the pipeline's output, with the person's edits: what the export writes."""
        out = DocumentOutput(self.path, self.engine, self.layout, self.page_count, stats=copy.deepcopy(self.stats),
                             cancelled=self.cancelled, warnings=list(self.warnings))
        laid_out = set(self.pages) | {b.region.page for b in self.layout_blocks()}
        for index in sorted(laid_out):
            page = copy.copy(self.pages[index]) if index in self.pages else self._frame_of(index)
            page.regions = [copy.deepcopy(b.region) for b in self.layout_blocks(index)]
            out.pages.append(page)
        out.edits = {b.id: b.markdown for b in self.layout_blocks() if b.edited}
        out.reviewed = {b.id for b in self.layout_blocks() if b.reviewed}
        return out

    def _frame_of(self, index: int) -> PageOutput:
        """A page laid out before events carried its frame (an older trace or journal): the frame its blocks imply."""
        blocks = self.layout_blocks(index)
        dpi = float(blocks[0].region.dpi) if blocks else 72.0
        sizes = self.page_sizes if index < len(self.page_sizes) else self.guess_page_sizes()
        w, h = sizes[index] if index < len(sizes) else (595.0, 842.0)
        return PageOutput(index, w, h, dpi, round(w * dpi / 72.0), round(h * dpi / 72.0))

    def guess_page_sizes(self) -> list[tuple[float, float]]:
        """Page sizes (points) when the document itself is not at hand (a trace from another machine): the laid-out
        frames, else A4 grown to hold every region."""
        pages: dict[int, tuple[float, float]] = {i: (p.width_pt, p.height_pt) for i, p in self.pages.items()
                                                 if p.width_pt > 0 and p.height_pt > 0}
        for b in self.blocks.values():
            if b.region.page not in pages or b.region.page in self.pages:
                w, h = pages.get(b.region.page, (595.0, 842.0))
                pages[b.region.page] = (max(w, b.region.box_pt[2] + 20), max(h, b.region.box_pt[3] + 20))
        count = max(self.page_count, max(pages, default=-1) + 1)
        return [pages.get(i, (595.0, 842.0)) for i in range(count)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "page_count": self.page_count, "page_sizes": [list(s) for s in self.page_sizes],
            "pages": [_page_dict(p) for _, p in sorted(self.pages.items())],
            "current_page": self.current_page, "title": self.title, "engine": self.engine, "layout": self.layout,
            "stats": self.stats, "warnings": self.warnings, "cancelled": self.cancelled,
            "blocks": [b.to_dict() for b in self.ordered()],
            "skipped_pages": sorted(self.skipped_pages),
            "person_turns": {str(k): v for k, v in sorted(self.person_turns.items())},
            "raw_stream": self.raw_stream,  # the spans themselves travel in each region's extra["raw_text_span"]
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "DocumentWork":
        """A journaled document; raises ValueError/TypeError/KeyError on a wrong shape (the journal says so)."""
        if not isinstance(d, dict) or not isinstance(d.get("path"), str):
            raise ValueError("a document without its path")
        work = cls(path=d["path"], page_count=int(d.get("page_count", 0)),
                   page_sizes=[(float(s[0]), float(s[1])) for s in d.get("page_sizes", [])],
                   current_page=int(d.get("current_page", 0)), title=str(d.get("title", "")),
                   engine=str(d.get("engine", "")), layout=str(d.get("layout", "")),
                   stats=dict(d.get("stats") or {}), warnings=[str(w) for w in d.get("warnings") or []],
                   cancelled=bool(d.get("cancelled", False)))
        for pd in d.get("pages") or []:
            page = PageOutput(**{k: v for k, v in pd.items() if k in PageOutput.__dataclass_fields__})
            page.regions = []
            work.pages[page.index] = page
        for bd in d.get("blocks", []):
            block = Block.from_dict(bd)
            work.blocks[block.id] = block
            span = block.region.extra.get("raw_text_span")
            if isinstance(span, (list, tuple)) and len(span) == 2:
                work.raw_spans[block.id] = (int(span[0]), int(span[1]))
        work.raw_stream = str(d.get("raw_stream") or "")
        work.skipped_pages = sorted({int(i) for i in d.get("skipped_pages") or [] if int(i) >= 0})
        work.person_turns = {int(k): int(v) % 360 // 90 * 90 for k, v in (d.get("person_turns") or {}).items()}
        return work


def block_status(block: Block) -> str:
    """The status a finished block's region says (app.core.pipeline.output.region_status)."""
    return region_status(block.region)
