"""The review flow of the window: fixing regions on the page and moving through blocks with the keyboard.

- One undo stack (Ctrl+Z / Ctrl+Shift+Z outside the editor; inside it the editor's own typing undo comes first) for
  a person's layout fixes (app.core.review.region_edits: move/resize, draw, delete, relabel, split, merge) and the
  block texts they committed in the editor.
- R reads the selected region again (with its box as it is now), D toggles drawing a new region, Delete removes
  one, S splits it at the line last right-clicked (else its middle), M merges it with the next region, the context
  menu relabels.
- J/K (or Alt+↓/↑) select the next/previous region, N the next block that needs review (app.core.pipeline.quality:
  low confidence, high CER, truncated, error…) and Enter marks the selected block as reviewed and moves on.

It is given what it works on (`ReviewHost`), never the window. What must never live here: changing regions or
blocks directly (core's region editor and session do), drawing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, QPointF, Qt, Signal
from PySide6.QtGui import QKeySequence, QUndoCommand, QUndoStack
from PySide6.QtWidgets import QMenu

from app.core.pipeline.quality import review_reasons
from app.core.document.regions import TASKS
from app.core.review.document import DocumentWork
from app.core.review.region_edits import LayoutEdit, RegionEditor, restore

if TYPE_CHECKING:  # pragma: no cover
    from app.core.review.runs import RunController
    from app.core.review.session import Session
    from app.gui.page_view import PageView
    from app.gui.review_pane import ReviewPane
    from app.gui.side_panel import DocumentList

LABELS = ("text", "paragraph_title", "doc_title", "table", "formula", "image", "chart", "header", "footer",
          "footnote", "abstract", "reference_content")


class LayoutEditCommand(QUndoCommand):
    def __init__(self, flow: "ReviewFlow", work: DocumentWork, edit: LayoutEdit) -> None:
        super().__init__(edit.description)
        self.flow, self.work, self.edit = flow, work, edit
        self._done = True  # pushed after it was made

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        restore(self.work, self.edit.page, self.edit.after, "person")
        self.flow.layout_changed(self.work, self.edit.page, self.edit.selected)

    def undo(self) -> None:
        restore(self.work, self.edit.page, self.edit.before, self.edit.layout_before)
        self.flow.layout_changed(self.work, self.edit.page, self.edit.selected)


class TextEditCommand(QUndoCommand):
    def __init__(self, flow: "ReviewFlow", work: DocumentWork, region_id: str, before: str, after: str) -> None:
        super().__init__(f"Edit the text of {region_id}")
        self.flow, self.work, self.region_id, self.before, self.after = flow, work, region_id, before, after
        self._done = True

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        self.flow.set_text(self.work, self.region_id, self.after)

    def undo(self) -> None:
        self.flow.set_text(self.work, self.region_id, self.before)


@dataclass(frozen=True)
class ReviewHost:
    """What the review flow works on: the session and the widgets showing it, and what the window does for it."""

    session: Session
    page_view: PageView
    review: ReviewPane  # the block bar, the editor (review.editor) and the preview
    documents: DocumentList
    runs: RunController  # which document is being read (its list line is the run's then)
    reveal: Callable[..., object]  # show a block's page and select its region (MainWindow.reveal)
    show_regions: Callable[[], None]  # draw the shown page's regions again
    select_region: Callable[[str], None]  # on the page and in the editor
    rerun_region: Callable[[str], int]
    touch: Callable[[], None]  # something worth keeping changed (the journal is saved soon)
    status: Callable[[str, int], None]  # a status-bar message for so many milliseconds


class ReviewFlow(QObject):
    drawing_changed = Signal(bool)  # draw mode on or off (the Draw action's check mark follows)

    def __init__(self, host: ReviewHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.undo_stack = QUndoStack(self)
        self.split_at: tuple[str, float] | None = None  # the region and line last right-clicked
        view = host.page_view
        view.box_edited.connect(self.set_box)
        view.region_drawn.connect(self.draw)
        view.region_menu_requested.connect(self.show_menu)
        view.region_activated.connect(lambda rid: host.review.select_block(rid, focus=True))
        host.review.text_edited.connect(self.text_edited)

    # --- what the person sees --------------------------------------------------------------------------------

    @property
    def work(self) -> DocumentWork | None:
        return self.host.session.document

    def selected_id(self) -> str:
        return self.host.page_view.selected_id or self.host.review.editor.current_block_id()

    def select(self, region_id: str) -> None:
        """Select a block on the page and in the editor, keeping the keyboard on the page (J/K go on working)."""
        h = self.host
        if h.reveal(region_id, leave_live=True) is None:
            return
        h.review.select_block(region_id, focus=False)
        h.page_view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def layout_changed(self, work: DocumentWork, page: int, selected: str) -> None:
        """A page's regions changed (an edit, an undo or a redo): Markdown, page and editor follow."""
        h = self.host
        h.session.reassemble(work, page)
        if work is self.work:
            if h.page_view.page == page:
                h.show_regions()
            h.review.refresh_blocks({b.id for b in work.layout_blocks(page)})
            h.review.show_document()
            if selected and selected in work.blocks:
                self.select(selected)
            self.refresh_list()
        h.touch()

    def refresh_list(self) -> None:
        """The document list's line for the current document ("2 to review · 15 blocks"), unless it is reading."""
        h, work = self.host, self.work
        if work is not None and h.runs.work is not work:
            h.documents.set_status(h.session.current, work.summary())

    def _apply(self, edit: LayoutEdit | None) -> None:
        work = self.work
        if edit is None or work is None:
            return
        self.undo_stack.push(LayoutEditCommand(self, work, edit))
        self.layout_changed(work, edit.page, edit.selected)
        self.host.status(edit.description, 3000)

    # --- layout fixes ------------------------------------------------------------------------------------------

    def set_box(self, region_id: str, box_pt) -> None:
        if self.work is not None and region_id in self.work.blocks:
            self._apply(RegionEditor(self.work).set_box(region_id, tuple(box_pt)))

    def draw(self, page: int, box_pt) -> None:
        if self.work is not None:
            self._apply(RegionEditor(self.work).add(page, tuple(box_pt)))
            self.set_draw_mode(False)

    def set_draw_mode(self, on: bool) -> None:
        self.host.page_view.gestures.draw_mode = bool(on)
        if on:
            self.host.status("Drag on the page to draw a region (D again to stop)", 4000)
        self.drawing_changed.emit(bool(on))

    def delete_region(self) -> None:
        rid = self.selected_id()
        if self.work is not None and rid in self.work.blocks:
            self._apply(RegionEditor(self.work).delete(rid))

    def relabel(self, region_id: str, label: str, task: str | None = None) -> None:
        if self.work is not None and region_id in self.work.blocks:
            self._apply(RegionEditor(self.work).relabel(region_id, label, task))

    def split_region(self) -> None:
        rid = self.selected_id()
        if self.work is None or rid not in self.work.blocks:
            return
        x0, y0, x1, y1 = self.work.blocks[rid].region.box_pt
        y = self.split_at[1] if self.split_at and self.split_at[0] == rid else (y0 + y1) / 2
        self._apply(RegionEditor(self.work).split(rid, y))

    def merge_region(self, other: str = "") -> None:
        """Merge the selected region with `other` (default: the next one on its page)."""
        rid, work = self.selected_id(), self.work
        if work is None or rid not in work.blocks:
            return
        if not other:
            page = work.layout_blocks(work.blocks[rid].region.page)
            ids = [b.id for b in page]
            other = ids[ids.index(rid) + 1] if ids.index(rid) + 1 < len(ids) else ""
        if other:
            self._apply(RegionEditor(work).merge(rid, other))

    def read_again(self) -> None:
        rid = self.selected_id()
        if rid:
            self.host.rerun_region(rid)

    def show_menu(self, region_id: str, scene_pos: QPointF, global_pos) -> None:
        self.host.select_region(region_id)
        self.split_at = (region_id, scene_pos.y())
        menu = QMenu(self.host.page_view)
        menu.addAction("Read this region again (R)", lambda: self.host.rerun_region(region_id))
        menu.addAction("Split here (S)", self.split_region)
        menu.addAction("Merge with the next region (M)", self.merge_region)
        menu.addAction("Delete region (Del)", self.delete_region)
        labels = menu.addMenu("Label")
        for label in LABELS:
            labels.addAction(label, lambda lab=label: self.relabel(region_id, lab))
        tasks = menu.addMenu("Read as")
        region = self.work.blocks[region_id].region
        for task in TASKS:
            tasks.addAction(task, lambda t=task: self.relabel(region_id, region.label, t))
        menu.addSeparator()
        menu.addAction("Mark as reviewed (Enter)", self.mark_reviewed)
        menu.exec(global_pos)

    # --- text edits, on the same stack --------------------------------------------------------------------------

    def text_edited(self, region_id: str, before: str, after: str) -> None:
        if self.work is not None:
            self.undo_stack.push(TextEditCommand(self, self.work, region_id, before, after))

    def set_text(self, work: DocumentWork, region_id: str, markdown: str) -> None:
        h = self.host
        if work is not self.work:
            return
        h.review.editor.flush_edits()
        if h.session.edit(region_id, markdown):
            h.review.refresh_blocks({region_id})
            h.page_view.set_region_state(region_id, edited=work.blocks[region_id].edited)
            h.touch()

    def set_raw_stream(self, on: bool) -> None:
        """Show a whole-document generation's `<|det|>` headers and page markers as they stream (default: hidden)."""
        self.host.review.refresh_blocks(self.host.session.set_raw_stream_tags(on))

    def undo(self) -> None:
        self.host.review.editor.flush_edits()
        self.undo_stack.undo()

    def redo(self) -> None:
        self.undo_stack.redo()

    # --- moving through blocks ------------------------------------------------------------------------------------

    def _step(self, ids: list[str], forward: bool) -> str:
        """The next (or previous) of `ids` after the selected block in reading order, wrapping round; "" if none."""
        if not ids:
            return ""
        current = self.selected_id()
        rank = {b.id: k for k, b in enumerate(self.work.layout_blocks())}
        if current not in rank:
            return ids[0] if forward else ids[-1]
        after = [i for i in ids if rank[i] > rank[current]]
        before = [i for i in ids if rank[i] < rank[current]]
        ring = after + before if forward else before[::-1] + after[::-1]
        return ring[0] if ring else ""

    def _go(self, ids: list[str], forward: bool, none_left: str) -> None:
        rid = self._step(ids, forward) if self.work is not None else ""
        if rid:
            self.select(rid)
        else:
            self.host.status(none_left, 3000)

    def next_region(self) -> None:
        self._go([b.id for b in self.work.layout_blocks()] if self.work else [], True, "No regions")

    def previous_region(self) -> None:
        self._go([b.id for b in self.work.layout_blocks()] if self.work else [], False, "No regions")

    def needs_review(self) -> list[str]:
        work = self.work
        return [b.id for b in work.layout_blocks() if not b.reviewed and review_reasons(b.region)] if work else []

    def next_needs_review(self) -> None:
        self._go(self.needs_review(), True, "No block needs review")
        rid = self.selected_id()
        if rid and self.work is not None and rid in self.work.blocks:
            reasons = review_reasons(self.work.blocks[rid].region)
            if reasons:
                self.host.status(f"{rid}: " + ", ".join(reasons), 6000)

    def mark_reviewed(self) -> None:
        rid = self.selected_id()
        h = self.host
        if rid and h.session.set_reviewed(rid):
            h.page_view.set_region_state(rid, reviewed=True)
            h.review.refresh_blocks({rid})
            self.refresh_list()
            h.touch()
            h.status(f"{rid} reviewed", 2000)
        self.next_region()


