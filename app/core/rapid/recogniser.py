"""RapidOCR's pretrained PP-OCRv6 line recogniser (ONNX, shipped in the `rapidocr` wheel, Apache-2.0): the image
side of the built-in model.

`Recogniser.read(images)` runs the recogniser on line crops and returns one `Reading` per line: the greedy CTC
collapse of its per-column posteriors (merge repeats, drop blank) as characters, each with its confidence (the
highest top-1 probability within its run of columns) and the best alternative character seen in that run with its
probability. The built-in decoder reads these as a discrete prefix (`prefix_tokens`), embedded with the same table
as the text it writes, so it only has to learn to copy, correct and draft, not to align pixels with characters.

Preprocessing follows RapidOCR's `TextRecognizer.resize_norm_img`: BGR, height 48, width ceil(48·w/h), a canvas of
width 48·max(320/48, w/h) (the widest line of the batch) zero-padded, pixels (x/255 − 0.5)/0.5.

With `mask` (an app.core.rapid.script_mask.ScriptMask, as the built-in engine passes) the recogniser's CJK classes
are masked in the posteriors once the page reads as Latin, exactly as in the classic engine; training features are
read unmasked.

With `stretch` (the built-in engine and its training features) a crop's grey levels are stretched so its darkest
and lightest percent become black and white before the resize (`stretch_contrast`): grey paper and washed-out
scans reach the recogniser with the contrast it was trained on. Measured on the held-out prints made poor
(`heldout_pdf make --poor`: grey paper, blur, noise), read through `convert --engine builtin`: CER 4.14 % → 3.93 %
at 75 DPI, 37.2 % → 34.6 % at 60 DPI; on single rendered line crops it is level within the noise of three held-out
sets (−2 % to +5 %).

The model is read with its MatMuls in 8-bit integers where that copy can be made (int8.py:
`SCRIPTORIUM_RECOGNISER=fp32` reads the wheel's float model as it is); a `path` given is read as it is.

numpy + onnxruntime only (no torch): feature-extraction workers start fast.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from app.core.rapid import int8

REC_MODEL = "PP-OCRv6_rec_small.onnx"
REC_HEIGHT = 48
MIN_RATIO = 320 / 48
MAX_RATIO = 80.0  # lines wider than 80× their height are squeezed (3840 px at height 48)
CONF_EDGES = (0.5, 0.8, 0.95)  # top-1 probability bins: < 0.5, < 0.8, < 0.95, >= 0.95
ALT_EDGES = (0.02, 0.1, 0.3)  # alternative probability bins: no alternative below 0.02; < 0.1, < 0.3, >= 0.3
STRETCH_PERCENT = 1.0  # the share of pixels at each end that become black and white
MIN_SPREAD = 10  # a crop flatter than this (grey levels) is blank: left as it is
LICENSE_NOTE = ("PP-OCRv6_rec_small.onnx: PaddleOCR's PP-OCRv6 text recognition model (Apache-2.0), as converted "
                "and shipped in the `rapidocr` wheel (Apache-2.0)")


def model_path() -> Path:
    """The recogniser's ONNX file inside the installed rapidocr package."""
    try:
        import rapidocr
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise FileNotFoundError(f"the built-in model needs the rapidocr package (`pip install rapidocr`): {exc}")
    path = Path(rapidocr.__file__).parent / "models" / REC_MODEL
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: reinstall rapidocr (its wheel ships {REC_MODEL})")
    return path


_DICTIONARY: list[str] | None = None


def dictionary() -> list[str]:
    """The recogniser's characters (its CTC classes without the blank: the ONNX file's dictionary, then space)."""
    global _DICTIONARY
    if _DICTIONARY is None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        session = ort.InferenceSession(str(model_path()), opts, providers=["CPUExecutionProvider"])
        _DICTIONARY = [*session.get_modelmeta().custom_metadata_map["character"].splitlines(), " "]
    return list(_DICTIONARY)


@lru_cache(maxsize=1)
def characters() -> frozenset[str]:
    """Every character the recogniser can write (its dictionary; space included), as a set."""
    return frozenset(dictionary())


