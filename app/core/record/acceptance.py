"""Where drafting pays and where it fails, from a trace's events alone (no model): each region's TPF and mean
accepted length (the acceptance map), and the drafts' acceptance by region label, by token class and by position
in the block (the decoding report). See docs/decoding-debugger.md.

A draft at position i (1..B) of a round was *judged* when the verifier reached it (i ≤ k) and *accepted* when
i < k; drafts after the first rejection were never judged (they follow a wrong token) and are not counted.
A region's TPF and mean accepted length are those of its `region_finished` statistics — the figures the JSON
export writes — and are recomputed from its rounds only when an old trace has no statistics.

What must never live here: Qt, torch, drawing, file formats (see acceptance_chart.py and app.commands.report).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from app.core.record.events import Event, LayoutDone, RegionFinished, RoundVerified, RunStarted, TokensCommitted

TOKEN_CLASSES = ("letters", "digits", "punctuation", "whitespace", "markup", "latex", "other")
LABEL_KINDS = ("text", "title", "table", "formula", "other")
_TITLES = {"doc_title", "paragraph_title", "figure_title", "table_title", "chart_title"}
_LATEX_OPEN = re.compile(r"\\[A-Za-z]*$")
_SPECIAL = re.compile(r"^<\|[^|]*\|>$")


def label_kind(label: str, task: str = "") -> str:
    """A region's label folded into the report's kinds: text, title, table, formula (other: the rest)."""
    if label in _TITLES:
        return "title"
    if task in ("table", "formula"):
        return task
    if label in ("table", "formula"):
        return label
    return "text" if task == "text" or label == "text" else "other"


def token_class(before: str, token: str) -> str:
    """The class of a drafted token's text `token`, given the text written before it (a `<td>` spelt one
    character at a time is markup all along; so is `\\frac` after its backslash)."""
    if not token:
        return "other"
    last_open, last_close = before.rfind("<"), before.rfind(">")
    if token.startswith("<") or last_open > last_close:
        return "markup"
    if token.startswith("\\") or (token[0].isalpha() and _LATEX_OPEN.search(before)):
        return "latex"
    if token.isspace():
        return "whitespace"
    if any(c.isdigit() for c in token) and not any(c.isalpha() for c in token):
        return "digits"
    if any(c.isalpha() for c in token):
        return "letters"
    if all(not c.isalnum() and not c.isspace() for c in token):
        return "punctuation"
    return "other"


@dataclass
class Tally:
    """Drafts judged and accepted in one bucket (a label kind, a token class, a position in the block)."""

    name: str
    judged: int = 0
    accepted: int = 0
    tokens: int = 0  # response tokens of the bucket's regions (label kinds only)
    forwards: int = 0

    @property
    def rate(self) -> float:
        return self.accepted / self.judged if self.judged else 0.0

    @property
    def tpf(self) -> float:
        return self.tokens / self.forwards if self.forwards else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "judged": self.judged, "accepted": self.accepted, "rate": round(self.rate, 4),
                "tokens": self.tokens, "forwards": self.forwards, "tpf": round(self.tpf, 3)}


@dataclass
class RegionAcceptance:
    """One decoded region on the map: where it is (pixels at `dpi` of its page) and how drafting went."""

    region_id: str
    page: int
    label: str
    kind: str
    box: tuple[float, float, float, float]
    box_pt: tuple[float, float, float, float]
    tpf: float
    mean_accepted: float
    tokens: int
    forwards: int
    rounds: int
    block_size: int
    decode_ms: float
    judged: int = 0
    accepted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.region_id, "page": self.page, "label": self.label, "kind": self.kind,
                "tpf": round(self.tpf, 3), "mean_accepted": round(self.mean_accepted, 3), "tokens": self.tokens,
                "forwards": self.forwards, "rounds": self.rounds, "block_size": self.block_size,
                "decode_ms": round(self.decode_ms, 1), "draft_acceptance": round(self.rate, 4)}

    @property
    def rate(self) -> float:
        return self.accepted / self.judged if self.judged else 0.0


@dataclass
class PageSize:
    width_px: int
    height_px: int
    width_pt: float
    height_pt: float
    dpi: float = 0.0  # of the regions' pixel boxes


@dataclass
class AcceptanceReport:
    document: str = ""
    engine: str = ""
    block_size: int = 0
    regions: list[RegionAcceptance] = field(default_factory=list)
    pages: dict[int, PageSize] = field(default_factory=dict)
    by_kind: list[Tally] = field(default_factory=list)
    by_class: list[Tally] = field(default_factory=list)
    by_position: list[Tally] = field(default_factory=list)
    rejected_texts: dict[str, int] = field(default_factory=dict)  # token texts most often rejected

    def region(self, region_id: str) -> RegionAcceptance | None:
        return next((r for r in self.regions if r.region_id == region_id), None)

    def page_tpf(self, page: int) -> float:
        rows = [r for r in self.regions if r.page == page]
        forwards = sum(r.forwards for r in rows)
        return sum(r.tokens for r in rows) / forwards if forwards else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"document": self.document, "engine": self.engine, "block_size": self.block_size,
                "regions": [r.to_dict() for r in self.regions],
                "pages": [{"page": p, "tpf": round(self.page_tpf(p), 3)} for p in sorted(self.pages)],
                "by_kind": [t.to_dict() for t in self.by_kind], "by_class": [t.to_dict() for t in self.by_class],
                "by_position": [t.to_dict() for t in self.by_position],
                "rejected_texts": dict(self.rejected_texts)}


def analyse(events: Iterable[Event]) -> AcceptanceReport:
    """The acceptance report of a run's events (a trace's, or a live run's as recorded)."""
    report = AcceptanceReport()
    layout: dict[str, dict[str, Any]] = {}
    rounds: dict[str, list[RoundVerified]] = {}
    finished: dict[str, RegionFinished] = {}
    ar_tokens: dict[str, int] = {}
    for ev in events:
        if isinstance(ev, RunStarted):
            report.document, report.engine, report.block_size = ev.document, ev.engine, ev.block_size
        elif isinstance(ev, LayoutDone):
            report.pages[ev.page] = PageSize(ev.width_px, ev.height_px, ev.width_pt, ev.height_pt, ev.dpi)
            for r in ev.regions:
                layout[r["id"]] = r
        elif isinstance(ev, RoundVerified):
            if ev.round_index == 0 and ev.output_len <= len(ev.new_tokens):
                rounds[ev.region_id] = []  # a region decoded again: its latest decode counts
            rounds.setdefault(ev.region_id, []).append(ev)
        elif isinstance(ev, TokensCommitted):
            ar_tokens[ev.region_id] = ar_tokens.get(ev.region_id, 0) + len(ev.tokens)
        elif isinstance(ev, RegionFinished):
            finished[ev.region_id] = ev
    kinds = {k: Tally(k) for k in LABEL_KINDS}
    classes = {c: Tally(c) for c in TOKEN_CLASSES}
    positions: dict[int, Tally] = {}
    for rid, done in finished.items():
        info = layout.get(rid, {})
        kind = label_kind(info.get("label", ""), info.get("task", ""))
        region = _region(rid, info, kind, done, rounds.get(rid, []), ar_tokens.get(rid, 0))
        committed = ""
        for rnd in rounds.get(rid, []):
            judged, accepted = _judge(rnd, committed, classes, positions, report.rejected_texts)
            region.judged += judged
            region.accepted += accepted
            committed += rnd.text
        if not region.forwards:
            continue  # not decoded by a model (text layer, picture, a remote engine reporting nothing)
        report.regions.append(region)
        bucket = kinds[kind]
        bucket.judged += region.judged
        bucket.accepted += region.accepted
        bucket.tokens += region.tokens
        bucket.forwards += region.forwards
    report.regions.sort(key=lambda r: (r.page, r.region_id))
    report.by_kind = [t for t in kinds.values() if t.forwards]
    report.by_class = [t for t in classes.values() if t.judged]
    report.by_position = [positions[i] for i in sorted(positions)]
    report.rejected_texts = dict(sorted(report.rejected_texts.items(), key=lambda kv: -kv[1])[:12])
    if not report.block_size:
        report.block_size = max((r.block_size for r in report.regions), default=0)
    return report


