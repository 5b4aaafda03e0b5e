"""Latin pages read as Latin: RapidOCR's PP-OCR recogniser is a Chinese+English model, and on Latin text it now and
then prefers a CJK class ("=" read as "二", ":" as "："). When the page being read is Latin, those classes are
masked in the recogniser's CTC posteriors (their probability set to 0) before the greedy CTC decode, so the best
non-CJK class wins (at a frame a CJK class had won, the best non-blank one: the character is there, only misread);
a CJK page is left alone.

Which script a page is in is judged from what the recogniser itself reads, unmasked: the Latin letters against the
CJK characters of the page so far (`reset()` starts a page) plus the batch at hand. Latin when the Latin letters
are at least LATIN_MIN and LATIN_RATIO times the CJK characters. Even on a Latin page, a line that reads as CJK text
of its own (two CJK characters or more, not outnumbered four to one by Latin letters) is left alone: only the stray
CJK class in a Latin line is a misreading.

    mask = ScriptMask()
    install(rapidocr_instance, mask)   # wraps its recogniser's ONNX session when the recogniser is loaded
    mask.reset()                       # at each new page

What must never live here: detection, layout, assembly.
"""
from __future__ import annotations

import threading

import numpy as np

LATIN_MIN = 3  # Latin letters before a page counts as Latin
LATIN_RATIO = 4.0  # Latin letters per CJK character at least

# CJK blocks: radicals, kana, CJK punctuation, Bopomofo, Hangul compatibility, CJK ideographs (+ ext. A),
# Hangul syllables, compatibility ideographs, half/full-width forms.
_CJK_RANGES = ((0x2E80, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7AF),
               (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF))


def is_cjk(ch: str) -> bool:
    if len(ch) != 1:
        return False
    o = ord(ch)
    return any(a <= o <= b for a, b in _CJK_RANGES)


def is_latin_letter(ch: str) -> bool:
    return len(ch) == 1 and ch.isalpha() and ord(ch) < 0x250


def count_scripts(text: str) -> tuple[int, int]:
    """(Latin letters, CJK characters) in `text`."""
    return sum(map(is_latin_letter, text)), sum(map(is_cjk, text))


class ScriptMask:
    """The page's script so far, and the mask applied to posteriors of shape (N, T, classes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.characters: list[str] = []
        self._cjk = np.zeros(0, dtype=np.int64)
        self.latin = 0
        self.cjk = 0
        self.masked_batches = 0

    def set_characters(self, characters: list[str]) -> None:
        """The recogniser's classes (index 0 = CTC blank)."""
        self.characters = list(characters)
        self._cjk = np.array([i for i, c in enumerate(self.characters) if is_cjk(c)], dtype=np.int64)

    def reset(self) -> None:
        with self._lock:
            self.latin = self.cjk = 0

    def _greedy_text(self, idx: np.ndarray) -> str:
        out = []
        for row in idx:
            prev = -1
            for k in row.tolist():
                if k != prev and 0 < k < len(self.characters):
                    out.append(self.characters[k])
                prev = k
            out.append("\n")
        return "".join(out)

    def is_latin(self, latin: int, cjk: int) -> bool:
        return latin >= LATIN_MIN and latin >= LATIN_RATIO * cjk

    def __call__(self, preds: np.ndarray) -> np.ndarray:
        if not self.characters or preds.ndim != 3 or preds.shape[2] != len(self.characters) or not self._cjk.size:
            return preds
        idx = preds.argmax(axis=2)
        rows = [count_scripts(self._greedy_text(row[None])) for row in idx]
        latin, cjk = sum(r[0] for r in rows), sum(r[1] for r in rows)
        with self._lock:
            self.latin += latin
            self.cjk += cjk
            latin_page = self.is_latin(self.latin, self.cjk)
        # a line that reads as CJK text of its own (two CJK characters or more, not outnumbered LATIN_RATIO to one by
        # Latin letters) is CJK even on a Latin page: an English table on a Chinese page must not mask the Chinese
        masked = [latin_page and c > 0 and not (c >= 2 and l < LATIN_RATIO * c) for l, c in rows]
        if not any(masked):
            return preds
        out = np.array(preds, copy=True)
        sel = np.array(masked)
        # where a CJK class won, the character is there but misread: the best Latin class takes it (not the blank,
        # which would drop it); elsewhere the CJK classes just lose their say
        won = np.isin(idx, self._cjk) & sel[:, None]
        part = out[sel]
        part[:, :, self._cjk] = 0.0
        out[sel] = part
        out[..., 0] = np.where(won, 0.0, out[..., 0])
        out[sel] /= np.maximum(out[sel].sum(axis=2, keepdims=True), 1e-12)  # the posterior given "not CJK"
        self.masked_batches += 1
        return out


class _MaskedSession:
    """The recogniser's inference session with the mask applied to what it returns."""

    def __init__(self, session, mask: ScriptMask) -> None:
        self._session = session
        self._mask = mask

    def __call__(self, *args, **kwargs):
        from app.core.base.stages import stage

        with stage("recogniser"):
            return self._mask(self._session(*args, **kwargs))

    def __getattr__(self, name):
        return getattr(self._session, name)


def _wrap(recogniser, mask: ScriptMask):
    if not isinstance(recogniser.session, _MaskedSession):
        mask.set_characters(recogniser.postprocess_op.character)
        recogniser.session = _MaskedSession(recogniser.session, mask)
    return recogniser


class _TimedDetector:
    """A RapidOCR instance's text detector, each call timed as the "detector" stage (app.core.base.stages)."""

    def __init__(self, detector) -> None:
        self._detector = detector

    def __call__(self, *args, **kwargs):
        from app.core.base.stages import stage

        with stage("detector"):
            return self._detector(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._detector, name)


def time_detector(engine) -> None:
    """Time a RapidOCR instance's detector calls as the page's "detector" stage (now, or when it is first loaded)."""
    load = engine._load_det_model

    def load_timed():
        det = load()
        if not isinstance(det, _TimedDetector):
            det = engine.text_det = _TimedDetector(det)
        return det

    engine._load_det_model = load_timed
    if engine.text_det is not None:
        load_timed()


def install(engine, mask: ScriptMask) -> ScriptMask:
    """Apply `mask` to a RapidOCR instance's recogniser, now when it is loaded, else when it is first loaded."""
    if engine.text_rec is not None:
        _wrap(engine.text_rec, mask)
        return mask
    load = engine._load_rec_model

    def load_masked():
        return _wrap(load(), mask)

    engine._load_rec_model = load_masked
    return mask
