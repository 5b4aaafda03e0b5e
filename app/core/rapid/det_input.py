"""RapidOCR's detector input made in float32. Its preprocessing (`DetPreProcess.normalize`) scales the resized page
with float64 mean and std arrays, so numpy computes the whole image in float64 and casts it back to float32
afterwards. On a 1600-px page that took 0.05-0.36 s, up to a third of the detection itself. `fast_input(engine)`
has the engine's detector build the same input directly in float32: (x / 255 − mean) / std per channel, then
channels first. The network sees the same values (the rounding of float32 arithmetic aside; the real set's pages
read byte for byte the same).

    fast_input(engine)   # now when its detector is loaded, else when it is first

`boxes_only(engine)`: a call that asks for detection only (no classifier, no recogniser) no longer cuts and
straightens a crop of every box found (RapidOCR cuts them for the recogniser it was told not to run: 1-2 ms a
line, 0.3 s over the real set's 26 scans).

What must never live here: detection itself, its post-processing, anything of the recogniser.
"""
from __future__ import annotations

import numpy as np


def _normalised(prep, image: np.ndarray) -> np.ndarray | None:
    """`prep`'s (a RapidOCR DetPreProcess) input for `image`: resized as it resizes, normalised in float32."""
    resized = prep.resize(image)
    if resized is None:
        return None
    mean = np.asarray(prep.mean, dtype=np.float32).reshape(1, 1, -1)
    std = np.asarray(prep.std, dtype=np.float32).reshape(1, 1, -1)
    x = resized.astype(np.float32)
    x *= np.float32(prep.scale) / std
    x -= mean / std
    return np.ascontiguousarray(x.transpose(2, 0, 1))[None]


class _Float32Input:
    """A DetPreProcess whose call makes its input in float32 (everything else is the wrapped one's)."""

    def __init__(self, prep) -> None:
        self._prep = prep

    def __call__(self, image: np.ndarray) -> np.ndarray | None:
        return _normalised(self._prep, image)

    def __getattr__(self, name):
        return getattr(self._prep, name)


def fast_input(engine) -> bool:
    """Have a RapidOCR instance's detector make its input in float32; False for a RapidOCR whose detector this
    does not know (it then keeps its own preprocessing)."""
    if not hasattr(engine, "_load_det_model"):
        return False
    load = engine._load_det_model

    def load_fast():
        det = load()
        make = getattr(det, "get_preprocess", None)
        if make is not None and not getattr(make, "float32", False):
            def get_preprocess():
                prep = make()
                ok = all(hasattr(prep, name) for name in ("resize", "mean", "std", "scale"))
                return _Float32Input(prep) if ok else prep

            get_preprocess.float32 = True
            det.get_preprocess = get_preprocess
        return det

    engine._load_det_model = load_fast
    if getattr(engine, "text_det", None) is not None:
        load_fast()
    return True


def boxes_only(engine) -> None:
    """Have a RapidOCR instance cut no line crops on a call that neither classifies nor recognises them (its boxes
    are what it gives back then); any other call cuts them as before."""
    cut = getattr(engine, "crop_text_regions", None)
    if cut is None:
        return

    def crop_text_regions(image, boxes):
        if getattr(engine, "use_cls", True) or getattr(engine, "use_rec", True):
            return cut(image, boxes)
        return []

    engine.crop_text_regions = crop_text_regions
