"""Exports of the reviewed work: Markdown, JSON and HTML, each written atomically (a crash mid-write leaves the
old file, never half a new one). The texts are the person's: edited blocks are exported as edited.

JSON has the pipeline's schema (per block: region id, page, boxes, label, task, reading order, text, Markdown,
CER), so another tool (or this app) can link every block back to the page; the review adds `edited` and `status`.
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
    """The pipeline's JSON schema (`scriptorium convert` writes the same shape), with the review's additions per
    block: `edited`, `status` and the Markdown as the person left it."""
    from dataclasses import replace

    from app.core.pipeline import JSON_SCHEMA, block_dict

    pages = []
    for index in range(max(work.page_count, len(work.page_sizes))):
        w, h = work.page_sizes[index] if index < len(work.page_sizes) else (0.0, 0.0)
        blocks = []
        for b in work.ordered(index):
            if b.region.extra.get("provisional"):
                continue
            extra = dict(b.region.extra)
            if b.cer is not None:
                extra["cer"] = b.cer
            d = block_dict(replace(b.region, text=b.raw_text, extra=extra), b.markdown)
            d.update(edited=b.edited, status=b.status)
            blocks.append(d)
        pages.append({"index": index, "number": index + 1, "width_pt": w, "height_pt": h, "blocks": blocks})
    return {
        "schema": JSON_SCHEMA,
        "source": work.path,
        "app_version": __version__,
        "page_count": work.page_count,
        "pages": pages,
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
