"""Is a region of a page image handwritten? A cheap test on its ink's connected components, no model:

- `fill`: the median share of a component's bounding box its ink covers. Printed glyphs are compact (0.44-0.67 on
  the printed Latin scans of corpora/realdocs, tables, newspaper and Fraktur included); pen strokes are thin lines
  through loops and joins (0.22 and 0.34 on its two handwritten pages);
- `height_cv`: how much the components' heights vary (standard deviation over mean, components of 0.4-3× the
  median height): type has a few heights (0.14-0.37 printed), a hand does not (0.38 and 0.44).

A region is handwritten when both say so (`fill` < FILL_MAX and `height_cv` > HEIGHT_CV_MIN) and it has enough
components to judge (COMPONENTS_MIN). CJK characters are built of several components of varied heights and fool
the test (0.33-0.38 fill on two of the set's Chinese scans), so the pipeline asks it only of Latin-script pages.

What must never live here: reading text, the pipeline's policy, Qt.
"""
from __future__ import annotations

import numpy as np

FILL_MAX = 0.40
HEIGHT_CV_MIN = 0.33
COMPONENTS_MIN = 30
MIN_AREA = 8  # pixels: specks below this are noise, not strokes
WORK_SIDE = 1200  # the crop is scaled down to this longest side first (the figures above were measured so)


def ink_features(image) -> dict[str, float] | None:
    """`fill`, `height_cv` and `components` of a PIL image's ink (Otsu threshold, 8-connected components); None
    when there is too little ink to judge."""
    import cv2

    gray = np.asarray(image.convert("L"))
    h, w = gray.shape
    scale = WORK_SIDE / max(h, w, 1)
    if scale < 1:
        gray = cv2.resize(gray, (max(1, int(w * scale)), max(1, int(h * scale))), interpolation=cv2.INTER_AREA)
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    stats = stats[1:]
    stats = stats[stats[:, 4] >= MIN_AREA]
    if len(stats) < COMPONENTS_MIN:
        return None
    heights = stats[:, 3].astype(float)
    mid = float(np.median(heights))
    body = stats[(heights > 0.4 * mid) & (heights < 3 * mid)]
    if len(body) < COMPONENTS_MIN:
        return None
    hb = body[:, 3].astype(float)
    fill = float(np.median(body[:, 4] / (body[:, 2] * body[:, 3])))
    return {"fill": round(fill, 3), "height_cv": round(float(hb.std() / hb.mean()), 3), "components": len(body)}


def looks_handwritten(image) -> tuple[bool, dict[str, float] | None]:
    """(handwritten?, the features it was judged on)."""
    f = ink_features(image)
    return (f is not None and f["fill"] < FILL_MAX and f["height_cv"] > HEIGHT_CV_MIN), f
