"""What a pipeline run produces, as plain data: `DocumentOutput` (pages of regions, stats, warnings, picture
files) and its two faces, Markdown (app.core.assembly) and JSON in the `scriptorium.document/1` schema, which the
GUI's export writes too (`block_dict`).

What must never live here: decoding, layout, file writing (app.core.pipeline does those).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from app.core.assembly import assemble_blocks, assemble_document
from app.core.regions import Region

JSON_SCHEMA = "scriptorium.document/1"



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

    def to_dict(self, pictures: dict[str, str] | None = None) -> dict[str, Any]:
        blocks_md = assemble_blocks(self.regions, pictures)
        return {
            "index": self.index, "number": self.index + 1, "width_pt": self.width_pt, "height_pt": self.height_pt,
            "dpi": self.dpi, "width_px": self.width_px, "height_px": self.height_px, "layout": self.layout,
            "has_text_layer": self.has_text_layer, "cer": rounded(self.cer), "ms": round(self.ms, 1),
            "blocks": [block_dict(r, blocks_md.get(r.id, ""), (pictures or {}).get(r.id)) for r in self.regions],
        }


def rounded(v: float | None, nd: int = 4) -> float | None:
    return None if v is None else round(float(v), nd)


def block_dict(r: Region, markdown: str = "", image: str | None = None) -> dict[str, Any]:
    d = {
        "id": r.id, "page": r.page, "order": r.order, "label": r.label,
        "native_label": r.extra.get("native_label", r.label), "task": r.task,
        "box": [round(v, 2) for v in r.box], "box_pt": [round(v, 2) for v in r.box_pt], "dpi": r.dpi,
        "score": r.score, "text": r.text, "markdown": markdown, "engine": r.extra.get("engine", ""),
        "stats": r.extra.get("stats", {}), "cer": rounded(r.extra.get("cer")), "source": r.source, "flags": list(r.flags),
    }
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
        return assemble_document(((p.index, p.regions) for p in self.pages), self.pictures, anchors=anchors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": JSON_SCHEMA, "source": self.path, "engine": self.engine, "layout": self.layout,
            "page_count": self.page_count, "cancelled": self.cancelled, "cer": rounded(self.cer),
            "stats": self.stats, "warnings": self.warnings,
            "pages": [p.to_dict(self.pictures) for p in self.pages],
        }

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)
