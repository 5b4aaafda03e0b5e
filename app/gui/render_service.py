"""Page images off the GUI thread: one render thread opens documents (PyMuPDF is not shared across threads) and
hands back QImages, which are safe to build outside the GUI thread (QPixmaps are not).

What must never live here: OCR, layout or anything that loads a model (that is the decoding worker's lane).
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QImage


def pil_to_qimage(image) -> QImage:
    image = image.convert("RGB")
    data = image.tobytes("raw", "RGB")
    qimage = QImage(data, image.width, image.height, image.width * 3, QImage.Format.Format_RGB888)
    return qimage.copy()  # own the pixels; `data` dies with this frame


def page_size_pt(document, index: int) -> tuple[float, float]:
    size = getattr(document, "page_size_pt")
    size = size(index) if callable(size) else size[index]
    return float(size[0]), float(size[1])


class _Task(QRunnable):
    def __init__(self, fn) -> None:
        super().__init__()
        self._fn = fn

    def run(self) -> None:  # noqa: D401 - Qt API
        self._fn()


class PageRenderer(QObject):
    """`request_info(path)` → `info_ready(path, page_count, sizes)` or `failed(path, message, needs_password)`;
    `request(path, page, dpi, purpose)` → `page_ready(path, page, dpi, image, purpose)`. Requests are served in order by one thread;
    a page already superseded by a newer request for the same path and purpose is skipped."""

    info_ready = Signal(str, int, list)
    page_ready = Signal(str, int, float, QImage, str)  # path, page, dpi, image, purpose (page | thumbnail)
    failed = Signal(str, str, bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._documents: dict[str, object] = {}  # touched by the render thread only
        self._passwords: dict[str, str] = {}
        self._wanted: dict[tuple[str, str], tuple[int, float]] = {}
        self._closed = False  # set by `close`: no new work is taken

    def _start(self, work) -> None:
        if not self._closed:
            self._pool.start(_Task(work))

    def set_password(self, path: str, password: str) -> None:
        self._passwords[path] = password

    def _open(self, path: str):
        doc = self._documents.get(path)
        if doc is None:
            from app.core.document import VIEW_RENDERS, open_document

            # few renderings kept: the page view holds the page it shows, and a long run shows every page once
            doc = open_document(path, self._passwords.get(path), cache_pages=VIEW_RENDERS)
            self._documents[path] = doc
        return doc

    def request_info(self, path: str) -> None:
        def work() -> None:
            try:
                doc = self._open(path)
                sizes = [page_size_pt(doc, i) for i in range(doc.page_count)]
            except Exception as exc:  # noqa: BLE001 - reported to the person, never fatal
                self.failed.emit(path, _message(path, exc), _needs_password(exc))
                return
            self.info_ready.emit(path, doc.page_count, sizes)

        self._start(work)

    def request(self, path: str, page: int, dpi: float, purpose: str = "page") -> None:
        key = (path, purpose)
        if purpose == "page":
            self._wanted[key] = (page, dpi)

        def work() -> None:
            if purpose == "page" and self._wanted.get(key) != (page, dpi):
                return  # the person has moved on
            try:
                image = self._open(path).render(page, dpi)
            except Exception as exc:  # noqa: BLE001
                self.failed.emit(path, _message(path, exc), False)
                return
            self.page_ready.emit(path, page, float(dpi), pil_to_qimage(image), purpose)

        self._start(work)

    def set_orientation(self, path: str, page: int, turn: int, skew: float) -> None:
        """Render `page` of `path` turned and straightened as it was read (app.core.pipeline.orient)."""
        def work() -> None:
            try:
                self._open(path).set_orientation(page, int(turn), float(skew))
            except Exception:  # noqa: BLE001 - a document not at hand (a replay) is shown without its image
                pass

        self._start(work)

    def forget(self, path: str) -> None:
        self._passwords.pop(path, None)

        def work() -> None:
            doc = self._documents.pop(path, None)
            close = getattr(doc, "close", None)
            if close:
                close()

        self._start(work)

    def wait(self, ms: int = 5000) -> bool:
        return self._pool.waitForDone(ms)

    def close(self) -> None:
        """The window closes: no new work is taken, and the work taken is finished (however loaded the
        machine) before this returns. A page asked for after close (the window's last queued events ask for
        thumbnails) would render while the renderer is being deleted, and signal from a dead object."""
        self._closed = True
        self._pool.waitForDone(-1)


def _needs_password(exc: Exception) -> bool:
    return "password" in type(exc).__name__.lower() or "password" in str(exc).lower()


def _message(path: str, exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if Path(path).name in text else f"{Path(path).name}: {text}"
