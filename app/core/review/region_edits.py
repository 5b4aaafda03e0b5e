"""A person's fixes to a page's layout: move or resize a region, draw a new one, delete, relabel (label and task),
split one at a line, merge two. Every edit returns a `LayoutEdit` holding the page's blocks before and after, so an
undo stack restores either state exactly (text, edits, status and all); the journal keeps the result with the work.

A page a person laid out says so (`PageOutput.layout == PERSON_LAYOUT`, exported as the page's `layout`): a later run
reads the person's regions instead of laying the page out again (app.core.review.runs passes them with the request),
and its regions carry the flag `user_fixed`. A whole-document engine (Unlimited-OCR) cannot read them: the run
controller refuses such a run and the regions stay (app.core.review.runs.layout_refusal). A region whose box
changed keeps its last reading until it is read again ("R" reads it again at once).

What must never live here: Qt, drawing, running anything.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.pipeline.output import PageOutput
from app.core.document.regions import TASKS, Region, route
from app.core.review.document import Block, DocumentWork

PERSON_LAYOUT = "person"  # the layout source of a page a person fixed
USER_FIXED = "user_fixed"  # the flag of a region a person drew, moved, resized, relabelled, split or merged
MIN_SIZE_PT = 4.0  # a region smaller than this (points) is not one
RESULT_KEYS = ("engine", "stats", "cer", "reference_chars", "confidence")


@dataclass
class LayoutEdit:
    """One undoable change to a page's regions."""

    page: int
    description: str  # for a person: "Move p1-r03", "Draw region p1-u01", ...
    before: list[dict[str, Any]] = field(default_factory=list)  # the page's blocks (Block.to_dict)
    after: list[dict[str, Any]] = field(default_factory=list)
    layout_before: str = ""  # the page's layout source before
    selected: str = ""  # the region to select after the edit


def page_blocks(work: DocumentWork, page: int) -> list[dict[str, Any]]:
    return [b.to_dict() for b in work.layout_blocks(page)]


def restore(work: DocumentWork, page: int, blocks: list[dict[str, Any]], layout: str) -> None:
    """Put the page's blocks back as `blocks` (an undo or a redo)."""
    for b in work.layout_blocks(page):
        del work.blocks[b.id]
    for d in blocks:
        block = Block.from_dict(d)
        work.blocks[block.id] = block
    if page in work.pages:
        work.pages[page].layout = layout


def fixed_layouts(work: DocumentWork, pages: list[int] | None = None) -> dict[int, list[dict[str, Any]]]:
    """The regions of the pages a person laid out (of `pages`, None: all), as a run reads them instead of a layout."""
    return {i: [b.region.to_dict() for b in work.layout_blocks(i)] for i, p in sorted(work.pages.items())
            if p.layout == PERSON_LAYOUT and (pages is None or i in pages)}


