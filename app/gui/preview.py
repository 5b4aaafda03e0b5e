"""The rendered preview: Markdown → safe HTML (app.core.pipeline.html_render: HTML tables kept, anything off its
allow-list shown escaped as text, never hidden) with formulas shown as math, in a QTextBrowser. QTextBrowser runs
no scripts; `loadResource` below refuses anything that is not local, so a document can never make the app reach
the network. Images load only from the app's own user data folder (where the pipeline
keeps the picture crops of the open documents; relative links resolve there), scaled to the preview's width. Each
block gets an anchor named by its region id.

The same `markdown_to_html(blocks, math="mathml")` writes the HTML export and `convert --formats html`.
"""
from __future__ import annotations

import html as _html
import re
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QImage, QImageReader, QTextDocument
from PySide6.QtWidgets import QTextBrowser

from app.core.pipeline.html_render import CSS, block_html, markdown_to_html  # noqa: F401 - block_html: tests

MIN_INTERVAL_MS = 250  # the quickest redraws follow one another
COST_FACTOR = 10.0  # and never sooner than this many times the last redraw's cost
_FILE_SCHEMES = {"", "file"}
_EMBEDDED_SCHEMES = {"data", "qrc"}
_IMAGE_RESOURCE = QTextDocument.ResourceType.ImageResource.value
_IMG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_SRC = re.compile(r'\bsrc="([^"]*)"', re.IGNORECASE)
_SIZED = re.compile(r"\b(?:width|height)=", re.IGNORECASE)
_SIZES_KEPT = 4096  # picture sizes remembered (path and modification time -> pixels)


def own_file(url: QUrl) -> Path | None:
    """The local file `url` names when it lies inside the app's user data folder (relative links resolve there);
    None for anything else."""
    from app.core.base.paths import user_data_dir

    base = user_data_dir().resolve()
    if url.scheme().lower() == "file":
        path = Path(url.toLocalFile())
    elif not url.scheme() and url.path() and not url.path().startswith("/"):
        path = base / url.path()
    else:
        return None
    try:
        path = path.resolve()
        path.relative_to(base)
    except (OSError, ValueError):
        return None
    return path if path.is_file() else None


class Preview(QTextBrowser):
    """Redraws at most every 250 ms however fast blocks stream in, and never sooner than COST_FACTOR times what the
    last redraw took: a redraw lays out the whole document again, so on a long one (300 pages) a redraw every
    250 ms would take most of the time the reader has."""

    remote_blocked = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("preview")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.document().setDefaultStyleSheet(CSS)
        self._blocks: list[tuple[str, str]] = []
        self._timer = QTimer(self, singleShot=True, interval=MIN_INTERVAL_MS)
        self._timer.timeout.connect(self.render_now)
        self.blocked: list[str] = []
        self.renders = 0
        self.render_seconds = 0.0  # what the last redraw took
        self.follow_id = ""  # a block to keep in view at each redraw (the one being decoded); "" keeps the scroll
        self._sizes: dict[tuple[str, int], tuple[int, int] | None] = {}
        self._laid_width = 0  # the picture width the last redraw sized pictures for

    def set_blocks(self, blocks: list[tuple[str, str]]) -> None:
        self._blocks = list(blocks)
        if not self._timer.isActive():
            self._timer.start(max(MIN_INTERVAL_MS, int(COST_FACTOR * 1000 * self.render_seconds)))

    def render_now(self) -> None:
        self._timer.stop()
        started = time.perf_counter()
        bar = self.verticalScrollBar()
        value = bar.value()
        self._laid_width = self.picture_width()
        self.setHtml(self.sized_pictures(markdown_to_html(self._blocks)))
        bar.setValue(value)
        if self.follow_id:
            shown = [rid for rid, md in self._blocks if md.strip()]
            if shown and shown[-1] == self.follow_id:  # the last block (the usual case): show where it grows
                bar.setValue(bar.maximum())
            else:
                self.scrollToAnchor(self.follow_id)
        self.renders += 1
        self.render_seconds = time.perf_counter() - started

    def picture_width(self) -> int:
        """The widest a picture is shown: the text's width, less the scroll bar a long document will show."""
        bar = self.verticalScrollBar()
        return max(120, self.viewport().width() - 24 - (0 if bar.isVisible() else bar.sizeHint().width()))

    def sized_pictures(self, html: str) -> str:
        """`html` with each of our own pictures' `<img>` given the width and height it is shown at (at most the
        preview's width), so laying the document out needs no picture decoded. Tags that already say a size, and
        pictures that are not ours or not readable, are left as they are."""
        width = self._laid_width or self.picture_width()

        def sized(match: re.Match) -> str:
            tag = match.group(0)
            src = _SRC.search(tag)
            if src is None or _SIZED.search(tag):
                return tag
            size = self._picture_size(_html.unescape(src.group(1)))
            if size is None:
                return tag
            w, h = size
            if w > width:
                w, h = width, max(1, round(h * width / w))
            end = "/>" if tag.endswith("/>") else ">"
            return f'{tag[: -len(end)].rstrip()} width="{w}" height="{h}"{end}'

        return _IMG.sub(sized, html)

    def _picture_size(self, src: str) -> tuple[int, int] | None:
        path = own_file(QUrl(src))
        if path is None:
            return None
        try:
            key = (str(path), path.stat().st_mtime_ns)
        except OSError:
            return None
        if key not in self._sizes:
            if len(self._sizes) >= _SIZES_KEPT:
                self._sizes.clear()
            size = QImageReader(str(path)).size()
            self._sizes[key] = (size.width(), size.height()) if size.isValid() and not size.isEmpty() else None
        return self._sizes[key]

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self._blocks and self._laid_width and self.picture_width() != self._laid_width \
                and not self._timer.isActive():
            self._timer.start(max(MIN_INTERVAL_MS, int(COST_FACTOR * 1000 * self.render_seconds)))

    def show_block(self, rid: str) -> None:
        if self._timer.isActive():
            self.render_now()
        self.scrollToAnchor(rid)

    def loadResource(self, kind: int, url: QUrl):  # noqa: N802 - Qt API
        scheme = url.scheme().lower()
        if scheme in _EMBEDDED_SCHEMES:
            return super().loadResource(kind, url)
        if scheme in _FILE_SCHEMES:
            path = own_file(url) if getattr(kind, "value", kind) == _IMAGE_RESOURCE else None
            image = QImage(str(path)) if path is not None else QImage()
            if not image.isNull():
                width = self._laid_width or self.picture_width()
                if image.width() > width:
                    image = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
                return image
        if not url.toString():
            return None
        if url.toString() not in self.blocked:
            self.blocked.append(url.toString())
        if scheme not in _FILE_SCHEMES:
            self.remote_blocked.emit(url.toString())
        return None
