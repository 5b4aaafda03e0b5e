"""RapidOCR's lines read as nothing, kept. RapidOCR drops a detected line whose reading is empty — a line in a
script its recogniser has no letters for (Arabic, Korean) — so nothing after it would know the line was there.
`keep_empty(engine)` turns such a reading into UNREAD (U+FFFD) with its score (about 0), so the line reaches the
script router (app.core.scripts.router reads it again); a caller that does not route it drops it for its score.

    install(engine, mask)   # the script mask first (app.core.rapid.script_mask): it wraps the recogniser itself
    keep_empty(engine)

What must never live here: reading lines again, the router, layout.
"""
from __future__ import annotations

UNREAD = "\ufffd"


class _KeepEmpty:
    """A RapidOCR text recogniser whose empty readings come back as UNREAD."""

    def __init__(self, recogniser) -> None:
        self._recogniser = recogniser

    def __call__(self, *args, **kwargs):
        out = self._recogniser(*args, **kwargs)
        if out.txts is not None:
            out.txts = tuple(t if str(t).strip() else UNREAD for t in out.txts)
        return out

    def __getattr__(self, name):
        return getattr(self._recogniser, name)


def _aligned_word_boxes(engine):
    """RapidOCR's word boxes, one entry per line: its own drop a line with no word box (a kept empty line has
    none), and its score filter then reads past the end. A line without boxes gets one entry without a box."""

    def calc_word_boxes(imgs, dt_boxes, rec_res):
        rec_res = engine.cal_rec_boxes(imgs, dt_boxes, rec_res, engine.return_single_char_box)
        return tuple(tuple(w for w in line if w[2] is not None) or ((UNREAD, 0.0, None),)
                     for line in rec_res.word_results)

    return calc_word_boxes


def keep_empty(engine) -> bool:
    """Keep a RapidOCR instance's empty readings (now when its recogniser is loaded, else when it is first);
    False for a RapidOCR whose word boxes this cannot keep aligned (then its empty readings stay dropped)."""
    if not all(hasattr(engine, name) for name in ("cal_rec_boxes", "calc_word_boxes", "_load_rec_model")):
        return False
    engine.calc_word_boxes = _aligned_word_boxes(engine)
    load = engine._load_rec_model

    def load_kept():
        rec = load()
        if not isinstance(rec, _KeepEmpty):
            rec = engine.text_rec = _KeepEmpty(rec)
        return rec

    engine._load_rec_model = load_kept
    if engine.text_rec is not None:
        load_kept()
    return True
