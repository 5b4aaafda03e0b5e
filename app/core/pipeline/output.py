"""What a run produces, as plain data, and the ONE writer of it: `DocumentOutput` (pages of regions, stats,
warnings, picture files, the person's edits) → Markdown (app.core.pipeline.assembly), JSON in the
`scriptorium.document/1` schema and sanitised HTML (app.core.pipeline.html_render), written as one unit.
`scriptorium convert` writes a pipeline's output with `write_document`; the window's export builds the same
`DocumentOutput` from its review session and calls the same function, so the two cannot drift
(tests/test_parity.py holds them to the same bytes).

What must never live here: decoding, layout, Qt.
"""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from app.core.base.atomic import discard, interrupts_deferred, remove_stale_temporaries, temporary_file
from app.core.pipeline.assembly import assemble_blocks, assemble_document
from app.core.pipeline.options import DEFAULT_FORMATS, FORMATS
from app.core.pipeline.quality import region_confidence, region_outcome, region_status, review_reasons, review_summary
from app.core.pipeline.text_source import text_source
from app.core.document.regions import Region

JSON_SCHEMA = "scriptorium.document/1"


def rounded(v: float | None, nd: int = 4) -> float | None:
    return None if v is None else round(float(v), nd)


@dataclass
class PageOutput:
    index: int  # 0-based
    width_pt: float
    height_pt: float
    dpi: float
    width_px: int
    height_px: int
    regions: list[Region] = field(default_factory=list)
    layout: str = ""
    has_text_layer: bool = False
    cer: float | None = None
    ms: float = 0.0
    decoded: bool = False
    rotation: int = 0  # degrees the page was turned clockwise to be read (app.core.pipeline.orient)
    skew: float = 0.0  # degrees it was then straightened by (counter-clockwise)
    stages: dict[str, float] = field(default_factory=dict)  # ms per stage (app.core.pipeline.page_stages)

    def frame(self) -> dict[str, Any]:
        """The page's geometry and source, as LayoutDone carries it (without its regions)."""
        return {"width_pt": self.width_pt, "height_pt": self.height_pt, "dpi": self.dpi, "width_px": self.width_px,
                "height_px": self.height_px, "has_text_layer": self.has_text_layer, "rotation": self.rotation,
                "skew": self.skew}

    def to_dict(self, pictures: dict[str, str] | None = None, edits: dict[str, str] | None = None,
                reviewed: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
        blocks_md = assemble_blocks(self.regions, pictures, edits)
        return {
            "index": self.index, "number": self.index + 1, "width_pt": self.width_pt, "height_pt": self.height_pt,
            "dpi": self.dpi, "width_px": self.width_px, "height_px": self.height_px, "layout": self.layout,
            "has_text_layer": self.has_text_layer, "rotation": self.rotation, "skew": round(self.skew, 2),
            "cer": rounded(self.cer), "ms": round(self.ms, 1), "stages": dict(self.stages),
            "blocks": [block_dict(r, blocks_md.get(r.id, ""), (pictures or {}).get(r.id), r.id in (edits or {}),
                                  r.id in reviewed) for r in self.regions],
        }


def block_dict(r: Region, markdown: str = "", image: str | None = None, edited: bool = False,
               reviewed: bool = False) -> dict[str, Any]:
    d = {
        "id": r.id, "page": r.page, "order": r.order, "label": r.label,
        "native_label": r.extra.get("native_label", r.label), "task": r.task,
        "box": [round(v, 2) for v in r.box], "box_pt": [round(v, 2) for v in r.box_pt], "dpi": r.dpi,
        "score": r.score, "text": r.text, "markdown": markdown, "engine": r.extra.get("engine", ""),
        # which recogniser read its lines ("rapidocr", "builtin", "tesseract:rus", joined by "+"; docs/scripts.md)
        "reader": (r.extra.get("stats") or {}).get("reader"),
        "stats": r.extra.get("stats", {}), "cer": rounded(r.extra.get("cer")), "source": r.source, "flags": list(r.flags),
        "status": region_status(r), "edited": edited,
        # how far to trust it: the honest outcome, the model's confidence (null: the engine reports none), why a
        # person should look, and whether one did (the window's Enter)
        "outcome": region_outcome(r), "confidence": region_confidence(r), "needs_review": review_reasons(r),
        "reviewed": reviewed,
        "text_source": text_source(r),  # text-layer | ocr (None: not read); "source" is the layout that found it
    }
    stats = r.extra.get("stats") or {}
    # the acceptance map's columns (app.core.record.acceptance): null where no model decoded the block by forwards
    d["tpf"] = rounded(stats["tpf"], 3) if stats.get("forwards") and "tpf" in stats else None
    d["mean_accepted"] = rounded(stats["mean_accepted"], 3) if stats.get("rounds") and "mean_accepted" in stats else None
    if image:
        d["image"] = image
    if "reference_chars" in r.extra:
        d["reference_chars"] = r.extra["reference_chars"]
    return d


@dataclass
class DocumentOutput:
    path: str
    engine: str
    layout: str
    page_count: int
    pages: list[PageOutput] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    warnings: list[str] = field(default_factory=list)
    pictures: dict[str, str] = field(default_factory=dict)  # region id → image path relative to the Markdown
    edits: dict[str, str] = field(default_factory=dict)  # region id → the Markdown a person wrote for the block
    reviewed: set[str] = field(default_factory=set)  # region ids a person marked as reviewed

    def regions(self) -> Iterator[Region]:
        for p in self.pages:
            yield from p.regions

    def region(self, region_id: str) -> Region:
        for r in self.regions():
            if r.id == region_id:
                return r
        raise KeyError(region_id)

    def page(self, index: int) -> PageOutput:
        for p in self.pages:
            if p.index == index:
                return p
        raise KeyError(index)

    @property
    def cer(self) -> float | None:
        tot = dist = 0.0
        for r in self.regions():
            n = r.extra.get("reference_chars")
            if n and r.extra.get("cer") is not None:
                tot += n
                dist += r.extra["cer"] * n
        return dist / tot if tot else None

    def to_markdown(self, anchors: bool = True) -> str:
        return assemble_document(((p.index, p.regions) for p in self.pages), self.pictures, anchors=anchors,
                                 edits=self.edits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": JSON_SCHEMA, "source": self.path, "engine": self.engine, "layout": self.layout,
            "page_count": self.page_count, "cancelled": self.cancelled, "cer": rounded(self.cer),
            "stats": self.stats, "warnings": self.warnings,
            "review": review_summary(list(self.regions()), self.reviewed, set(self.edits)),
            "pages": [p.to_dict(self.pictures, self.edits, self.reviewed) for p in self.pages],
        }

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)


