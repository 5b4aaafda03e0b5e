"""Regions: the unit of layout, decoding, review and export. This module owns what a region is, where its id is
born (`region_id`), its tasks, and the routing of a layout label to a task.

A region has one stable id used by the page overlay, the editor, the decoding views, trace files and the JSON
export. Both pipelines produce them: layout + region OCR, and whole-document engines (Unlimited-OCR) whose output
is parsed back into regions.

What must never live here: layout models, decoding, Markdown.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

TASKS = ("text", "table", "formula", "picture", "skipped")
DECODED_TASKS = ("text", "table", "formula")  # the tasks an OCR engine reads; pictures and skipped ones are not read

# Prompts of the GLM-OCR family, per task (docs/architecture.md, Labels, tasks and prompts).
TASK_PROMPTS = {
    "text": "Text Recognition:",
    "table": "Table Recognition:",
    "formula": "Formula Recognition:",
}
MAX_NEW_TOKENS = {"text": 512, "table": 4096, "formula": 4096}


def region_id(page: int, order: int) -> str:
    """Stable id of the `order`-th region (0-based) of page `page` (0-based): deterministic for the same input."""
    return f"p{page + 1}-r{order + 1:02d}"


TEXT_LABELS = frozenset({
    "abstract", "algorithm", "content", "doc_title", "figure_title", "paragraph_title", "reference_content", "text",
    "vision_footnote", "seal", "formula_number", "aside_text", "vertical_text",
    "footnote",  # a page's footnotes are its text (a report's sources, a law's articles), unlike running furniture
})
TABLE_LABELS = frozenset({"table"})
FORMULA_LABELS = frozenset({"formula", "display_formula", "inline_formula"})
PICTURE_LABELS = frozenset({"image", "chart"})
MARGIN_LABELS = frozenset({"header", "footer", "number", "reference", "header_image", "footer_image"})


def route(label: str, keep_headers: bool = False) -> str:
    """The task for a native layout label. Unknown labels are skipped."""
    if label in TEXT_LABELS:
        return "text"
    if label in TABLE_LABELS:
        return "table"
    if label in FORMULA_LABELS:
        return "formula"
    if label in PICTURE_LABELS:
        return "picture"
    if label in MARGIN_LABELS:
        if not keep_headers:
            return "skipped"
        return "picture" if label.endswith("_image") else "text"
    return "skipped"


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


def token_confidence(logprobs: Sequence[float]) -> dict[str, float] | None:
    """How sure the model was of a block: the mean and the minimum of its tokens' probabilities (exp of the
    log-probabilities the engine reported), or None when it reported none (never invented)."""
    probs = [math.exp(min(0.0, float(lp))) for lp in logprobs if lp is not None and math.isfinite(float(lp))]
    if not probs:
        return None
    return {"mean": round(sum(probs) / len(probs), 4), "min": round(min(probs), 4), "tokens": len(probs)}


def line_confidence(stats: dict[str, Any]) -> dict[str, float] | None:
    """How sure a line reader was of a block, for engines that report no token log-probabilities: the mean and the
    minimum of its lines' scores (`stats["line_scores"]`, probabilities in 0..1), or None when there are none."""
    scores = [float(s) for s in stats.get("line_scores") or () if isinstance(s, (int, float)) and math.isfinite(s)]
    if not scores:
        return None
    return {"mean": round(sum(scores) / len(scores), 4), "min": round(min(scores), 4), "lines": len(scores)}


def record_result(region: Region, text: str, stats: dict[str, Any], *, cancelled: bool, engine: str,
                  logprobs: Sequence[float] = ()) -> None:
    """Record a decode's result on its region: the text, the engine and its stats, its confidence (from the tokens'
    log-probabilities, None when the engine reports none), and the flags `error` (the read failed; `stats["error"]`
    says why) and `cancelled` (stopped part-way). The pipeline and the review session both record a RegionFinished
    through here, so a region reads the same in `convert`'s output and the window's."""
    region.text = text
    region.extra["engine"] = engine
    region.extra["stats"] = dict(stats)
    confidence, lines = token_confidence(logprobs), line_confidence(stats)
    if confidence is not None and lines is not None:  # a line the reader left mostly unread lowers the minimum
        confidence["min"] = min(confidence["min"], lines["min"])
    region.extra["confidence"] = confidence or lines
    region.flags = [f for f in region.flags if f not in ("error", "cancelled", "truncated")]
    if stats.get("error"):
        region.flags.append("error")
    if stats.get("truncated"):  # cut at the token budget: shown and counted, never done
        region.flags.append("truncated")
    if cancelled:
        region.flags.append("cancelled")
