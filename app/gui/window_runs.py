"""Runs and the live event pump of the window: starting and cancelling runs, and the one entry point for
events, live or replayed (`handle_event`), which applies each to the session at once and marks what the next
frame (`redraw`) must bring up to date. A mixin of `MainWindow`.

What must never live here: run state or the queue (app.core.review.runs), how a run is shown
(app.gui.run_presenter), decoding."""
from __future__ import annotations

from pathlib import Path

from app.core.base.stages import summary_line
from app.core.record import events as ev
from app.core.review.document import DocumentWork


class WindowRuns:
    """Runs and events; reads `runs`, `run_presenter`, `progress`, `views`, the review pane and the frame
    timer."""

    def run_document(self, pages: list[int] | None = None, work: DocumentWork | None = None,
                     region_ids: list[str] | None = None) -> int:
        """Read a document (default: the current one), some of its pages or regions (default: the pages chosen
        to read, app.gui.page_range). Returns the run id."""
        work = work or self.work
        if pages is None and region_ids is None and work is not None:
            pages = work.pages_to_read()
        return self.run_presenter.start(work, pages, region_ids)

    def rerun_page(self) -> int:
        """Read the shown page again. Edited blocks keep their edits unless the person agrees to replace them.
        """
        if self.work is None or self.page_view.page < 0:
            return 0
        return self.run_document([self.page_view.page])

    def rerun_region(self, region_id: str) -> int:
        block = self.session.find_block(region_id)
        return self.run_document([block.region.page], region_ids=[region_id]) if block is not None else 0

    def cancel_run(self, discard: bool = False) -> None:
        self.run_presenter.cancel(discard)

    def _run_started(self, run_id: int) -> None:
        self.follow_live = True
        self.update_actions()

    def _run_ended(self, ended) -> None:
        """Shown by the presenter; here: the person's edits the run read differently, and the journal."""
        if self.review.resolve_conflicts(ended.conflicts, self.prompter):
            self.show_regions()
        self.update_actions()
        self.redraw()
        self.save_journal(wait=False)  # never an fsync stall on the GUI thread

    def _live_events(self, events: list) -> None:
        list(map(self.handle_event, events))

    # --- the one entry point for events ---------------------------------------------------------------------

    def handle_event(self, event: ev.Event) -> None:
        """Apply one event (live or replayed) to the session, the progress display and the decoding views; the
        widgets catch up on the next frame."""
        self.events_handled += 1
        if self.runs.needs_document(event):
            self.traces.adopt_document(event)
        work, change = self.runs.apply(event)
        self.progress.feed(event)
        self.views.feed(event)
        replaying = self.runs.replaying
        if isinstance(event, ev.RunStarted):
            self._window_span = None
            self.review.highlight_spans([])
            device = event.device or self.decoder.device
            parts = (event.engine, device, "replay" if replaying else "")
            self.run_label.setText(" · ".join(x for x in parts if x))
            if replaying:
                self.progress.start(cancellable=False, title="Replaying…")
        if isinstance(event, ev.PageFinished) and event.stages:  # where the page's time went, stage by stage
            self.statusBar().showMessage(f"Page {event.page + 1} read in {event.ms / 1e3:.1f} s: "
                                         f"{summary_line(event.stages)}", 8000)
        if isinstance(event, ev.ErrorRaised):
            if event.fatal:
                self.run_presenter.show_error(event)
            else:
                self.statusBar().showMessage(event.message, 8000)
        if change.run_state and replaying and not isinstance(event, ev.RunStarted):
            self.progress.stop()
        if change and work is self.work:
            self._dirty_blocks |= change.blocks
            self._dirty_layout |= bool(change.layout_pages)
            self._dirty_live |= change.live_region is not None
            if not self._frame.isActive():
                self._frame.start()
        if change:
            self.autosave.touch()

    def redraw(self) -> None:
        """Bring the widgets up to the session (called by the frame timer; tests may call it directly)."""
        self._frame.stop()
        work = self.work
        blocks, self._dirty_blocks = self._dirty_blocks, set()
        layout, self._dirty_layout = self._dirty_layout, False
        live, self._dirty_live = self._dirty_live, False
        if work is None:
            return
        if layout and not work.page_sizes and not Path(work.path).is_file():
            work.page_sizes = work.guess_page_sizes()  # a replay of a document not on this machine
            self.thumbnails.set_pages(work.page_sizes)
            self.show_page(0)
        if layout:
            self.show_regions()
        if live:
            self._follow_live_region()
        for rid in blocks:
            block = work.blocks.get(rid)
            if block is not None:
                self.page_view.set_region_state(rid, status=block.status, edited=block.edited)
        self.review.refresh_blocks(blocks)
        live_id = self.session.live_region or ""
        following = bool(live_id) and self.follow_live and self.views.rounds_view.following
        # the streaming block stays in view in the editor and the preview, unless the person looks elsewhere
        self.review.preview.follow_id = live_id if following and not self.editor.hasFocus() else ""
        if following and live_id in blocks:
            self.editor.reveal_block(live_id)
        # blocks arrived or moved: redo the highlight
        if self._window_span is not None and (blocks or layout):
            self.show_window_span(*self._window_span)

    def _follow_live_region(self) -> None:
        rid = self.session.live_region or ""
        block = self.session.find_block(rid) if rid else None
        if block is not None and self.follow_live and block.region.page != self.page_view.page:
            self.show_page(block.region.page)
        self.page_view.set_live_region(rid)

    def open_trace(self, path: str | Path) -> int:
        """Replay a trace file through `handle_event`, exactly like a live run. Returns the number of events.
        """
        return self.traces.open(path)

