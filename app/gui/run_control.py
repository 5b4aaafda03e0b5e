"""Runs in the window: what a run asks the worker to read (a document, some of its pages, one region), the queue
of documents dropped together, Cancel, and the wrap-up when the worker says a run ended (status, conflicts with
the person's edits, journal, the next document in the queue).

The events of a run do not pass through here: they enter the window's one entry point, `handle_event`. What must
never live here: decoding, drawing, file formats.
"""
from __future__ import annotations

import shutil

from app.gui.session import DocumentWork, pictures_dir
from app.gui.worker import RunRequest

DECODED_TASKS = ("text", "table", "formula")


class RunControl:
    def __init__(self, window) -> None:
        self.window = window
        self.queue: list[str] = []  # documents waiting to be read (several dropped at once)

    def rerun_region(self, region_id: str) -> int:
        """Decode one region again (its page's layout is kept)."""
        block = self.window.session.find_block(region_id)
        if block is None or block.region.task not in DECODED_TASKS:
            return 0
        return self.run_document([block.region.page], region_ids=[region_id])

    def run_document(self, pages: list[int] | None = None, work: DocumentWork | None = None,
                     region_ids: list[str] | None = None) -> int:
        """Read a document (default: the current one), or some of its pages, on the worker. Returns the run id
        (0: nothing to do)."""
        w = self.window
        work = work or w.work
        if work is None:
            return 0
        w.editor.flush_edits()
        w._replaying = False
        w.session.prepare_rerun(work, pages, region_ids)
        request = RunRequest(
            path=work.path,
            engine=w.engine_bar.engine_name,
            options=w.engine_bar.options(),
            pages=pages,
            region_ids=region_ids,
            password=w._passwords.get(work.path),
        )
        w._run_work = work
        w._follow_live = True
        w._conflicts = []
        w.banner.hide()
        w.traces.start_recording(work)
        run_id = w.decoder.submit(request)
        w.progress.start()
        w.documents.set_status(w._index_of(work.path), "reading…")
        w._update_actions()
        return run_id

    def rerun_page(self) -> int:
        """Decode the shown page again. Edited blocks keep their edits unless the person agrees to replace them."""
        w = self.window
        if w.work is None or w.page_view.page < 0:
            return 0
        return self.run_document([w.page_view.page])

    def cancel(self, discard: bool = False) -> None:
        """Stop the run after the current forward pass; what was finished stays. `discard` also drops the events
        still in flight (the document was closed, or a replay takes over)."""
        w = self.window
        if w.decoder.running:
            w.decoder.cancel(discard=discard)
            w.progress.cancelling()
            self.queue.clear()

    def enqueue(self, paths: list[str]) -> None:
        """Read these documents one after another (after the run in progress, if any)."""
        self.queue.extend(p for p in paths if p not in self.queue)
        self.next_in_queue()

    def next_in_queue(self) -> None:
        w = self.window
        while self.queue and not w.decoder.running:
            path = self.queue.pop(0)
            work = next((d for d in w.session.documents if d.path == path), None)
            if work is not None:
                self.run_document(work=work)
                return

    def finished(self, run_id: int, output: object, error: str) -> None:
        w = self.window
        w.progress.stop()
        w.traces.stop_recording()
        engine = w.run_label.text().split(" · ")[0]
        if engine and w.decoder.device and not w._replaying:
            w.run_label.setText(f"{engine} · {w.decoder.device}")
        work = w._run_work
        if work is not None and any(d is work for d in w.session.documents):
            status = "failed" if error else work.summary() or "0 blocks"
            w.documents.set_status(w._index_of(work.path), status)
        if error:
            w.banner.show_message(error)
            w.statusBar().showMessage("The run failed; see the message above.", 8000)
        if w.review.resolve_conflicts(w._conflicts, w.prompter):
            w._show_regions()
        w._conflicts = []
        w._run_work = None
        if w.stale_pictures:  # crops of documents closed while this run was stopping (unless opened again since)
            open_now = {pictures_dir(d.path) for d in w.session.documents}
            for folder in w.stale_pictures - open_now:
                shutil.rmtree(folder, ignore_errors=True)
            w.stale_pictures = set()
        w._update_actions()
        w.redraw()
        w.save_journal()
        self.next_in_queue()
