"""A scanned page read once by the built-in engine's eyes: RapidOCR's detector over the whole page, then every line's
crop through the recogniser in one batched pass (app.core.rapid.recogniser). The layout is given these lines' text
(instead of running its own OCR), the orientation check their confidence, and the engine their readings
(`decode_lines(known=...)`): no crop is recognised twice.

    lines = engine.read_page(image, page)  # [PageLine], boxes in the image's pixels (read_page_lines)
    sure_upright(lines)                    # does the page read as it is? (no orientation check needed)
    engine.decode_lines(crop, task, boxes, known=[(box, line.fresh_reading()), ...])   # known_rows

Crops are cut as the engine cuts given line boxes (padded by line_boxes.GIVEN_PAD of their height, neighbours cut apart:
app.core.engines.builtin.line_boxes.apart); a line the recogniser read with a mean confidence under MIN_SCORE, or
as nothing, is dropped, as RapidOCR's own pipeline drops it (its `text_score`).

What must never live here: layout, turning pages, decoding.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from app.core.engines.builtin.routed import route_page
from app.core.scripts.router import Routed

PAD = 24  # white pixels around the page before detection (text touching the edge is detected poorly)
MIN_SCORE = 0.5  # RapidOCR's text_score: a line read with less mean confidence is not a line
SURE_CONFIDENCE = 0.85  # a page read as it is with this mean confidence is upright (upside down reads far lower)
SURE_ACROSS = 0.8  # ... when this share of its lines run across it
SURE_LINES = 3


@dataclass
class PageLine:
    """One detected line: `det` its detector box, `box` the crop box read (padded, cut apart from its neighbours),
    both (x0, y0, x1, y1) in the page image's pixels; `size` the crop's (w, h) as read (after a vertical piece was
    turned); `reading` the recogniser's."""

    det: tuple[float, float, float, float]
    box: tuple[float, float, float, float]
    size: tuple[int, int]
    reading: object  # app.core.rapid.recogniser.Reading

    @property
    def text(self) -> str:
        """The line's text: the recogniser's, or the script router's where it read the line instead."""
        routed = self.reading.routed
        return routed.text if isinstance(routed, Routed) else self.reading.text

    @property
    def score(self) -> float:
        conf = self.reading.conf
        return float(sum(conf) / len(conf)) if conf else 0.0

    def fresh_reading(self):
        """A copy of the reading the engine may settle in place (the page's stays as read)."""
        return self.reading.copy()

    def part(self, x0: float, x1: float):
        """(crop box, reading) of the part of this line between x0 and x1 (the image's pixels): the characters the
        recogniser read there, found by the CTC columns they were read in (each covers 8 pixels of the crop at height
        48), their columns counted from the part's left edge. The part of a line the detector joined across a
        column's gutter (app.core.layout.columns) so needs no reading of its own. None where the columns cannot
        tell: a vertical piece, a line another recogniser read, a reading without columns, no letter in the part."""
        import math

        from app.core.rapid.recogniser import MAX_RATIO, REC_HEIGHT, Reading

        r, (bx0, by0, bx1, by1), (w, h) = self.reading, self.box, self.size
        if r.routed is not None or len(r.cols) != len(r.chars) or w < 1 or h < 1 or by1 - by0 > 1.5 * (bx1 - bx0):
            return None
        resized = max(1, min(math.ceil(REC_HEIGHT * w / h), int(REC_HEIGHT * MAX_RATIO)))
        step = 8.0 * (bx1 - bx0) / resized  # pixels a column
        a, z = max(bx0, x0), min(bx1, x1)
        keep = [k for k, (c0, c1) in enumerate(r.cols) if a <= bx0 + step * (c0 + c1) / 2 < z]
        while keep and not r.chars[keep[0]].strip():
            keep.pop(0)
        while keep and not r.chars[keep[-1]].strip():
            keep.pop()
        if z - a < 1 or not keep:
            return None
        shift = (a - bx0) / step
        lists = {name: getattr(r, name) for name in ("chars", "conf", "alts", "alt_p", "alts2", "alt_p2")}
        part = Reading(**{name: [v[k] for k in keep] if len(v) == len(r.chars) else list(v)
                          for name, v in lists.items()},
                       cols=[(max(0, round(r.cols[k][0] - shift)), max(1, round(r.cols[k][1] - shift))) for k in keep])
        return (round(a, 1), by0, round(z, 1), by1), part


def detector():
    """RapidOCR with detection only (the engine's own instance: the classic engine's shared one keeps its call
    flags); its long side at most 1600 px (a 200-DPI page is detected at about 145 DPI)."""
    import logging

    from rapidocr import RapidOCR

    from app.core.base.threads import rapidocr_params
    from app.core.rapid.det_input import boxes_only, fast_input

    try:  # threads: a `convert --jobs` worker's share of the cores (app.core.base.threads)
        ocr = RapidOCR(params={"Global.log_level": "error", "Global.use_cls": False, "Det.limit_type": "max",
                               "Det.limit_side_len": 1600, **rapidocr_params()})
    except Exception:  # noqa: BLE001 - another params schema
        ocr = RapidOCR()
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    fast_input(ocr)  # its input made in float32 (app.core.rapid.det_input)
    boxes_only(ocr)  # and no crops cut for the recogniser it does not run
    return ocr


