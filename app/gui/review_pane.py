"""The right column: the block bar, the Markdown editor and the rendered preview, kept in step with the session.

It redraws blocks the window marks dirty (never the whole document while text streams in), forwards the person's
edits to the session, and exposes `block_selected(id)` when the cursor enters a block so the window can light up
the region on the page.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from app.gui.block_bar import BlockBar
from app.gui.markdown_editor import MarkdownEditor
from app.gui.preview import Preview
from app.core.review.document import Block, DocumentWork
from app.core.review.session import Session
from app.core.base.wording import count

PLACEHOLDER = "…"


def editor_text(block: Block) -> str:
    """What the editor shows for a block: its Markdown, or a visible placeholder while it is still pending."""
    if block.markdown:
        return block.markdown
    return PLACEHOLDER if block.status in ("pending", "decoding") else ""


class ReviewPane(QWidget):
    block_selected = Signal(str)
    block_edited = Signal(str)
    text_edited = Signal(str, str, str)  # id, Markdown before, after: a person's committed edit (for undo)

    def __init__(self, session: Session, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self.block_bar = BlockBar()
        self.editor = MarkdownEditor()
        self.preview = Preview()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.editor)
        self.splitter.addWidget(self.preview)
        self.splitter.setSizes([1, 1])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.block_bar)
        layout.addWidget(self.splitter, 1)
        self.editor.cursor_block_changed.connect(self._cursor_block)
        self.editor.block_edited.connect(self._edited)
        self.block_bar.use_ocr_requested.connect(self.use_ocr)
        self.block_bar.keep_edit_requested.connect(self.keep_edit)

    @property
    def work(self) -> DocumentWork | None:
        return self.session.document

    def _visible_blocks(self) -> list[Block]:
        work = self.work
        return [b for b in work.text_blocks() if editor_text(b) or b.edited] if work else []

    def show_document(self) -> None:
        blocks = self._visible_blocks()
        self.editor.set_blocks([(b.id, editor_text(b)) for b in blocks])
        self._refresh_preview()
        self.block_bar.show_block(None)

    def refresh_blocks(self, ids: set[str]) -> None:
        """Redraw these blocks (text streamed in, OCR finished, status changed)."""
        work = self.work
        if work is None:
            return
        if self.editor.pending_edits & ids:
            self.editor.flush_edits()  # the person is typing in a block that is being redrawn: keep the typing
        wanted = [b.id for b in self._visible_blocks()]
        if self.editor.block_ids() != wanted:
            self._rebuild_keeping_cursor()  # a block appeared or vanished: cheap next to a decode
            return
        for rid in ids:
            block = work.blocks.get(rid)
            if block is not None:
                self.editor.update_block(rid, editor_text(block))
        self._refresh_preview()
        current = self.editor.current_block_id()
        if current in ids:
            self.block_bar.show_block(work.blocks.get(current))

    def _rebuild_keeping_cursor(self) -> None:
        rid = self.editor.current_block_id()
        offset = self.editor.textCursor().position() - self.editor.block_start(rid) if rid else 0
        bar = self.editor.verticalScrollBar().value()
        self.editor.blockSignals(True)
        self.show_document()
        if rid and self.editor.block_start(rid) >= 0:
            cursor = self.editor.textCursor()
            end = self.editor.document().characterCount() - 1
            cursor.setPosition(min(end, self.editor.block_start(rid) + max(0, offset)))
            self.editor.setTextCursor(cursor)
        self.editor.sync_current_block()  # restore the block highlight; signals are blocked, so no echo
        self.editor.blockSignals(False)
        self.editor.verticalScrollBar().setValue(bar)

    def _refresh_preview(self) -> None:
        work = self.work
        blocks = [(b.id, b.markdown) for b in work.text_blocks()] if work else []
        self.preview.set_blocks(blocks)

    def select_block(self, rid: str, focus: bool = True) -> bool:
        """Move the cursor to the block and scroll both editor and preview to it (`focus`: and type there)."""
        moved = self.editor.goto_block(rid)
        if moved:
            if focus:
                self.editor.setFocus(Qt.FocusReason.OtherFocusReason)
            self.preview.show_block(rid)
            self.block_bar.show_block(self.session.find_block(rid))
        return moved

    def _cursor_block(self, rid: str) -> None:
        self.block_bar.show_block(self.session.find_block(rid) if rid else None)
        if rid and self.preview.isVisible():
            self.preview.show_block(rid)
        self.block_selected.emit(rid)

    def _edited(self, rid: str, text: str) -> None:
        block = self.session.find_block(rid)
        before = block.markdown if block is not None else ""
        if self.session.edit(rid, text):
            self.text_edited.emit(rid, before, text)
            self._refresh_preview()
            self.block_bar.show_block(self.session.find_block(self.editor.current_block_id()))
            self.block_edited.emit(rid)

    def use_ocr(self, rid: str) -> None:
        self.session.accept_ocr(rid)
        self.refresh_blocks({rid})
        self.block_bar.show_block(self.session.find_block(rid))
        self.block_edited.emit(rid)

    def keep_edit(self, rid: str) -> None:
        self.session.keep_edit(rid)
        self.block_bar.show_block(self.session.find_block(rid))

    def resolve_conflicts(self, conflicts: list[str], prompter) -> bool:
        """After a re-run: edited blocks that OCR read differently. One question for all of them; "no" keeps the
        edits (each block can still take the new text from the block bar). Returns whether edits were replaced."""
        pending = [rid for rid in conflicts if (b := self.session.find_block(rid)) and b.pending_ocr is not None]
        if not pending:
            return False
        replace = prompter.confirm(
            "overwrite_edited",
            "Edited blocks",
            f"OCR ran again and read {count(len(pending), 'block')} that you edited differently. Replace your edits with "
            "the new OCR text? (No keeps your edits; each block can still take the new text later.)",
        )
        if replace:
            for rid in pending:
                self.session.accept_ocr(rid)
            self.show_document()
        return replace

    def _shift(self, block: Block | None) -> int:
        """Where the decoder's text begins inside the block's Markdown (a heading's `# `, a formula's `$$`)."""
        if block is not None and block.raw_text and not block.markdown.startswith(block.raw_text[:20]):
            probe = block.raw_text.strip()[:20]
            found = block.markdown.find(probe) if probe else -1
            return max(0, found)
        return 0

    def highlight_span(self, rid: str, start: int, end: int) -> None:
        shift = self._shift(self.session.find_block(rid))
        self.editor.highlight_span(rid, start + shift, end + shift)

    def highlight_spans(self, spans: list[tuple[str, int, int]]) -> None:
        """Mark spans given in each block's decoded text (`Session.window_spans`), in the editor's Markdown."""
        marked = []
        for rid, start, end in spans:
            block = self.session.find_block(rid)
            if block is None:
                continue
            shift = self._shift(block)
            size = len(block.markdown)
            a, b = min(start + shift, size), min(end + shift, size)
            if b > a:
                marked.append((rid, a, b))
        self.editor.highlight_spans(marked)