def can_read(text: str, share: float = 0.9) -> bool:
    """Could the recogniser write `text`: are at least `share` of its visible characters in its dictionary? (PP-OCRv6
    has no Hangul, no Cyrillic and few Greek capitals: a Korean or Russian line cannot be checked or read by it.)"""
    visible = [c for c in text if not c.isspace()]
    if not visible:
        return True
    known = characters()
    return sum(1 for c in visible if c in known) >= share * len(visible)


@dataclass
class Reading:
    """The recogniser's greedy reading of one line, one entry per collapsed CTC segment."""

    chars: list[str] = field(default_factory=list)
    conf: list[float] = field(default_factory=list)  # top-1 probability (max over the segment's columns)
    alts: list[str] = field(default_factory=list)  # best other non-blank class in the segment ("" = none)
    alt_p: list[float] = field(default_factory=list)
    alts2: list[str] = field(default_factory=list)  # the second-best other class ("" = none), when read with it
    alt_p2: list[float] = field(default_factory=list)
    cols: list[tuple[int, int]] = field(default_factory=list)  # each segment's CTC columns [a, z) (not serialised)
    # another recogniser's reading of a line this one could not read (app.core.scripts.router.Routed), when the
    # page's one pass routed it (not serialised)
    routed: object = None

    @property
    def text(self) -> str:
        return "".join(self.chars)

    def copy(self) -> "Reading":
        """A copy whose lists can be changed apart from this one's (what `copy.deepcopy` makes: the entries are
        strings, numbers and tuples), at a fraction of its cost (a scanned page copies every line's reading)."""
        import copy
        from dataclasses import fields

        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return Reading(**{k: list(v) if isinstance(v, list) else copy.deepcopy(v) for k, v in values.items()})

    def word_boxes(self, box: Sequence[float], crop_size: tuple[int, int]) -> list[list]:
        """The reading's words placed by the CTC columns their characters were read in: [x0, y0, x1, y1, word,
        conf] in the coordinates of `box` (the line's box, whose crop of `crop_size` (w, h) was read; each column
        covers 8 pixels of the crop resized to height 48), conf the word's least sure character. [] for a vertical
        piece (read rotated) or a reading without columns."""
        w, h = crop_size
        bx0, by0, bx1, by1 = (float(v) for v in box)
        if len(self.cols) != len(self.chars) or w < 1 or h < 1 or by1 - by0 > 1.5 * (bx1 - bx0):
            return []
        resized = max(1, min(math.ceil(REC_HEIGHT * w / h), int(REC_HEIGHT * MAX_RATIO)))
        x = lambda col: round(bx0 + min(1.0, 8.0 * col / resized) * (bx1 - bx0), 1)  # noqa: E731
        words, cur = [], []
        for ch, p, (a, z) in [*zip(self.chars, self.conf, self.cols), (" ", 1.0, (0, 0))]:
            if ch.strip():
                cur.append((ch, p, a, z))
            elif cur:
                words.append([x(cur[0][2]), round(by0, 1), x(cur[-1][3]), round(by1, 1), "".join(c[0] for c in cur),
                              round(min(c[1] for c in cur), 4)])
                cur = []
        return words

    def to_json(self) -> list:
        if len(self.alts2) == len(self.chars):
            return [[c, round(p, 4), a, round(q, 4), a2, round(q2, 4)] for c, p, a, q, a2, q2 in
                    zip(self.chars, self.conf, self.alts, self.alt_p, self.alts2, self.alt_p2)]
        return [[c, round(p, 4), a, round(q, 4)] for c, p, a, q in zip(self.chars, self.conf, self.alts, self.alt_p)]

    @classmethod
    def from_json(cls, rows: list) -> "Reading":
        r = cls()
        for c, p, a, q, *more in rows:
            r.chars.append(c)
            r.conf.append(float(p))
            r.alts.append(a)
            r.alt_p.append(float(q))
            if more:
                r.alts2.append(more[0])
                r.alt_p2.append(float(more[1]))
        return r


