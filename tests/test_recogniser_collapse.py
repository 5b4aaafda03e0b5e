"""The recogniser's CTC collapse (app.core.rapid.recogniser.collapse) against the plain per-segment reading of its
definition, on many random posteriors shaped like the recogniser's: mostly blank columns, runs of one class,
a few strong alternatives."""
from __future__ import annotations

import numpy as np
import pytest

from app.core.rapid.recogniser import ALT_EDGES, Reading, collapse


def plain_collapse(probs: np.ndarray, characters: list[str]) -> Reading:
    """Merge repeats, drop blank; per segment its best top-1 probability and the two best other non-blank classes
    at their best column within it (none below ALT_EDGES[0])."""
    reading = Reading()
    best = probs.argmax(axis=1)
    t = 0
    while t < len(best):
        c = int(best[t])
        z = t + 1
        while z < len(best) and best[z] == c:
            z += 1
        if c > 0:
            seg = probs[t:z].max(axis=0)
            reading.chars.append(characters[c])
            reading.cols.append((t, z))
            reading.conf.append(float(seg[c]))
            others = [*sorted((float(seg[k]), k) for k in range(1, len(seg)) if k != c)[::-1], (0.0, 0), (0.0, 0)][:2]
            for (q, k), alts, alt_p in zip(others, (reading.alts, reading.alts2), (reading.alt_p, reading.alt_p2)):
                alts.append(characters[k] if q >= ALT_EDGES[0] else "")
                alt_p.append(q if q >= ALT_EDGES[0] else 0.0)
        t = z
    return reading


def ctc_like(rng: np.random.Generator, columns: int, classes: int) -> np.ndarray:
    """Posteriors whose top class runs over a few columns at a time, blank most often, with random rivals."""
    logits = rng.normal(0.0, 1.0, (columns, classes)).astype(np.float32)
    t = 0
    while t < columns:
        run = int(rng.integers(1, 4))
        top = 0 if rng.random() < 0.5 else int(rng.integers(1, classes))
        logits[t:t + run, top] += rng.uniform(2.0, 9.0)
        rivals = rng.integers(1, classes, size=2)
        logits[t:t + run, rivals] += rng.uniform(0.0, 6.0, size=2)  # alternatives near and far from ALT_EDGES[0]
        t += run
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("seed", range(40))
def test_the_collapse_agrees_with_its_plain_definition_on_random_posteriors(seed):
    rng = np.random.default_rng(seed)
    classes = int(rng.integers(3, 60))
    characters = ["<blank>", *(chr(0x41 + i) for i in range(classes - 2)), " "]
    probs = ctc_like(rng, int(rng.integers(1, 80)), classes)
    got, want = collapse(probs, characters), plain_collapse(probs, characters)
    assert (got.chars, got.cols, got.alts, got.alts2) == (want.chars, want.cols, want.alts, want.alts2)
    assert np.allclose(got.conf, want.conf) and np.allclose(got.alt_p, want.alt_p)
    assert np.allclose(got.alt_p2, want.alt_p2)


def test_all_blank_and_empty_posteriors_read_as_nothing():
    characters = ["<blank>", "a", " "]
    blank = np.tile(np.array([[0.9, 0.05, 0.05]], dtype=np.float32), (6, 1))
    assert collapse(blank, characters).text == ""
    assert collapse(np.zeros((0, 3), dtype=np.float32), characters).text == ""


def test_a_readings_copy_is_its_deep_copy_and_apart_from_it():
    """`Reading.copy` (what the engine settles in place while the page keeps its own) equals a deep copy, with
    and without another recogniser's reading, and changing the copy leaves the original as it was."""
    import copy

    from app.core.scripts.router import Routed

    rng = np.random.default_rng(3)
    characters = ["<blank>", *"abcdef", " "]
    probs = rng.dirichlet(np.full(len(characters), 0.3), size=40).astype(np.float32)
    for routed in (None, Routed("привет", 0.9, "tesseract:rus", "cyrillic", [[0, 0, 9, 9, "привет", 0.9]])):
        reading = collapse(probs, characters)
        reading.routed = routed
        assert reading.chars
        copied = reading.copy()
        assert copied == copy.deepcopy(reading)
        copied.chars[0], copied.conf[0] = "#", -1.0
        copied.cols.append((99, 100))
        if routed is not None:
            copied.routed.words[0][4] = "changed"
        assert reading.chars[0] != "#" and reading.conf[0] != -1.0 and (99, 100) not in reading.cols
        assert routed is None or reading.routed.words[0][4] == "привет"


def test_percentiles_from_the_histogram_are_numpys_own():
    """The crop's contrast stretch takes its 1st and 99th percentiles from a histogram: the very numbers
    `np.percentile` gives, on real line crops of a scan and on random and posterised ones of every shape."""
    from pathlib import Path

    from PIL import Image

    from app.core.rapid.recogniser import percentiles

    page = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s06-eurotext.png"
    rgb = np.asarray(Image.open(page).convert("RGB"))
    rng = np.random.default_rng(5)
    crops = [rgb[y:y + h, x:x + w] for y, x, h, w in zip(rng.integers(0, rgb.shape[0] - 60, 60),
                                                        rng.integers(0, rgb.shape[1] - 700, 60),
                                                        rng.integers(1, 60, 60), rng.integers(1, 700, 60))]
    for k in range(400):
        shape = (int(rng.integers(1, 60)), int(rng.integers(1, 500)), *((3,) if k % 2 else ()))
        crop = rng.integers(0, 256, size=shape, dtype=np.uint8)
        crops.append(crop // 50 * 50 if k % 3 == 0 else crop)
    for crop in crops:
        for qs in ((1.0, 99.0), (0.0, 50.0, 100.0), (12.5, 87.5)):
            assert percentiles(crop, qs) == [float(v) for v in np.percentile(crop, qs)]
