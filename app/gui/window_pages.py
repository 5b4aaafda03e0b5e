"""The window's pages: which page is shown, its regions on the page view, the renders and thumbnails it asks
for and gets back. A mixin of `MainWindow`.

What must never live here: rendering itself (app.gui.render_service), the regions' text (the review pane).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QImage

from app.core.base.stages import summary_line


class WindowPages:
    """The shown page of the current document; reads `work`, `session`, the page view and the thumbnails."""

    def show_page(self, page: int) -> None:
        work = self.work
        if work is None or not work.page_sizes or not 0 <= page < len(work.page_sizes):
            return
        work.current_page = page
        self.page_view.show_page(page, work.page_sizes[page], len(work.page_sizes))
        self.show_regions()
        self.thumbnails.set_current_page(page)

    def _page_chosen(self, page: int) -> None:
        """The person chose a page (a run's outcome in the status bar is not overwritten by pages it shows).
        """
        self.follow_live = False
        self.show_page(page)
        if self.work is not None and self.page_view.page == page:
            timed = self.work.pages.get(page)  # where its time went (app.core.pipeline.page_stages)
            stages = f" · {summary_line(timed.stages)}" if timed is not None and timed.stages else ""
            self.statusBar().showMessage(f"Page {page + 1} of {len(self.work.page_sizes)}{stages}",
                                         6000 if stages else 2000)

    def show_regions(self) -> None:
        work = self.work
        if work is None:
            return
        blocks = work.layout_blocks(self.page_view.page)
        selected = self.page_view.selected_id
        self.page_view.set_regions([b.region for b in blocks])
        for b in blocks:
            self.page_view.set_region_state(b.id, edited=b.edited, status=b.status, reviewed=b.reviewed,
                                            live=b.id == self.session.live_region)
        if selected:
            self.page_view.select_region(selected, center=False)

    def _render_wanted(self, page: int, dpi: float) -> None:
        if self.work is not None and Path(self.work.path).is_file():
            self.renderer.request(self.work.path, page, dpi, "page")

    def _thumbnail_wanted(self, page: int, dpi: float) -> None:
        if self.work is not None and Path(self.work.path).is_file():
            self.renderer.request(self.work.path, page, dpi, "thumbnail")

    def _page_ready(self, path: str, page: int, dpi: float, image: QImage, purpose: str) -> None:
        if self.work is None or path != self.work.path:
            return
        if purpose == "thumbnail":
            self.thumbnails.set_thumbnail(page, image)
        else:
            self.page_view.set_page_image(page, dpi, image)

    def next_page(self) -> None:
        self._page_chosen(self.page_view.page + 1)

    def previous_page(self) -> None:
        self._page_chosen(self.page_view.page - 1)

