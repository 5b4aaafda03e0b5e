"""Exports of the reviewed work: `NAME.md`, `NAME.json`, `NAME.html` (formulas as MathML, sanitised) and the
searchable `NAME.pdf` — or the formats Preferences → Files choose, any of `convert --formats` (docx, xlsx, alto,
hocr, docling too) — through the pipeline's one writer (app.core.pipeline.output.write_document, the same bytes
`scriptorium convert --formats …` writes for the same reading), written as one unit. The texts are
the person's: an edited block is exported as edited (`"edited": true` in the JSON).

The writing (the PDF renders every page: seconds for a long document) runs off the GUI thread, in a QThreadPool
task, from a snapshot of the work taken when the export starts (`DocumentWork.to_output` copies the regions; edits
made while it writes go into the next export). Meanwhile the window stays live: a busy cursor, "Exporting…" in the
status bar and Export disabled; at the end the status bar names the files, or the banner says why none was left.
Closing the window waits for an export being written (`Exporter.finish`), so its set is whole.

Pictures: the session's picture blocks link to crops in the app's working folder; an export copies them into
`<stem>_images/` next to the exported files and links those instead (as `convert` does).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QObject, QRunnable, Qt, QThreadPool, Signal

from app.core.base.atomic import atomic_write_text  # noqa: F401 - tests check the atomic writer's permissions here
from app.core.pipeline.options import EXPORT_FORMATS, parse_formats
from app.core.pipeline.output import SUFFIXES, DocumentOutput, write_document
from app.core.pipeline.pictures import copy_pictures
from app.core.review.document import DocumentWork

if TYPE_CHECKING:  # pragma: no cover
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QStatusBar

    from app.gui.banner import Banner
    from app.gui.settings import Settings


def _copy_pictures(output: DocumentOutput, out_dir: Path, image_dir: str) -> dict[str, str]:
    return copy_pictures(output.regions(), out_dir, image_dir)


def plan(work: DocumentWork, target: str | Path,
         formats: str | tuple[str, ...] = EXPORT_FORMATS) -> tuple[Path, tuple[str, ...]]:
    """Where an export of `work` to `target` goes (the stem: target may carry any suffix; it is replaced) and which
    of `formats` (as `convert --formats` takes them; Preferences → Files) it writes: no PDF when the source is not
    at hand (a trace replayed without its document). Raises ValueError for formats that do not exist."""
    target = Path(target)
    suffixes = {*SUFFIXES.values(), ".htm", ".xml"}
    stem = target.with_suffix("") if target.suffix.lower() in suffixes else target
    stem = stem.with_suffix("") if stem.suffix.lower() in (".alto", ".docling") else stem
    chosen = parse_formats(formats)
    if not Path(work.path).is_file():
        chosen = tuple(f for f in chosen if f != "pdf")
    return stem, chosen


def write(output: DocumentOutput, stem: Path, formats: tuple[str, ...], password: str | None = None,
          alto_version: int = 4) -> list[Path]:
    """Write `output` as `<stem>.md`, `.json`, `.html`, `.pdf`, `.docx`, … (of `formats`) and `<stem>_images/`; the
    files in `formats`' order. Raises OSError when a file cannot be written (then none of them is left). Any thread."""
    files = write_document(output, stem.parent, stem.name, _copy_pictures, formats, password, alto_version)
    return [files["markdown" if f == "md" else f] for f in formats]


def export(work: DocumentWork, target: str | Path, password: str | None = None,
           formats: str | tuple[str, ...] = EXPORT_FORMATS, alto_version: int = 4) -> list[Path]:
    """The export written here and now (on the calling thread): see `write`."""
    stem, chosen = plan(work, target, formats)
    return write(work.to_output(), stem, chosen, password, alto_version)


class _Signals(QObject):
    ended = Signal(object, str)  # the files written (None on failure), why it failed