# saves the picture crops of an output under out_dir/image_dir and returns region id → path relative to out_dir
SavePictures = Callable[[DocumentOutput, Path, str], dict[str, str]]

SUFFIXES = {"md": ".md", "json": ".json", "html": ".html", "pdf": ".pdf", "docx": ".docx", "xlsx": ".xlsx",
            "alto": ".alto.xml", "hocr": ".hocr", "docling": ".docling.json"}


def output_files(out_dir: Path, stem: str, formats: Sequence[str] = DEFAULT_FORMATS) -> dict[str, Path]:
    return {f: out_dir / f"{stem}{SUFFIXES[f]}" for f in formats}


def check_output(out_dir: Path, stem: str, formats: Sequence[str] = DEFAULT_FORMATS) -> None:
    """Before any work: can `out_dir` take this output set? Creates the folder, writes and removes a temporary
    file, refuses targets that are folders, and removes stale temporaries of ours (a killed run's). Raises OSError
    with a message for a person."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with temporary_file(out_dir / f"{stem}.check", "wb") as (_f, tmp):
            pass
        discard(tmp)
    except OSError as exc:
        raise OSError(f"cannot write into {out_dir}: {exc.strerror or exc}") from None
    for path in output_files(out_dir, stem, formats).values():
        if path.is_dir():
            raise OSError(f"cannot write {path}: a folder of that name is in the way")
    remove_stale_temporaries(out_dir, [p.name for p in output_files(out_dir, stem, FORMATS).values()])
    images = out_dir / f"{stem}_images"
    if images.is_dir():
        remove_stale_temporaries(images, _temporary_targets(images))


def _temporary_targets(folder: Path) -> list[str]:
    """The target names our temporaries in `folder` stand for (".p1-r03.png.4242-x.tmp" → "p1-r03.png")."""
    names = []
    for p in folder.iterdir():
        if p.name.startswith(".") and p.name.endswith(".tmp"):
            names.append(p.name[1:].rsplit(".", 2)[0])
    return names


def render_html(output: DocumentOutput) -> str:
    """The output as one HTML page (formulas as MathML), sanitised whatever the text holds."""
    from app.core.pipeline.html_render import markdown_to_html

    blocks = [(rid, md) for page in output.pages
              for rid, md in assemble_blocks(page.regions, output.pictures, output.edits).items()]
    return markdown_to_html(blocks, math="mathml", title=Path(output.path).name)


def render_searchable_pdf(output: DocumentOutput, password: str | None = None) -> bytes:
    """The source's pages with the blocks' text as an invisible layer (app.core.pipeline.searchable_pdf)."""
    from app.core.pipeline.searchable_pdf import render_pdf

    blocks = {rid: md for page in output.pages
              for rid, md in assemble_blocks(page.regions, output.pictures, output.edits).items()}
    return render_pdf(output.path, [(p.index, p.regions) for p in output.pages], blocks, password,
                      {p.index: (p.rotation, p.skew) for p in output.pages if p.rotation or p.skew})


def write_document(output: DocumentOutput, out_dir: Path, stem: str, save_pictures: SavePictures,
                   formats: Sequence[str] = DEFAULT_FORMATS, password: str | None = None,
                   alto_version: int = 4) -> dict[str, Path]:
    """Write the output set — `<stem>.md`, `.json`, `.html`, `.pdf`, `.docx`, `.xlsx`, `.alto.xml`, `.hocr`,
    `.docling.json` (those of `formats`; the PDF is the source's pages made searchable, `password` opens an encrypted
    source; the others: app.core.formats, ALTO as `alto_version`) and `<stem>_images/` — into
    `out_dir` as a unit: every file goes to a temporary first, and only when all are complete are they renamed into
    place; when one cannot be written, none of the set is left (nor the picture crops this call added). The one
    writer of `convert` and of the window's export. Raises OSError (its message names the file)."""
    from app.core.base.stages import stage

    with stage("writing"):
        return _write_document(output, out_dir, stem, save_pictures, formats, password, alto_version)


