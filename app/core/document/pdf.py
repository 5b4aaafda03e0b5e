"""PDFs (and what else MuPDF opens as a paged document: XPS, EPUB, CBZ): opening with passwords and repair
warnings, rendering, the text layer."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

from app.core.document.base import (
    Document,
    DocumentError,
    PageInfo,
    PasswordRequired,
    TextWord,
    WrongPassword,
)


class PdfDocument(Document):
    """Anything MuPDF opens as a paged document (PDF, XPS, EPUB, CBZ)."""

    kind = "pdf"

    def __init__(self, path: Path, doc, **kw) -> None:
        super().__init__(path, **kw)
        self._doc = doc
        self._count = doc.page_count
        self._info: dict[int, PageInfo] = {}

    @property
    def page_count(self) -> int:
        return self._count

    @property
    def title(self) -> str:
        try:
            return (self._doc.metadata or {}).get("title") or ""
        except Exception:  # noqa: BLE001 - metadata of a damaged file
            return ""

    @property
    def mupdf(self):
        """The underlying pymupdf.Document (hold `doc.lock` while using it from another thread)."""
        return self._doc

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def page_info(self, index: int) -> PageInfo:
        self._check_index(index)
        info = self._info.get(index)
        if info is None:
            with self._lock:
                try:
                    page = self._doc.load_page(index)
                except Exception as exc:  # noqa: BLE001
                    raise DocumentError(f"{self.name}: page {index + 1} cannot be read ({exc})") from exc
                r = page.rect  # displayed orientation (rotation applied)
                info = PageInfo(index, float(r.width), float(r.height), int(page.rotation))
            self._info[index] = info
        return info

    def _render(self, index: int, dpi: float) -> "Image.Image":
        from PIL import Image

        page = self._doc.load_page(index)
        pix = page.get_pixmap(dpi=None, matrix=_scale_matrix(dpi), alpha=False, colorspace="rgb")
        return Image.frombytes("RGB", (pix.width, pix.height), pix.samples)

    def text_layer(self, index: int) -> list[TextWord]:
        """Words of the embedded text layer with boxes in points (displayed orientation); [] when none, or when the
        page is read turned (its words' boxes are in the page as it is)."""
        self._check_index(index)
        if self.turned(index):
            return []
        import pymupdf

        with self._lock:
            try:
                page = self._doc.load_page(index)
                words = page.get_text("words", sort=True)
                rot = page.rotation_matrix if page.rotation else None
            except Exception as exc:  # noqa: BLE001
                self.warnings.append(f"page {index + 1}: the text layer cannot be read ({exc})")
                return []
        out = []
        for x0, y0, x1, y1, text, block, line, word in words:
            if not text.strip():
                continue
            if rot is not None:
                r = pymupdf.Rect(x0, y0, x1, y1) * rot
                x0, y0, x1, y1 = r.x0, r.y0, r.x1, r.y1
            out.append(TextWord(text, (float(x0), float(y0), float(x1), float(y1)), int(block), int(line), int(word)))
        return out

    def has_text_layer(self, index: int) -> bool:
        """Does `text_layer(index)` hold a word? Asked without sorting or keeping the words (a fifth of the time on
        a page of tables: 1.9 against 18.7 ms)."""
        self._check_index(index)
        if self.turned(index):
            return False
        with self._lock:
            try:
                words = self._doc.load_page(index).get_text("words")
            except Exception:  # noqa: BLE001 - read again (and the failure noted) by text_layer
                return bool(self.text_layer(index))
        return any(w[4].strip() for w in words)

    def close(self) -> None:
        with self._lock:
            super().close()
            try:
                self._doc.close()
            except Exception:  # noqa: BLE001
                pass


def _scale_matrix(dpi: float):
    import pymupdf

    s = dpi / 72.0
    return pymupdf.Matrix(s, s)


def _open_pdf(path: Path, password: str | None, kind: str, **kw) -> PdfDocument:
    import pymupdf

    name = path.name
    pymupdf.TOOLS.mupdf_warnings()  # reset, so that the warnings read below are this file's
    try:
        doc = pymupdf.open(str(path))
    except Exception as exc:  # pymupdf.FileDataError, RuntimeError, ...
        if kind == "pdf":
            cause = "it is damaged or truncated beyond repair"
        else:
            cause = "it is not a PDF (its first bytes are no PDF header) or it is damaged"
        raise DocumentError(f"{name}: cannot be opened: {cause} ({exc})") from exc
    try:
        if doc.needs_pass:
            if password is None or password == "":
                raise PasswordRequired(f"{name}: the PDF is encrypted; give its password (convert: --password)")
            if not doc.authenticate(password):
                raise WrongPassword(f"{name}: the password given does not open this encrypted PDF")
        count = doc.page_count
        if count == 0:
            cause = " (it is damaged: no page could be recovered)" if doc.is_repaired else ""
            raise DocumentError(f"{name}: the document has no pages{cause}")
        try:
            doc.load_page(0)
        except Exception as exc:  # noqa: BLE001
            raise DocumentError(f"{name}: its first page cannot be read; the file is damaged ({exc})") from exc
    except DocumentError:
        doc.close()
        raise
    out = PdfDocument(path, doc, **kw)
    if getattr(doc, "is_repaired", False):
        log = pymupdf.TOOLS.mupdf_warnings().splitlines()
        first = next((line for line in log if line.strip()), "")
        out.warnings.append(
            f"{name}: the file is damaged (truncated or malformed: {first or 'broken cross-reference table'}) and "
            "was repaired; some content may be missing"
        )
    return out