def to_bgr(image) -> np.ndarray:
    """uint8 (h, w, 3) BGR from a PIL image or a grey / RGB array."""
    if not isinstance(image, np.ndarray):
        image = np.asarray(image.convert("RGB"))
        return np.ascontiguousarray(image[..., ::-1])
    if image.ndim == 2:
        return np.repeat(image[..., None], 3, axis=2)
    return np.ascontiguousarray(image[..., :3][..., ::-1])


def stretch_contrast(image: np.ndarray) -> np.ndarray:
    """`image` (uint8, grey or BGR) with its grey levels mapped linearly so that its darkest and lightest
    STRETCH_PERCENT become 0 and 255 (all channels alike, so colours keep their order); unchanged when it already
    spans the range or is flat (a blank crop gains no noise)."""
    lo, hi = percentiles(image, (STRETCH_PERCENT, 100.0 - STRETCH_PERCENT))
    if hi - lo < MIN_SPREAD or (lo <= 2 and hi >= 253):
        return image
    out = (image.astype(np.float32) - float(lo)) * (255.0 / float(hi - lo))
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def percentiles(image: np.ndarray, qs: Sequence[float]) -> list[float]:
    """`np.percentile(image, qs)` (its default, linear interpolation between the two nearest values) of a uint8
    array, the same numbers from its histogram: a sort of every pixel of a line crop cost more than its
    recognition's share of columns (about 1 ms a line)."""
    if image.dtype != np.uint8 or not image.size:
        return [float(v) for v in np.percentile(image, qs)]
    flat = image.ravel()
    n = flat.size
    below = np.cumsum(np.bincount(flat, minlength=256))  # pixels at or under each level
    out = []
    for q in qs:
        at = (n - 1) * (q / 100.0)  # numpy's virtual index for "linear"
        k = int(math.floor(at))
        t = at - k
        a = float(np.searchsorted(below, k, side="right"))  # the k-th smallest value
        b = float(np.searchsorted(below, min(k + 1, n - 1), side="right"))
        # numpy's lerp, which works from the nearer end
        out.append(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)
    return out


def normalise(images: Sequence[np.ndarray]) -> np.ndarray:
    """(n, 3, 48, W) float32 batch from BGR uint8 crops, RapidOCR's resize + normalisation + zero padding."""
    import cv2

    ratios = [img.shape[1] / max(1, img.shape[0]) for img in images]
    W = int(REC_HEIGHT * min(MAX_RATIO, max(MIN_RATIO, max(ratios))))
    out = np.zeros((len(images), 3, REC_HEIGHT, W), dtype=np.float32)
    for i, (img, r) in enumerate(zip(images, ratios)):
        w = min(W, int(math.ceil(REC_HEIGHT * r)))
        w = max(1, w)
        resized = cv2.resize(img, (w, REC_HEIGHT)).astype(np.float32)
        out[i, :, :, :w] = ((resized / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)
    return out


class Recogniser:
    """The ONNX recogniser with its character table; `threads` intra-op threads (ORT)."""

    def __init__(self, threads: int | None = None, path: str | os.PathLike | None = None, batch: int = 8,
                 mask=None, stretch: bool = False):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads or min(2, os.cpu_count() or 1))
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # no ORT arena: it grows to the widest batch of lines ever read and never shrinks (about 400 MB after a
        # few pages); freed tensors go back to malloc, which the pipeline trims once a page (app.core.base.heap)
        opts.enable_cpu_mem_arena = False
        self.path = Path(path) if path else model_path()
        providers = ["CPUExecutionProvider"]
        # the wheel's model with its MatMuls in int8 (int8.py), where the copy can be made; else as it is
        made = int8.int8_session(self.path, opts, providers) if path is None and int8.wanted() else None
        if made is not None:
            self.path, self.session = made
        else:
            self.session = ort.InferenceSession(str(self.path), opts, providers=providers)
        table = self.session.get_modelmeta().custom_metadata_map["character"].splitlines()
        self.characters = ["<blank>", *table, " "]  # blank 0, the dictionary, space last (RapidOCR's CTC labels)
        self.input_name = self.session.get_inputs()[0].name
        self.batch = batch
        self.mask = mask  # a ScriptMask over these classes, or None
        self.stretch = stretch  # stretch each crop's contrast first (stretch_contrast)
        if mask is not None:
            mask.set_characters(self.characters)

    def posteriors(self, images: Sequence) -> list[np.ndarray]:
        """(columns, classes) softmax posteriors per line crop (PIL images or arrays), batched by width."""
        crops = [to_bgr(im) for im in images]
        if self.stretch:
            crops = [stretch_contrast(c) for c in crops]
        order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / max(1, crops[i].shape[0]))
        out: list[np.ndarray | None] = [None] * len(crops)
        for s in range(0, len(order), self.batch):
            idx = order[s:s + self.batch]
            batch = normalise([crops[i] for i in idx])
            probs = self.session.run(None, {self.input_name: batch})[0]
            if self.mask is not None:
                probs = self.mask(probs)
            for j, i in enumerate(idx):
                # the padded tail of a narrower line reads as blank; keep the columns its own width covers (+1)
                ratio = crops[i].shape[1] / max(1, crops[i].shape[0])
                cols = min(probs.shape[1], int(math.ceil(REC_HEIGHT * min(MAX_RATIO, ratio) / 8)) + 1)
                out[i] = probs[j, :cols]
        return out  # type: ignore[return-value]

    def decode(self, probs: np.ndarray) -> Reading:
        return collapse(probs, self.characters)

    def read(self, images: Sequence) -> list[Reading]:
        from app.core.base.stages import stage

        with stage("recogniser"):
            return [self.decode(p) for p in self.posteriors(images)]


