"""Exports of the reviewed work: Markdown, JSON and HTML, each written atomically (a crash mid-write leaves the
old file, never half a new one). The texts are the person's: edited blocks are exported as edited.

JSON keeps, per block, the region id, page, boxes, label, task and reading order, so another tool (or this app)
can link every block back to the page, exactly as the pipeline's own JSON does.
"""
from __future__ import annotations

import json
from pathlib import Path

from app import __version__
from app.gui.journal import atomic_write_text
from app.gui.preview import markdown_to_html
from app.gui.session import DocumentWork

FORMATS = ("md", "json", "html")


def to_json_dict(work: DocumentWork) -> dict:
    blocks = []
    for b in work.ordered():
        r = b.region
        blocks.append(
            {
                "id": r.id,
                "page": r.page,
                "order": r.order,
                "label": r.label,
                "task": r.task,
                "box": list(r.box),
                "box_pt": list(r.box_pt),
                "dpi": r.dpi,
                "markdown": b.markdown,
                "text": b.raw_text,
                "edited": b.edited,
                "status": b.status,
                "cer": b.cer,
            }
        )
    return {
        "format": "scriptorium-document",
        "version": 1,
        "app_version": __version__,
        "source": work.path,
        "page_count": work.page_count,
        "page_sizes_pt": [list(s) for s in work.page_sizes],
        "blocks": blocks,
        "markdown": work.markdown(),
    }


def export(work: DocumentWork, target: str | Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write `target` with each suffix in `formats` (target may carry any suffix; it is replaced)."""
    target = Path(target)
    stem = target.with_suffix("") if target.suffix.lower() in {".md", ".json", ".html", ".htm"} else target
    written = []
    for fmt in formats:
        path = stem.with_suffix(f".{fmt}")
        if fmt == "md":
            text = work.markdown()
        elif fmt == "json":
            text = json.dumps(to_json_dict(work), ensure_ascii=False, indent=1) + "\n"
        elif fmt == "html":
            blocks = [(b.id, b.markdown) for b in work.text_blocks()]
            text = markdown_to_html(blocks, math="mathml", title=work.name)
        else:
            raise ValueError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
        written.append(atomic_write_text(path, text))
    return written
