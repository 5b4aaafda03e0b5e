"""The window's documents: opening, listing, showing and closing them, and what the page renderer reports
about a document (its page count and sizes, a render that failed or wants a password). A mixin of
`MainWindow`.

What must never live here: the page's own drawing (app.gui.page_view), run state (app.core.review.runs),
events."""
from __future__ import annotations

from pathlib import Path

from app.core.document import DOCUMENT_SUFFIXES
from app.core.review.document import DocumentWork


class WindowDocuments:
    """Documents in the window's session; reads `session`, `settings`, `runs`, the document list and the
    banner."""

    @property
    def work(self) -> DocumentWork | None:
        return self.session.document

    def open_files(self, paths: list[str], run: bool | None = None) -> list[str]:
        """Open PDFs/images (others are reported, not opened); the first new one becomes current. With `run`
        (or the auto_run setting) they are read one after another."""
        opened, refused = [], []
        for p in paths:
            path = str(Path(p).expanduser().resolve())
            if Path(path).suffix.lower() not in DOCUMENT_SUFFIXES or not Path(path).is_file():
                refused.append(Path(p).name)
                continue
            self.session.add_document(path)
            self.settings.add_recent(path)
            opened.append(path)
        if refused:
            self.banner.show_message("Not opened (not a PDF or image, or missing): " + ", ".join(refused))
        if not opened:
            return []
        self.refresh_documents()
        self.show_document(self.index_of(opened[0]))
        if run if run is not None else self.settings.get("auto_run"):
            self.runs.enqueue(opened)
            self.run_presenter.next_in_queue()
        self.autosave.touch()
        return opened

    def index_of(self, path: str) -> int:
        return next(i for i, d in enumerate(self.session.documents) if d.path == path)

    def refresh_documents(self, current: int | None = None) -> None:
        names = [(d.name, d.path) for d in self.session.documents]
        self.documents.set_documents(names, self.session.current if current is None else current)
        for row, work in enumerate(self.session.documents):  # the list is rebuilt: put each one's status back
            self.documents.set_status(row, "reading…" if work is self.runs.work else work.summary())

    def show_document(self, index: int) -> None:
        if not 0 <= index < len(self.session.documents):
            return
        self.session.current = index
        work = self.work
        self.refresh_documents(index)
        self.setWindowTitle(f"{work.name} — Scriptorium")
        self.traces.document_shown(work)
        self.views.show_document(work.path)  # the decoding dock follows: this document's rounds
        self.middle.setCurrentIndex(1)
        self.page_view.clear()
        self.review.show_document()
        if work.page_sizes:
            self.thumbnails.set_pages(work.page_sizes)
            self.show_page(min(work.current_page, len(work.page_sizes) - 1))
        else:
            self.thumbnails.clear()
        if Path(work.path).is_file():
            self.renderer.request_info(work.path)
        self.update_actions()

    def close_document(self, index: int) -> None:
        if not 0 <= index < len(self.session.documents):
            return
        work = self.session.documents[index]
        if self.runs.work is work:
            self.progress.cancelling()
        self.runs.forget(work)  # its run stops; its picture crops go (now, or once the run has stopped)
        self.renderer.forget(work.path)
        self.views.forget_document(work.path)
        self.session.remove_document(index)
        self.refresh_documents()
        if self.session.documents:
            self.show_document(max(0, self.session.current))
        else:
            self.page_view.clear()
            self.thumbnails.clear()
            self.review.show_document()
            self.middle.setCurrentIndex(0)
            self.setWindowTitle("Scriptorium")
        self.autosave.touch()
        self.update_actions()

    def close_current_document(self) -> None:
        self.close_document(self.session.current)

    def _info_ready(self, path: str, count: int, sizes: list) -> None:
        work = next((d for d in self.session.documents if d.path == path), None)
        if work is None:
            return
        sizes = [tuple(s) for s in sizes]
        changed = sizes != work.page_sizes
        work.page_count, work.page_sizes = count, sizes
        if work is self.work and (changed or self.page_view.page < 0):
            self.thumbnails.set_pages(work.page_sizes)
            self.show_page(min(work.current_page, count - 1))
        self.update_actions()

    def _render_failed(self, path: str, message: str, needs_password: bool) -> None:
        """An encrypted PDF asks for its password, and again after a wrong one (until the person cancels)."""
        if needs_password and any(d.path == path for d in self.session.documents):
            tried = self.runs.passwords.pop(path, None)
            again = "That password did not open it. " if tried is not None else ""
            password = self.prompter.password("Encrypted PDF",
                                              f"{Path(path).name} is encrypted. {again}Password:")
            if password and password != tried:
                self.runs.passwords[path] = password
                self.renderer.set_password(path, password)
                self.renderer.request_info(path)
                return
        work = next((d for d in self.session.documents if d.path == path), None)
        if work is not None:  # the list says it too, not "0 blocks"
            work.open_failed(message)
            self.refresh_documents()
        self.banner.show_message(message)

