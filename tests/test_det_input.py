"""The detector's input made in float32 (app.core.rapid.det_input) is RapidOCR's own, value for value, and the
detector finds the same boxes with it on a real scan (issue #38: its float64 preprocessing cost up to a third of a
page's detection)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

PAGE = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s06-eurotext.png"
PARAMS = {"Global.log_level": "error", "Global.use_cls": False, "Det.limit_type": "max", "Det.limit_side_len": 1600}


def _page() -> np.ndarray:
    from PIL import Image

    if not PAGE.is_file():
        pytest.skip(f"missing page: {PAGE}")
    return np.asarray(Image.open(PAGE).convert("RGB"))


def test_the_float32_input_is_rapidocrs_own_value_for_value():
    from rapidocr.ch_ppocr_det.utils import DetPreProcess

    from app.core.rapid.det_input import _Float32Input

    image = _page()
    for limit, kind, mean, std in ((1600, "max", None, None), (736, "min", [0.485, 0.456, 0.406],
                                                                [0.229, 0.224, 0.225])):
        own = DetPreProcess(limit, kind, mean, std)
        ours = _Float32Input(DetPreProcess(limit, kind, mean, std))
        want, got = own(image), ours(image)
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_the_detector_finds_the_same_boxes_with_it():
    from rapidocr import RapidOCR

    from app.core.rapid.det_input import _Float32Input, fast_input

    image = _page()
    own, fast = RapidOCR(params=PARAMS), RapidOCR(params=PARAMS)
    assert fast_input(fast)
    want = own(image, use_det=True, use_cls=False, use_rec=False)
    got = fast(image, use_det=True, use_cls=False, use_rec=False)
    assert isinstance(fast.text_det.get_preprocess(), _Float32Input)  # it is the one that ran
    assert len(want.boxes) > 10 and np.array_equal(np.asarray(got.boxes), np.asarray(want.boxes))


def test_a_detection_only_call_cuts_no_crops_and_finds_the_same_boxes():
    """`boxes_only`: asked for boxes alone, RapidOCR no longer cuts a crop of each line for a recogniser it does not
    run; the boxes are its own, and a call that recognises still cuts and reads the crops."""
    from rapidocr import RapidOCR

    from app.core.rapid.det_input import boxes_only

    image = _page()
    own, lean = RapidOCR(params=PARAMS), RapidOCR(params=PARAMS)
    boxes_only(lean)
    cuts = []
    cut = lean.crop_text_regions
    lean.crop_text_regions = lambda img, boxes: cuts.append(len(boxes)) or cut(img, boxes)
    want = own(image, use_det=True, use_cls=False, use_rec=False)
    got = lean(image, use_det=True, use_cls=False, use_rec=False)
    assert cuts and np.array_equal(np.asarray(got.boxes), np.asarray(want.boxes))
    assert own.crop_text_regions(image, want.boxes)  # RapidOCR's own cuts them
    assert cut(image, want.boxes) == []  # ours, for this call, does not
    read = lean(image, use_det=True, use_cls=False, use_rec=True)
    assert read.txts and len(read.txts) >= 0.8 * len(want.boxes)
