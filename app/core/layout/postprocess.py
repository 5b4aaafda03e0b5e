"""Layout post-processing (docs/architecture.md, Layout post-processing; after the GLM-OCR SDK's Apache-2.0
`layout_postprocess_utils.py`, re-derived):

1. `nms`: keep the highest-scoring box, drop others overlapping it with IoU ≥ 0.6 (same class) or ≥ 0.98 (across
   classes); IoU uses the +1 pixel convention of the SDK (a box [0, 0, 9, 9] has area 100).
2. `drop_large_images`: when a page has more than one box, drop `image` boxes covering more than 82 % (landscape
   page) or 93 % (portrait page) of the page.
3. `merge_contained`: a box with ≥ 80 % of its area inside another box is dropped ("large" mode keeps the
   container), except image/seal/chart boxes, which are never dropped. Two boxes contained in each other (near
   duplicates) drop only the lower-scoring one, so a pair never vanishes together.
4. `sort_reading_order`: by the model's reading-order rank (`order`), ties by top-to-bottom, left-to-right.
5. `clamp_boxes`: clip to the page, drop boxes narrower or shorter than one pixel.

All functions take and return lists of `Detection` (pure Python, no numpy); `postprocess` runs the chain.
What must never live here: model calls, rendering, regions' ids.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

IOU_SAME = 0.6
IOU_DIFF = 0.98
CONTAIN_RATIO = 0.8
LARGE_IMAGE_LANDSCAPE = 0.82
LARGE_IMAGE_PORTRAIT = 0.93
NEVER_DROPPED = frozenset({"image", "seal", "chart"})


@dataclass(frozen=True)
class Detection:
    label: str
    score: float
    box: tuple[float, float, float, float]  # x1, y1, x2, y2 in page pixels
    order: int = 0  # the detector's reading-order rank (lower reads first)


def area(box) -> float:
    """Area with the +1 pixel convention."""
    return max(0.0, box[2] - box[0] + 1) * max(0.0, box[3] - box[1] + 1)


def intersection(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0]) + 1
    h = min(a[3], b[3]) - max(a[1], b[1]) + 1
    return max(0.0, w) * max(0.0, h)


def iou(a, b) -> float:
    inter = intersection(a, b)
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def nms(dets: list[Detection], iou_same: float = IOU_SAME, iou_diff: float = IOU_DIFF) -> list[Detection]:
    """Greedy NMS by score (stable for equal scores: earlier first). Returns the kept detections by score."""
    pending = sorted(range(len(dets)), key=lambda i: -dets[i].score)
    kept: list[int] = []
    while pending:
        cur = pending.pop(0)
        kept.append(cur)
        c = dets[cur]
        pending = [
            i for i in pending
            if iou(c.box, dets[i].box) < (iou_same if dets[i].label == c.label else iou_diff)
        ]
    return [dets[i] for i in kept]


def drop_large_images(dets: list[Detection], page_w: float, page_h: float) -> list[Detection]:
    if len(dets) <= 1:
        return list(dets)
    ratio = LARGE_IMAGE_LANDSCAPE if page_w > page_h else LARGE_IMAGE_PORTRAIT
    limit = ratio * page_w * page_h
    out = []
    for d in dets:
        x1, y1, x2, y2 = max(0.0, d.box[0]), max(0.0, d.box[1]), min(page_w, d.box[2]), min(page_h, d.box[3])
        if d.label == "image" and (x2 - x1) * (y2 - y1) > limit:
            continue
        out.append(d)
    return out


def contained_fraction(inner, outer) -> float:
    """Share of `inner`'s area that lies inside `outer`."""
    a = area(inner)
    return intersection(inner, outer) / a if a > 0 else 0.0


def merge_contained(dets: list[Detection], ratio: float = CONTAIN_RATIO) -> list[Detection]:
    drop = set()
    for i, d in enumerate(dets):
        if d.label in NEVER_DROPPED:
            continue
        for j, o in enumerate(dets):
            if i == j or j in drop:
                continue
            if contained_fraction(d.box, o.box) >= ratio:
                mutual = contained_fraction(o.box, d.box) >= ratio
                if mutual and o.label not in NEVER_DROPPED and (d.score, -i) > (o.score, -j):
                    continue  # near duplicates: the better one stays, `o` goes when its turn comes
                drop.add(i)
                break
    return [d for i, d in enumerate(dets) if i not in drop]


def sort_reading_order(dets: list[Detection]) -> list[Detection]:
    return sorted(dets, key=lambda d: (d.order, d.box[1], d.box[0]))


def clamp_boxes(dets: list[Detection], page_w: float, page_h: float) -> list[Detection]:
    out = []
    for d in dets:
        x1, y1 = max(0.0, min(page_w, d.box[0])), max(0.0, min(page_h, d.box[1]))
        x2, y2 = max(0.0, min(page_w, d.box[2])), max(0.0, min(page_h, d.box[3]))
        if x2 - x1 < 1 or y2 - y1 < 1:
            continue
        out.append(replace(d, box=(float(int(x1)), float(int(y1)), float(int(round(x2))), float(int(round(y2))))))
    return out


def postprocess(
    dets: list[Detection], page_w: float, page_h: float, *, threshold: float = 0.0, use_nms: bool = True
) -> list[Detection]:
    """The whole chain above for one page; returns detections in reading order."""
    dets = [d for d in dets if d.score >= threshold]
    if use_nms:
        dets = nms(dets)
    dets = drop_large_images(dets, page_w, page_h)
    dets = merge_contained(dets)
    dets = sort_reading_order(dets)
    return clamp_boxes(dets, page_w, page_h)
