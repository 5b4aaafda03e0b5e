"""Exports of the reviewed work: `NAME.md` and `NAME.json` through the pipeline's one writer
(app.core.pipeline.output.write_document, the same bytes `scriptorium convert` writes for the same reading), plus
`NAME.html` (formulas as MathML), each written atomically. The texts are the person's: an edited block is exported
as edited (`"edited": true` in the JSON).

Pictures: the session's picture blocks link to crops in the app's working folder; an export copies them into
`<stem>_images/` next to the exported files and links those instead (as `convert` does).
"""
from __future__ import annotations

from pathlib import Path

from app.core.atomic import atomic_write_text
from app.core.pipeline.assembly import assemble_blocks
from app.core.pipeline.output import DocumentOutput, write_document
from app.core.pipeline.pictures import copy_pictures
from app.core.review.document import DocumentWork
from app.gui.preview import markdown_to_html

def _copy_pictures(output: DocumentOutput, out_dir: Path, image_dir: str) -> dict[str, str]:
    return copy_pictures(output.regions(), out_dir, image_dir)


def export(work: DocumentWork, target: str | Path) -> list[Path]:
    """Write `<stem>.md`, `<stem>.json`, `<stem>.html` and `<stem>_images/` (target may carry any suffix; it is
    replaced). Raises OSError when a file cannot be written."""
    target = Path(target)
    stem = target.with_suffix("") if target.suffix.lower() in {".md", ".json", ".html", ".htm"} else target
    output = work.to_output()
    files = write_document(output, stem.parent, stem.name, _copy_pictures)
    blocks = [(rid, md) for page in output.pages
              for rid, md in assemble_blocks(page.regions, output.pictures, output.edits).items()]
    html = markdown_to_html(blocks, math="mathml", title=work.name)
    return [files["markdown"], files["json"], atomic_write_text(stem.with_suffix(".html"), html)]
