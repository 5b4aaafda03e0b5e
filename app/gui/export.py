"""Exports of the reviewed work: `NAME.md`, `NAME.json`, `NAME.html` (formulas as MathML, sanitised) and the
searchable `NAME.pdf` through the pipeline's one writer (app.core.pipeline.output.write_document, the same bytes
`scriptorium convert --formats md,json,html,pdf` writes for the same reading), written as one unit. The texts are
the person's: an edited block is exported as edited (`"edited": true` in the JSON).

Pictures: the session's picture blocks link to crops in the app's working folder; an export copies them into
`<stem>_images/` next to the exported files and links those instead (as `convert` does).
"""
from __future__ import annotations

from pathlib import Path

from app.core.atomic import atomic_write_text  # noqa: F401 - tests check the atomic writer's permissions here
from app.core.pipeline.options import FORMATS
from app.core.pipeline.output import SUFFIXES, DocumentOutput, write_document
from app.core.pipeline.pictures import copy_pictures
from app.core.review.document import DocumentWork


def _copy_pictures(output: DocumentOutput, out_dir: Path, image_dir: str) -> dict[str, str]:
    return copy_pictures(output.regions(), out_dir, image_dir)


def export(work: DocumentWork, target: str | Path, password: str | None = None) -> list[Path]:
    """Write `<stem>.md`, `<stem>.json`, `<stem>.html`, `<stem>.pdf` and `<stem>_images/` (target may carry any
    suffix; it is replaced; `password` opens an encrypted source for the PDF; no PDF when the source is not at
    hand). Raises OSError when a file cannot be written (then none of them is left)."""
    target = Path(target)
    stem = target.with_suffix("") if target.suffix.lower() in {*SUFFIXES.values(), ".htm"} else target
    # a trace replayed without its document (another machine's) has no pages to make searchable
    formats = FORMATS if Path(work.path).is_file() else tuple(f for f in FORMATS if f != "pdf")
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # the PDF renders pages: a long document takes a while
    try:
        files = write_document(work.to_output(), stem.parent, stem.name, _copy_pictures, formats, password)
    finally:
        QApplication.restoreOverrideCursor()
    return [files["markdown" if f == "md" else f] for f in formats]
