"""Page <-> text linking in the window: both directions go by the block id, within one document. A click on a
region puts the editor on its block; a block chosen in the editor, a round or an R-SWA window chosen in the
decoding views lights up its region on the page. The decoding views name the document with the region (region
ids repeat across documents): a round of another document shows that document first. A mixin of `MainWindow`.

What must never live here: the editor's own highlighting (app.gui.review_pane), the window model's streams."""
from __future__ import annotations

from app.gui.views.decode_store import document_key


class WindowLinking:
    """Reveal and select by block id; reads `session`, the page view, the review pane and the decoding views.
    """

    def reveal(self, region_id: str, *, leave_live: bool = False):
        """Show the page of `region_id`'s block and select the region there; the block, or None when there is
        none. `leave_live`: a person went there (editor, find, keys), so the page stops following the live
        decode."""
        block = self.session.find_block(region_id)
        if block is None:
            return None
        if block.region.page != self.page_view.page:
            if leave_live:
                self.follow_live = False
            self.show_page(block.region.page)
        self.page_view.select_region(region_id)
        return block

    def select_region(self, region_id: str) -> None:
        """A region was clicked (or chosen elsewhere): select it on the page and put the editor on its block.
        """
        if self.reveal(region_id) is not None:
            self.review.select_block(region_id, focus=False)  # the keys stay on the page (J/K, R, Enter…)

    def _editor_block(self, region_id: str) -> None:
        if not region_id:
            self.page_view.select_region("")
            return
        self.reveal(region_id, leave_live=True)

    def work_of(self, document: str):
        """The open document `document` names (the current one for ""), or None."""
        if not document:
            return self.work
        key = document_key(document)
        return next((d for d in self.session.documents if document_key(d.path) == key), None)

    def show_text_span(self, document: str, region_id: str, start: int, end: int) -> None:
        """The decoding views chose a round of `document`'s region: show that document, light up its region
        and the characters the round wrote, in the document's own text."""
        work = self.work_of(document)
        if work is None:
            return
        if work is not self.work:
            self.show_document(self.session.documents.index(work))
        if self.reveal(region_id) is not None:
            # the decoder's span in the block's text
            start, end = self.views.document_span(region_id, start, end)
            self.review.highlight_span(region_id, start, end)

    def show_window_span(self, document: str, region_id: str, start: int, end: int) -> None:
        """The R-SWA window of `document` moved: `region_id` names a generation (e.g. "doc", the whole
        document) and the span is in its raw output, tags included. Highlight the text of the block(s) inside
        the window; kept and redone when blocks arrive, so the highlight follows the layout as it grows. Only
        the document shown is highlighted (the editor shows no other)."""
        if self.work_of(document) is not self.work or self.work is None:
            return
        block = self.session.find_block(region_id)
        if block is not None and not block.provisional:  # a region engine's own window
            self.show_text_span(document, region_id, start, end)
            return
        self._window_span = (document, region_id, start, end)
        streams = getattr(getattr(self.views, "window_model", None), "streams", {})
        raw = streams[region_id].text if region_id in streams else None
        self.review.highlight_spans(self.session.window_spans(region_id, start, end, raw))

    def _block_edited(self, region_id: str) -> None:
        block = self.session.find_block(region_id)
        if block is not None:
            self.page_view.set_region_state(region_id, edited=block.edited)
        self.autosave.touch()

