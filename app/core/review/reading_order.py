"""A person's reading order: the order a page's blocks are read in (`Region.order`, 0..n-1 on the page), which the
editor, the Markdown, the JSON `order` and every export follow.

Four ways to change it, each one `LayoutEdit` (one undo step, journaled with the work, app.core.review.region_edits):
- `move_before(id, target)`: the region goes just before `target` (a badge dragged onto another);
- `move_by(id, ±1)`: one place earlier or later (the keyboard's [ and ]);
- `set_sequence(page, ids)`: the regions a person clicked, in that order, first; the others keep their order after;
- `by_columns(page)` / `top_to_bottom(page)`: the page ordered column by column, or line by line.

A page whose order a person set is a page a person laid out (`PERSON_LAYOUT`): a later run reads the regions as
they are, in this order, instead of laying the page out again, so a re-run keeps the person's order.

What must never live here: Qt, drawing, running anything.
"""
from __future__ import annotations

from statistics import median
from typing import Sequence

from app.core.document.regions import Region
from app.core.review.region_edits import LayoutEdit, RegionEditor

Box = tuple[float, float, float, float]
WIDE = 0.55  # a region wider than this share of the page's text width spans the columns (a title, a wide table)


def _union(intervals: list[tuple[float, float]], gap: float) -> list[tuple[float, float]]:
    """Overlapping (or closer than `gap`) x-intervals joined, left to right."""
    out: list[list[float]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def column_order(boxes: Sequence[Box]) -> list[int]:
    """Indices of `boxes` (x0, y0, x1, y1) in column reading order: the columns are the x-intervals the narrow
    boxes fill (joined where they overlap); a box that reaches over two columns (a title, a wide figure) divides
    the page into bands, and each band is read column by column, top to bottom, before the box below it."""
    n = len(boxes)
    if n < 2:
        return list(range(n))
    left, right = min(b[0] for b in boxes), max(b[2] for b in boxes)
    width = max(1.0, right - left)
    narrow = [(b[0], b[2]) for b in boxes if b[2] - b[0] <= WIDE * width] or [(b[0], b[2]) for b in boxes]
    gap = 0.01 * width
    columns = _union(narrow, gap)

    def cols_of(b: Box) -> list[int]:
        hit = [k for k, (a, c) in enumerate(columns) if min(c, b[2]) - max(a, b[0]) > gap]
        if hit:
            return hit
        cx = (b[0] + b[2]) / 2
        return [min(range(len(columns)), key=lambda k: abs(cx - (columns[k][0] + columns[k][1]) / 2))]

    spanning = sorted((i for i in range(n) if len(cols_of(boxes[i])) > 1), key=lambda i: (boxes[i][1], boxes[i][0]))
    tops = [boxes[i][1] for i in spanning]
    bands: list[list[int]] = [[] for _ in range(len(spanning) + 1)]
    for i in range(n):
        if i in spanning:
            continue
        cy = (boxes[i][1] + boxes[i][3]) / 2
        bands[sum(1 for t in tops if t <= cy)].append(i)
    out: list[int] = []
    for k, band in enumerate(bands):
        out += sorted(band, key=lambda i: (cols_of(boxes[i])[0], boxes[i][1], boxes[i][0]))
        if k < len(spanning):
            out.append(spanning[k])
    return out


def line_order(boxes: Sequence[Box]) -> list[int]:
    """Indices of `boxes` top to bottom, and left to right among boxes on one line (their tops within half a
    typical box height of the line's first)."""
    n = len(boxes)
    if n < 2:
        return list(range(n))
    tolerance = 0.5 * (median([max(1.0, b[3] - b[1]) for b in boxes]))
    by_top = sorted(range(n), key=lambda i: (boxes[i][1], boxes[i][0]))
    lines: list[list[int]] = []
    for i in by_top:
        if lines and boxes[i][1] - boxes[lines[-1][0]][1] <= tolerance:
            lines[-1].append(i)
        else:
            lines.append([i])
    return [i for line in lines for i in sorted(line, key=lambda i: boxes[i][0])]


class OrderEditor(RegionEditor):
    """The reading-order edits on one document's work; each returns its LayoutEdit (None: the order is unchanged)."""

    def _regions(self, page: int) -> list[Region]:
        return [b.region for b in self.work.layout_blocks(page)]

    def _apply(self, page: int, ids: list[str], description: str, selected: str = "") -> LayoutEdit | None:
        current = [r.id for r in self._regions(page)]
        if ids == current:
            return None
        with self._edit(page, description, selected) as edit:
            for k, rid in enumerate(ids):
                self.work.blocks[rid].region.order = k
        return edit

    def move_before(self, region_id: str, target_id: str) -> LayoutEdit | None:
        """`region_id` goes just before `target_id` (its badge was dropped on the target); "" as target: last."""
        page = self.work.blocks[region_id].region.page
        ids = [r.id for r in self._regions(page) if r.id != region_id]
        if target_id and (target_id not in ids or self.work.blocks[target_id].region.page != page):
            return None
        at = ids.index(target_id) if target_id else len(ids)
        ids.insert(at, region_id)
        where = f"before {target_id}" if target_id else "to the end"
        return self._apply(page, ids, f"Move {region_id} {where} in reading order", region_id)

    def move_by(self, region_id: str, step: int) -> LayoutEdit | None:
        """One place earlier (step -1) or later (+1) in the page's reading order."""
        page = self.work.blocks[region_id].region.page
        ids = [r.id for r in self._regions(page)]
        k = ids.index(region_id)
        j = max(0, min(len(ids) - 1, k + step))
        ids.insert(j, ids.pop(k))
        word = "earlier" if step < 0 else "later"
        return self._apply(page, ids, f"Read {region_id} {word}", region_id)

    def set_sequence(self, page: int, sequence: Sequence[str]) -> LayoutEdit | None:
        """The regions of `sequence` (clicked one after another) are read first, in that order; the page's other
        regions follow in the order they had."""
        current = [r.id for r in self._regions(page)]
        chosen = list(dict.fromkeys(rid for rid in sequence if rid in current))
        if not chosen:
            return None
        ids = chosen + [rid for rid in current if rid not in chosen]
        return self._apply(page, ids, f"Reading order of page {page + 1} by clicks", chosen[-1])

    def by_columns(self, page: int) -> LayoutEdit | None:
        regions = self._regions(page)
        order = column_order([tuple(r.box_pt) for r in regions])
        return self._apply(page, [regions[i].id for i in order], f"Order page {page + 1} by columns")

    def top_to_bottom(self, page: int) -> LayoutEdit | None:
        regions = self._regions(page)
        order = line_order([tuple(r.box_pt) for r in regions])
        return self._apply(page, [regions[i].id for i in order], f"Order page {page + 1} top to bottom")