def collapse(probs: np.ndarray, characters: Sequence[str]) -> Reading:
    """Greedy CTC collapse with per-segment confidence and the two best alternatives.

    A segment is a run of columns whose top class is one and the same non-blank class. Its alternatives are found by
    two arg-maxima over all segments at once (their column-wise maxima stacked), not by a partition of the whole
    character table (about 18,000 classes) per segment, which took a tenth of a scanned page's time."""
    reading = Reading()
    if probs.size == 0:
        return reading
    n = len(probs)
    best = probs.argmax(axis=1)  # (the top class per column: a full sort of the classes is not needed)
    # runs of one top class; the non-blank runs are the segments
    starts = np.flatnonzero(np.r_[True, best[1:] != best[:-1]])
    keep = best[starts] > 0
    if not keep.any():
        return reading
    a_s, z_s, cls = starts[keep], np.r_[starts[1:], n][keep], best[starts][keep]
    # (segments, classes): each class at its best column of the segment (numpy's reduceat is slow along this axis)
    seg = np.stack([probs[a] if z - a == 1 else probs[a:z].max(axis=0) for a, z in zip(a_s.tolist(), z_s.tolist())])
    rows = np.arange(len(seg))
    conf = seg[rows, cls].copy()
    seg[:, 0] = 0.0
    seg[rows, cls] = 0.0
    alts = []
    for _ in range(2):  # the best, then the second-best class other than blank and the segment's own
        k = seg.argmax(axis=1)
        alts.append((k, seg[rows, k].copy()))
        seg[rows, k] = 0.0
    for s in range(len(seg)):
        c = int(cls[s])
        reading.chars.append(characters[c] if c < len(characters) else "")
        reading.cols.append((int(a_s[s]), int(z_s[s])))
        reading.conf.append(float(conf[s]))
        for (k, q), out, out_p in zip(alts, (reading.alts, reading.alts2), (reading.alt_p, reading.alt_p2)):
            kk, qq = int(k[s]), float(q[s])
            out.append(characters[kk] if qq >= ALT_EDGES[0] and kk < len(characters) else "")
            out_p.append(qq if qq >= ALT_EDGES[0] else 0.0)
    return reading


def conf_bin(p: float) -> int:
    return int(np.searchsorted(CONF_EDGES, p, side="right"))


def alt_bin(q: float) -> int:
    """0 = no alternative, 1..3 by probability."""
    return int(np.searchsorted(ALT_EDGES, q, side="right"))