def _write_document(output, out_dir: Path, stem: str, save_pictures, formats, password, alto_version):
    check_output(out_dir, stem, formats)
    image_dir = out_dir / f"{stem}_images"
    before = set(image_dir.iterdir()) if image_dir.is_dir() else set()
    texts = {"md": output.to_markdown, "json": lambda: output.to_json() + "\n", "html": lambda: render_html(output),
             "pdf": lambda: render_searchable_pdf(output, password)}
    from app.core.pipeline.export_view import Renderers

    texts.update(Renderers(output, out_dir, password, alto_version).table())
    files = output_files(out_dir, stem, formats)
    done: list[tuple[Path, Path]] = []
    try:
        output.pictures = save_pictures(output, out_dir, f"{stem}_images")
        for fmt, path in files.items():
            try:
                content = texts[fmt]()
                text_kw = {} if isinstance(content, bytes) else {"encoding": "utf-8", "newline": "\n"}
                with temporary_file(path, "wb" if isinstance(content, bytes) else "w", **text_kw) as (f, tmp):
                    f.write(content)
            except OSError as exc:
                raise OSError(f"cannot write {path}: {exc.strerror or exc}") from None
            done.append((tmp, path))
        with interrupts_deferred():  # the set is renamed whole, or not at all
            for tmp, path in done:
                os.replace(tmp, path)
    except BaseException:
        for tmp, _ in done:
            discard(tmp)
        if image_dir.is_dir():
            for p in set(image_dir.iterdir()) - before:
                discard(p)
            if not before:
                shutil.rmtree(image_dir, ignore_errors=True)
        raise
    return {**{("markdown" if f == "md" else f): p for f, p in files.items()}, "images": image_dir}