def _region(rid: str, info: dict[str, Any], kind: str, done: RegionFinished, rounds: list[RoundVerified],
            ar_tokens: int) -> RegionAcceptance:
    stats = done.stats or {}
    forwards = int(stats.get("forwards") or sum(r.forwards for r in rounds) or ar_tokens)
    tokens = int(stats.get("tokens") or sum(len(r.new_tokens) for r in rounds) or ar_tokens)
    n_rounds = int(stats.get("rounds") or len(rounds))
    tpf = float(stats["tpf"]) if "tpf" in stats else (tokens / forwards if forwards else 0.0)
    mean_k = (float(stats["mean_accepted"]) if "mean_accepted" in stats
              else (sum(r.k for r in rounds) / len(rounds) if rounds else 0.0))
    block = int(stats.get("block_size") or max((r.block_size for r in rounds), default=0))
    box = tuple(float(v) for v in info.get("box", (0, 0, 0, 0)))
    box_pt = tuple(float(v) for v in info.get("box_pt", (0, 0, 0, 0)))
    return RegionAcceptance(rid, int(info.get("page", 0)), str(info.get("label", "")), kind, box, box_pt,  # type: ignore[arg-type]
                            tpf, mean_k, tokens, forwards, n_rounds, block, float(stats.get("decode_ms", 0.0)))


def _judge(rnd: RoundVerified, committed: str, classes: dict[str, Tally], positions: dict[int, Tally],
           rejected: dict[str, int]) -> tuple[int, int]:
    texts = rnd.candidate_texts or [""] * len(rnd.candidates)
    before = committed + (texts[0] if texts else "")
    judged = accepted = 0
    # drafts past the round's committed tokens (after a stop token, past the budget) were never used
    for i in range(1, min(len(rnd.candidates), rnd.k + 1, len(rnd.new_tokens))):
        text = texts[i] if i < len(texts) else ""
        if _SPECIAL.match(text):
            break  # the stop token: what follows it is not output
        ok = i < rnd.k
        cls = classes[token_class(before, text)]
        pos = positions.setdefault(i, Tally(str(i)))
        for bucket in (cls, pos):
            bucket.judged += 1
            bucket.accepted += ok
        judged += 1
        accepted += ok
        if not ok:
            rejected[text] = rejected.get(text, 0) + 1
        before += text
    return judged, accepted