PAGE_KEYS = ("read_again", "draw_region", "delete_region", "split_region", "merge_region", "next_region",
             "previous_region", "next_needs_review", "mark_reviewed")


def scope_review_keys(actions, page_view, flow: ReviewFlow) -> None:
    """The flow's one-key shortcuts act on the page only (typing J in the editor or Enter in a field stays typing);
    J/K and Enter get their second keys (the action table holds one each); Undo/Redo say what they would undo."""
    stack = flow.undo_stack
    for action, can, text, verb in ((actions.undo, stack.canUndoChanged, stack.undoTextChanged, "Undo"),
                                    (actions.redo, stack.canRedoChanged, stack.redoTextChanged, "Redo")):
        action.setEnabled(False)
        can.connect(action.setEnabled)
        text.connect(lambda t, a=action, v=verb: a.setText(f"&{v} {t}" if t else f"&{v}"))
    actions.next_region.setShortcuts([QKeySequence("J"), QKeySequence("Alt+Down")])
    actions.previous_region.setShortcuts([QKeySequence("K"), QKeySequence("Alt+Up")])
    actions.mark_reviewed.setShortcuts([QKeySequence("Return"), QKeySequence("Enter")])
    for name in PAGE_KEYS:
        action = getattr(actions, name)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        page_view.addAction(action)