class _WriteTask(QRunnable):
    def __init__(self, job: Callable[[], list[Path]]) -> None:
        super().__init__()
        self.job = job
        self.signals = _Signals()  # made on the GUI thread: its signal reaches the window there

    def run(self) -> None:
        try:
            files, error = self.job(), ""
        except OSError as exc:
            files, error = None, str(exc)
        except Exception as exc:  # noqa: BLE001 - said in the banner, never lost in a pool thread
            files, error = None, f"{type(exc).__name__}: {exc}"
        self.signals.ended.emit(files, error)


@dataclass(frozen=True)
class ExportView:
    """What an export reads and where it says how it went."""

    current: Callable[[], DocumentWork | None]  # the document on screen
    flush_edits: Callable[[], None]  # the editor's pending typing goes into the session first
    passwords: dict[str, str]  # an encrypted source's password, by path (for the searchable PDF)
    status_bar: QStatusBar
    banner: Banner
    settings: Settings  # export_dir: the folder the last export went to; export_formats, alto_version
    export_action: QAction  # disabled while an export is written
    update_actions: Callable[[], None]  # at the end: the window's actions as they should be


class Exporter(QObject):
    """The window's exports, one at a time, written off the GUI thread."""

    finished = Signal(list)  # the files written
    failed = Signal(str)  # why nothing was written

    def __init__(self, view: ExportView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.running = False
        self.result: list[Path] | None = None
        self.error = ""
        self._task: _WriteTask | None = None
        self.pool = QThreadPool(self)  # its own: closing the window waits for an export, not for other work
        self.pool.setMaxThreadCount(1)

    def export(self, target: str | Path, wait: bool = True) -> list[Path]:
        """Export the window's current document to `target`. With `wait`, return its files once written (the
        event loop runs meanwhile: the window repaints, timers fire), raising OSError when it failed; else return
        [] at once (`finished` / `failed` follow)."""
        from PySide6.QtWidgets import QApplication

        v, work = self.view, self.view.current()
        if work is None or self.running:
            return []
        v.flush_edits()
        try:
            stem, formats = plan(work, target, v.settings.get("export_formats"))
        except ValueError as exc:  # Preferences → Files name a format that does not exist
            v.banner.show_message(f"Nothing was exported: {exc}")
            if wait:
                raise OSError(str(exc)) from None
            return []
        alto_version = int(v.settings.get("alto_version"))
        output, password = work.to_output(), v.passwords.get(work.path)  # the snapshot it writes
        self.running, self.result, self.error = True, None, ""
        QApplication.setOverrideCursor(Qt.CursorShape.BusyCursor)
        v.status_bar.showMessage(f"Exporting {stem.name}…")
        v.export_action.setEnabled(False)
        self._task = _WriteTask(lambda: write(output, stem, formats, password, alto_version))
        self._task.setAutoDelete(False)
        self._task.signals.ended.connect(self._ended, Qt.ConnectionType.QueuedConnection)
        self.pool.start(self._task)
        if not wait:
            return []
        loop = QEventLoop()
        self.finished.connect(loop.quit)
        self.failed.connect(loop.quit)
        if self.running:
            loop.exec()
        self.finished.disconnect(loop.quit)
        self.failed.disconnect(loop.quit)
        if self.result is None:
            raise OSError(self.error)
        return self.result

    def finish(self, timeout_ms: int = 60_000) -> None:
        """Wait for an export being written (the window closes: its files are finished, not left half-written)."""
        from PySide6.QtCore import QCoreApplication, QEvent

        if self.pool.waitForDone(timeout_ms):
            QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)  # its end, said now (cursor restored)

    def _ended(self, files: list[Path] | None, error: str) -> None:
        from PySide6.QtWidgets import QApplication

        v = self.view
        self.running, self._task = False, None
        QApplication.restoreOverrideCursor()
        v.update_actions()
        if files is None:
            self.error = error
            v.status_bar.clearMessage()
            v.banner.show_message(f"Nothing was exported: {error}")
            self.failed.emit(error)
            return
        self.result = files
        v.settings.set("export_dir", str(files[0].parent))
        v.status_bar.showMessage("Exported " + ", ".join(p.name for p in files), 6000)
        self.finished.emit(files)