class RegionEditor:
    """The edits, on one document's work. Each returns the LayoutEdit it made (None when nothing changed)."""

    def __init__(self, work: DocumentWork) -> None:
        self.work = work

    # --- the edits ---------------------------------------------------------------------------------------------

    def set_box(self, region_id: str, box_pt: tuple[float, float, float, float]) -> LayoutEdit | None:
        block = self.work.blocks[region_id]
        box = self._clamp(block.region.page, box_pt)
        if box is None or _same(box, block.region.box_pt):
            return None
        with self._edit(block.region.page, f"Move or resize {region_id}", region_id) as edit:
            self._place(block.region, box)
        return edit

    def add(self, page: int, box_pt: tuple[float, float, float, float], label: str = "text") -> LayoutEdit | None:
        box = self._clamp(page, box_pt)
        if box is None:
            return None
        rid = self._new_id(page)
        dpi = self._dpi(page)
        region = Region(id=rid, page=page, box=(0, 0, 0, 0), label=label, task=route(label, keep_headers=True),
                        order=0, dpi=dpi, source=PERSON_LAYOUT)
        with self._edit(page, f"Draw region {rid}", rid) as edit:
            self._place(region, box)
            self.work.blocks[rid] = Block(region=region, status="pending")
            self._renumber(page, region)
        return edit

    def delete(self, region_id: str) -> LayoutEdit:
        block = self.work.blocks[region_id]
        page = block.region.page
        with self._edit(page, f"Delete {region_id}", "") as edit:
            del self.work.blocks[region_id]
            self._renumber(page)
        return edit

    def relabel(self, region_id: str, label: str, task: str | None = None) -> LayoutEdit | None:
        """A new layout label (its task follows it, unless `task` names one of TASKS)."""
        region = self.work.blocks[region_id].region
        task = task if task in TASKS else route(label, keep_headers=True)
        if region.label == label and region.task == task:
            return None
        with self._edit(region.page, f"Relabel {region_id} as {label} ({task})", region_id) as edit:
            region.extra.setdefault("native_label", region.label)
            region.label, region.task = label, task
            _mark(region)
        return edit

    def split(self, region_id: str, y_pt: float) -> LayoutEdit | None:
        """Cut a region in two at the line `y_pt` (points): the top keeps the id, the bottom is a new region of
        the same label; both are to be read again."""
        block = self.work.blocks[region_id]
        x0, y0, x1, y1 = block.region.box_pt
        if not y0 + MIN_SIZE_PT <= y_pt <= y1 - MIN_SIZE_PT:
            return None
        page = block.region.page
        rid = self._new_id(page)
        with self._edit(page, f"Split {region_id}", region_id) as edit:
            self._place(block.region, (x0, y0, x1, y_pt))
            bottom = Region(id=rid, page=page, box=(0, 0, 0, 0), label=block.region.label, task=block.region.task,
                            order=block.region.order, dpi=block.region.dpi, source=PERSON_LAYOUT)
            self._place(bottom, (x0, y_pt, x1, y1))
            _forget_reading(block)
            self.work.blocks[rid] = Block(region=bottom, status="pending")
            self._renumber(page, bottom)
        return edit

    def merge(self, first_id: str, second_id: str) -> LayoutEdit | None:
        """Join two regions of a page: the one earlier in reading order keeps its id and takes both boxes and both
        texts (in reading order); the other goes."""
        a, b = self.work.blocks[first_id], self.work.blocks[second_id]
        if a.id == b.id or a.region.page != b.region.page:
            return None
        if (b.region.order, b.id) < (a.region.order, a.id):
            a, b = b, a
        page = a.region.page
        with self._edit(page, f"Merge {b.id} into {a.id}", a.id) as edit:
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.region.box_pt, b.region.box_pt
            self._place(a.region, (min(ax0, bx0), min(ay0, by0), max(ax1, bx1), max(ay1, by1)))
            a.region.text = "\n".join(t for t in (a.region.text, b.region.text) if t)
            if a.edited or b.edited:
                a.markdown = "\n\n".join(t for t in (a.markdown, b.markdown) if t)
                a.edited = True
            del self.work.blocks[b.id]
            self._renumber(page)
        return edit

    # --- helpers -----------------------------------------------------------------------------------------------

    class _Recorder:
        def __init__(self, editor: "RegionEditor", page: int, description: str, selected: str) -> None:
            self.editor, self.page = editor, page
            frame = editor.work.pages.get(page)
            self.edit = LayoutEdit(page, description, page_blocks(editor.work, page),
                                   layout_before=frame.layout if frame else "", selected=selected)

        def __enter__(self) -> LayoutEdit:
            return self.edit

        def __exit__(self, exc_type, *_exc) -> None:
            work = self.editor.work
            if exc_type is not None:
                restore(work, self.page, self.edit.before, self.edit.layout_before)
                return
            if self.page in work.pages:
                work.pages[self.page].layout = PERSON_LAYOUT
            self.edit.after = page_blocks(work, self.page)

    def _edit(self, page: int, description: str, selected: str) -> "_Recorder":
        return RegionEditor._Recorder(self, page, description, selected)

    def _frame(self, page: int) -> PageOutput | None:
        return self.work.pages.get(page)

    def _dpi(self, page: int) -> float:
        frame = self._frame(page)
        if frame is not None and frame.dpi > 0:
            return float(frame.dpi)
        blocks = self.work.layout_blocks(page)
        return float(blocks[0].region.dpi) if blocks else 72.0

    def _clamp(self, page: int, box_pt) -> tuple[float, float, float, float] | None:
        x0, y0, x1, y1 = (float(v) for v in box_pt)
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        frame = self._frame(page)
        if frame is not None and frame.width_pt > 0:
            x0, x1 = max(0.0, x0), min(frame.width_pt, x1)
            y0, y1 = max(0.0, y0), min(frame.height_pt, y1)
        if x1 - x0 < MIN_SIZE_PT or y1 - y0 < MIN_SIZE_PT:
            return None
        return (round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2))

    def _place(self, region: Region, box_pt: tuple[float, float, float, float]) -> None:
        s = (region.dpi or 72.0) / 72.0
        region.box_pt = tuple(box_pt)
        region.box = tuple(round(v * s, 2) for v in box_pt)
        _mark(region)

    def _new_id(self, page: int) -> str:
        n = 1
        while f"p{page + 1}-u{n:02d}" in self.work.blocks:
            n += 1
        return f"p{page + 1}-u{n:02d}"

    def _renumber(self, page: int, placed: Region | None = None) -> None:
        """Reading order 0..n-1 on the page; a region just placed goes before the first region that starts below
        its top (a person draws a missed paragraph where it belongs)."""
        blocks = [b for b in self.work.layout_blocks(page) if placed is None or b.id != placed.id]
        regions = [b.region for b in sorted(blocks, key=lambda b: (b.region.order, b.id))]
        if placed is not None:
            at = next((k for k, r in enumerate(regions) if r.box_pt[1] > placed.box_pt[1]), len(regions))
            regions.insert(at, placed)
        for k, r in enumerate(regions):
            r.order = k


def _mark(region: Region) -> None:
    if USER_FIXED not in region.flags:
        region.flags.append(USER_FIXED)


def _forget_reading(block: Block) -> None:
    """The region now covers other text: its old reading is not its reading (it is read again)."""
    block.region.text = ""
    for key in RESULT_KEYS:
        block.region.extra.pop(key, None)
    block.region.flags = [f for f in block.region.flags if f not in ("error", "cancelled")]
    block.status, block.markdown, block.ocr_markdown, block.cer, block.reviewed = "pending", "", "", None, False


def _same(a, b) -> bool:
    return all(abs(float(x) - float(y)) < 0.01 for x, y in zip(a, b))
