"""Regions: the unit of layout, decoding, review and export.

A region has one stable id used by the page overlay, the editor, the decoding views, trace files and the JSON
export. Both pipelines produce them: layout + region OCR, and whole-document engines (Unlimited-OCR) whose output
is parsed back into regions.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

TASKS = ("text", "table", "formula", "picture", "skipped")

# Prompts of the GLM-OCR family, per task (DESIGN §2/§3).
TASK_PROMPTS = {
    "text": "Text Recognition:",
    "table": "Table Recognition:",
    "formula": "Formula Recognition:",
}
MAX_NEW_TOKENS = {"text": 512, "table": 4096, "formula": 4096}


@dataclass
class Region:
    id: str  # stable and deterministic for the same input and settings, e.g. "p1-r03"
    page: int  # 0-based page index
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in page pixels at `dpi`
    label: str  # the layout model's native label (text, table, doc_title, ...)
    task: str  # one of TASKS
    order: int  # reading-order index within the page
    box_pt: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # the same box in PDF points
    dpi: float = 72.0
    score: float = 1.0
    text: str = ""
    source: str = ""  # which layout (or engine) produced the region
    flags: list[str] = field(default_factory=list)  # e.g. "malformed" for a tag the parser had to repair
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["box"] = list(self.box)
        d["box_pt"] = list(self.box_pt)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Region":
        d = dict(d)
        d["box"] = tuple(d.get("box", (0, 0, 0, 0)))
        d["box_pt"] = tuple(d.get("box_pt", (0, 0, 0, 0)))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})
