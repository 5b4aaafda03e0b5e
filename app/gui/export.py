"""Exports of the reviewed work: Markdown, JSON and HTML, each written atomically (a crash mid-write leaves the
old file, never half a new one). The texts are the person's: edited blocks are exported as edited.

JSON has the pipeline's schema (per block: region id, page, boxes, label, task, reading order, text, Markdown,
CER), so another tool (or this app) can link every block back to the page; the review adds `edited` and `status`.

Pictures: the session's picture blocks link to crops in the app's working folder; an export copies them into
`<stem>_images/` next to the exported files and links those instead (as `scriptorium convert` does).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from app import __version__
from app.core.atomic import atomic_write_text
from app.gui.preview import markdown_to_html
from app.gui.session import Block, DocumentWork, picture_link

FORMATS = ("md", "json", "html")


def copy_pictures(work: DocumentWork, stem: Path) -> dict[str, str]:
    """Copy the pictures of `work` to `<stem>_images/<region id>.png`; returns region id → path relative to the
    exported files."""
    rels: dict[str, str] = {}
    for b in work.text_blocks():
        src = b.region.extra.get("picture_path") if b.region.task == "picture" else None
        if not src or not Path(src).is_file():
            continue
        rel = f"{stem.name}_images/{b.id}{Path(src).suffix or '.png'}"
        target = stem.parent / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        rels[b.id] = rel
    return rels


def exported_markdown(block: Block, pictures: dict[str, str]) -> str:
    """A block's Markdown with its picture link pointing at the exported copy."""
    rel = pictures.get(block.id)
    if rel is None:
        return block.markdown
    return block.markdown.replace(f"]({picture_link(block.region.extra['picture_path'])})", f"]({rel})")


def to_json_dict(work: DocumentWork, pictures: dict[str, str] | None = None) -> dict:
    """The pipeline's JSON schema (`scriptorium convert` writes the same shape), with the review's additions per
    block: `edited`, `status` and the Markdown as the person left it."""
    pictures = pictures or {}
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
            if b.stats:  # the decoding stats and engine of the block, as `convert` writes them
                extra.setdefault("stats", dict(b.stats))
                extra.setdefault("engine", b.stats.get("engine", ""))
            d = block_dict(replace(b.region, text=b.raw_text, extra=extra), exported_markdown(b, pictures),
                           pictures.get(b.id))
            d.update(edited=b.edited, status=b.status)
            blocks.append(d)
        pages.append({"index": index, "number": index + 1, "width_pt": w, "height_pt": h, "blocks": blocks})
    return {
        "schema": JSON_SCHEMA,
        "source": work.path,
        "app_version": __version__,
        "page_count": work.page_count,
        "pages": pages,
        "markdown": markdown(work, pictures),
    }


def markdown(work: DocumentWork, pictures: dict[str, str] | None = None) -> str:
    parts = [exported_markdown(b, pictures or {}) for b in work.text_blocks() if b.markdown.strip()]
    return "\n\n".join(parts) + ("\n" if parts else "")


def export(work: DocumentWork, target: str | Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """Write `target` with each suffix in `formats` (target may carry any suffix; it is replaced)."""
    target = Path(target)
    stem = target.with_suffix("") if target.suffix.lower() in {".md", ".json", ".html", ".htm"} else target
    written = []
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown:
        raise ValueError(f"unknown export format {unknown[0]!r}; choose from {', '.join(FORMATS)}")
    pictures = copy_pictures(work, stem)
    for fmt in formats:
        path = stem.with_suffix(f".{fmt}")
        if fmt == "md":
            text = markdown(work, pictures)
        elif fmt == "json":
            text = json.dumps(to_json_dict(work, pictures), ensure_ascii=False, indent=1) + "\n"
        else:
            blocks = [(b.id, exported_markdown(b, pictures)) for b in work.text_blocks()]
            text = markdown_to_html(blocks, math="mathml", title=work.name)
        written.append(atomic_write_text(path, text))
    return written
