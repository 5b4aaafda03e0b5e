"""The block-size sweep: the same regions decoded again at each block size B (and autoregressively, the reference),
with TPF, forwards and wall time per B, a check that every B wrote exactly AR's tokens (self-speculative decoding is
exact: a token that differs is a bug, and `SweepResult.mismatches` says where), and the B that read each region kind
fastest. The window's sweep pane and `python -m app bench sweep` both run `sweep`.

The engine is a local self-speculative one (`mode` and `block_size` are read at each decode: the built-in engine,
the GLM-OCR family's); its own mode and block size are put back afterwards. It runs on whatever thread owns the
engine. What must never live here: Qt, layout, printing.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from app.core.base.cancel import CancelToken

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from app.core.engines.base import RegionResult

BLOCK_SIZES = (4, 8, 16, 32, 64)
AR = 0  # the reference's block size in the result (no drafts)


class SweepableEngine(Protocol):
    mode: str  # "selfspec" | "ar"
    block_size: int

    def decode_region(self, image: "Image.Image", task: str, *, region_id: str, page: int = 0,
                      cancel: CancelToken | None = None) -> "RegionResult": ...


@dataclass
class SweepItem:
    """One region to decode again: its crop as the engine reads it, its task and its kind (text, table, …)."""

    region_id: str
    kind: str
    task: str
    image: "Image.Image"
    page: int = 0


@dataclass
class SweepPoint:
    region_id: str
    kind: str
    block_size: int  # AR (0) for the reference
    tokens: int
    forwards: int
    mean_accepted: float
    wall_ms: list[float]  # one per repetition: the whole decode_region (the built-in engine's line finding too)
    decode_ms: list[float] = field(default_factory=list)  # the decoder's own time, as the engine's stats say
    same_as_ar: bool = True
    first_difference: int | None = None  # the first output index whose token differs from AR's
    text: str = ""
    output: list[int] = field(default_factory=list, repr=False)  # the tokens written (the check's evidence)

    @property
    def tpf(self) -> float:
        return self.tokens / self.forwards if self.forwards else 0.0

    @property
    def ms(self) -> float:
        return statistics.mean(self.wall_ms) if self.wall_ms else 0.0

    @property
    def decoder_ms(self) -> float:
        return statistics.mean(self.decode_ms) if self.decode_ms else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"region_id": self.region_id, "kind": self.kind, "block_size": self.block_size, "tokens": self.tokens,
                "forwards": self.forwards, "tpf": round(self.tpf, 3), "mean_accepted": round(self.mean_accepted, 3),
                "wall_ms": [round(v, 2) for v in self.wall_ms], "decode_ms": [round(v, 2) for v in self.decode_ms],
                "same_as_ar": self.same_as_ar,
                "first_difference": self.first_difference}


@dataclass
class BlockSummary:
    """All swept regions (or one kind's) at one block size."""

    block_size: int
    tokens: int
    forwards: int
    ms: float  # summed mean wall time
    ms_std: float  # of the summed wall time over repetitions
    identical: bool
    decoder_ms: float = 0.0  # summed mean decoder time (0: the engine reports none)

    @property
    def tpf(self) -> float:
        return self.tokens / self.forwards if self.forwards else 0.0


@dataclass
class SweepResult:
    points: list[SweepPoint] = field(default_factory=list)
    block_sizes: tuple[int, ...] = BLOCK_SIZES
    reps: int = 1
    cancelled: bool = False

    def mismatches(self) -> list[SweepPoint]:
        """Every (region, B) whose tokens differ from AR's: a bug in the decoder, never a setting."""
        return [p for p in self.points if not p.same_as_ar]

    def kinds(self) -> list[str]:
        return sorted({p.kind for p in self.points})

    def summary(self, kind: str | None = None) -> list[BlockSummary]:
        """Per block size (AR first), summed over the regions (of `kind`, when given)."""
        out = []
        for b in (AR, *self.block_sizes):
            pts = [p for p in self.points if p.block_size == b and (kind is None or p.kind == kind)]
            if not pts:
                continue
            per_rep = [sum(p.wall_ms[i] for p in pts if i < len(p.wall_ms)) for i in range(self.reps)]
            out.append(BlockSummary(b, sum(p.tokens for p in pts), sum(p.forwards for p in pts),
                                    sum(p.ms for p in pts), statistics.pstdev(per_rep) if len(per_rep) > 1 else 0.0,
                                    all(p.same_as_ar for p in pts), sum(p.decoder_ms for p in pts)))
        return out

    def best(self, kind: str | None = None) -> int:
        """The block size that decoded the regions (of `kind`) in the least time — the decoder's own where the engine
        reports it (what B changes), else the wall time; 0 when nothing was swept."""
        rows = [s for s in self.summary(kind) if s.block_size != AR]
        return min(rows, key=lambda s: (s.decoder_ms or s.ms, -s.tpf)).block_size if rows else 0

    def best_by_kind(self) -> dict[str, int]:
        return {k: self.best(k) for k in self.kinds()}

    def to_dict(self) -> dict[str, Any]:
        return {"block_sizes": list(self.block_sizes), "reps": self.reps, "cancelled": self.cancelled,
                "points": [p.to_dict() for p in self.points], "best": self.best(), "best_by_kind": self.best_by_kind(),
                "mismatches": [(p.region_id, p.block_size, p.first_difference) for p in self.mismatches()]}


def first_difference(a: Sequence[int], b: Sequence[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def sweep(engine: SweepableEngine, items: Sequence[SweepItem], block_sizes: Sequence[int] = BLOCK_SIZES, *,
          reps: int = 1, cancel: CancelToken | None = None,
          on_point: Callable[[SweepPoint, int, int], None] | None = None) -> SweepResult:
    """Decode every item autoregressively, then at each block size, `reps` times each; `on_point(point, done,
    total)` after each (region, B). Cancel is honoured between two decodes (what was measured is kept)."""
    result = SweepResult(block_sizes=tuple(int(b) for b in block_sizes), reps=max(1, int(reps)))
    mode, block = engine.mode, engine.block_size
    total, done = len(items) * (1 + len(result.block_sizes)), 0
    try:
        for item in items:
            reference: SweepPoint | None = None
            for b in (AR, *result.block_sizes):
                if cancel is not None and cancel.cancelled:
                    result.cancelled = True
                    return result
                engine.mode, engine.block_size = ("ar", 0) if b == AR else ("selfspec", b)
                point = _measure(engine, item, b, result.reps, cancel)
                if reference is None:
                    reference = point
                else:
                    point.first_difference = first_difference(reference.output, point.output)
                    point.same_as_ar = point.first_difference is None and point.text == reference.text
                result.points.append(point)
                done += 1
                if on_point is not None:
                    on_point(point, done, total)
    finally:
        engine.mode, engine.block_size = mode, block
    return result


def _measure(engine: SweepableEngine, item: SweepItem, b: int, reps: int, cancel) -> SweepPoint:
    times, decoder, res = [], [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        res = engine.decode_region(item.image, item.task, region_id=item.region_id, page=item.page, cancel=cancel)
        times.append((time.perf_counter() - t0) * 1e3)
        if (res.stats or {}).get("decode_ms"):
            decoder.append(float(res.stats["decode_ms"]) + float(res.stats.get("prefill_ms", 0.0)))
    assert res is not None
    stats = res.stats or {}
    point = SweepPoint(item.region_id, item.kind, b, int(stats.get("tokens", len(res.tokens))),
                       int(stats.get("forwards", 0)), float(stats.get("mean_accepted", 0.0)), times, text=res.text,
                       output=list(res.tokens), decode_ms=decoder)
    return point


def items_from_layout(document, regions: Sequence[dict[str, Any]], dpi: float,
                      region_ids: Sequence[str] | None = None) -> list[SweepItem]:
    """The sweep's items from a document and its laid-out regions (`Region.to_dict`, e.g. a trace's `layout_done`):
    each decodable region (text, table, formula) cropped at the engine's `dpi`, or only those of `region_ids`."""
    from app.core.record.acceptance import label_kind

    wanted = set(region_ids or ())
    items = []
    for r in regions:
        if r.get("task") not in ("text", "table", "formula") or (wanted and r["id"] not in wanted):
            continue
        crop = document.crop(int(r["page"]), tuple(r["box_pt"]), dpi)
        items.append(SweepItem(r["id"], label_kind(r.get("label", ""), r["task"]), r["task"], crop, int(r["page"])))
    return items