def detect(engine, image) -> list[tuple[float, float, float, float]]:
    """The detector's line boxes (x0, y0, x1, y1) on `image` (a PIL page rendering), in its pixels."""
    import numpy as np
    from PIL import ImageOps

    from app.core.base.stages import stage

    if image.width < 4 or image.height < 4:
        return []
    engine._det = det = engine._det or detector()
    padded = np.asarray(ImageOps.expand(image.convert("RGB"), border=PAD, fill=(255, 255, 255)))
    with stage("detector"):
        res = det(padded, use_det=True, use_cls=False, use_rec=False)
    quads = getattr(res, "boxes", None)
    if quads is None or len(quads) == 0:
        return []
    out = []
    for q in quads:
        q = np.asarray(q, dtype=np.float32)
        xs, ys = q[:, 0] - PAD, q[:, 1] - PAD
        out.append((max(0.0, float(xs.min())), max(0.0, float(ys.min())), min(float(image.width), float(xs.max())),
                    min(float(image.height), float(ys.max()))))
    return out


def crops(image, boxes: Sequence[Sequence[float]]):
    """(crop box, BGR crop) per box (x0, y0, x1, y1 in `image`'s pixels), cut as the engine cuts given lines:
    padded, apart from their neighbours, a vertical piece turned; None for a box too thin to read."""
    import numpy as np

    from app.core.engines.builtin.line_boxes import padded_apart

    rgb = np.asarray(image.convert("RGB"))
    out = []
    for box in padded_apart(boxes, image.width, image.height):
        crop = rgb[int(box[1]):int(round(box[3])), int(box[0]):int(round(box[2]))]
        if crop.shape[0] < 4 or crop.shape[1] < 4:
            out.append(None)
            continue
        if crop.shape[0] * 1.0 / crop.shape[1] >= 1.5:  # a vertical piece: read it turned, as RapidOCR does
            crop = np.rot90(crop)
        out.append((tuple(round(v, 1) for v in box), np.ascontiguousarray(crop[..., ::-1])))
    return out


def read_page_lines(engine, image, page: int = 0, dets: Sequence[Sequence[float]] | None = None) -> list[PageLine]:
    """Every line of page `page`'s image: detected once (`dets`: the detector's boxes on this image, when they are
    known already), all crops read by the engine's recogniser in one batched call (the page's script estimate
    starts afresh, as for the engine's own regions)."""
    engine._page = None  # a page read again (turned after a doubt) is judged afresh too
    engine.start_page(page)
    dets = detect(engine, image) if dets is None else list(dets)
    kept = [(d, c) for d, c in zip(dets, crops(image, dets)) if c is not None]
    readings = engine.recogniser.read([crop for _, (_, crop) in kept]) if kept else []
    route_page(engine, image, [box for _, (box, _) in kept], readings)  # other scripts (app.core.scripts)
    out = []
    for (d, (box, crop)), reading in zip(kept, readings):
        line = PageLine(tuple(round(v, 1) for v in d), box, (int(crop.shape[1]), int(crop.shape[0])), reading)
        if (reading.text.strip() and line.score >= MIN_SCORE) or isinstance(reading.routed, Routed):
            out.append(line)
    return out


def cut(image, box):
    """The BGR crop of `image` (PIL, or its RGB array) inside `box`, turned when it is a vertical piece (as `crops`
    cuts it)."""
    import numpy as np

    rgb = image if isinstance(image, np.ndarray) else np.asarray(image.convert("RGB"))
    crop = rgb[max(0, int(box[1])):int(round(box[3])), max(0, int(box[0])):int(round(box[2]))]
    if crop.shape[0] * 1.0 / max(1, crop.shape[1]) >= 1.5:
        crop = np.rot90(crop)
    return np.ascontiguousarray(crop[..., ::-1])


def known_rows(image, known: Sequence[tuple]):
    """The engine's rows ([[(box, crop), ...], ...], as its own line finding gives them) and their readings in row
    order, for lines already read: `known` is (box in `image`'s pixels, reading) per line; a line with no reading
    (None: a part of a line, cut at a column's edge) is cut as given lines are (padded, apart) and keeps None."""
    import numpy as np

    from app.core.engines.builtin.line_boxes import group_rows, padded_apart

    boxes = [tuple(float(v) for v in box) for box, _ in known]
    fresh = [i for i, (_, reading) in enumerate(known) if reading is None]
    for i, box in zip(fresh, padded_apart([boxes[i] for i in fresh], image.width, image.height)):
        boxes[i] = box
    rows = group_rows(boxes)
    rgb = np.asarray(image.convert("RGB"))  # once, not once a line
    return ([[(tuple(round(v, 1) for v in boxes[i]), cut(rgb, boxes[i])) for i in row] for row in rows],
            [known[i][1] for row in rows for i in row])


def sure_upright(lines: Sequence[PageLine]) -> bool:
    """Does the page read as it is: enough lines, most running across it, read with a high mean confidence? Then
    no other turn could read better by the orientation check's margin, and the check is skipped."""
    if len(lines) < SURE_LINES:
        return False
    across = sum(1 for ln in lines if ln.det[2] - ln.det[0] >= ln.det[3] - ln.det[1])
    conf = [c for ln in lines for ch, c in zip(ln.reading.chars, ln.reading.conf) if ch.strip()]
    return bool(conf) and across >= SURE_ACROSS * len(lines) and sum(conf) / len(conf) >= SURE_CONFIDENCE
