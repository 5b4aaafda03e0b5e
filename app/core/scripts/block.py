"""A region read whole by Tesseract, its words given to the detector's lines (the router's block read).

Why: on a page in a script the bundled recogniser does not read, reading each detector line alone loses lines —
the detector splits Thai and Devanagari lines oddly (a line in three pieces, a mark apart), its loose boxes take
in halves of their neighbours, and a short piece gives Tesseract little to go on. Tesseract reading the whole
area finds its own lines and words (its page segmentation); each of its words then goes to the detector line
whose box holds the word's centre (the nearest, where loose boxes overlap), so the page's lines, boxes and
reading order stay the detector's and the layout's.

What must never live here: choosing the script or the language (router.py), Tesseract calls (tesseract.py).
"""
from __future__ import annotations

from statistics import median
from typing import Any, Sequence

from app.core.scripts.tesseract import TessLine, joined

MIN_LINES = 3  # a region with at least this many lines to route is read whole (fewer: line by line)
MARGIN = 0.5  # the area read: the lines' boxes together, widened by this share of their median height
SIDE = 0.3  # a word's centre this far (share of the line's height) beyond a box's ends still belongs to it


def owner(word: Sequence[float], boxes: Sequence[Sequence[float]]) -> int | None:
    """The line box (index) holding `word`'s centre, the one whose middle is nearest where several do."""
    cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
    found = [k for k, b in enumerate(boxes)
             if b[1] <= cy <= b[3] and b[0] - SIDE * (b[3] - b[1]) <= cx <= b[2] + SIDE * (b[3] - b[1])]
    return min(found, key=lambda k: abs((boxes[k][1] + boxes[k][3]) / 2 - cy)) if found else None


def area(boxes: Sequence[Sequence[float]], width: int, height: int) -> tuple[int, int, int, int]:
    """The part of the image (x0, y0, x1, y1) that holds `boxes`, with a margin."""
    pad = MARGIN * median(b[3] - b[1] for b in boxes)
    return (max(0, int(min(b[0] for b in boxes) - pad)), max(0, int(min(b[1] for b in boxes) - pad)),
            min(width, int(max(b[2] for b in boxes) + pad)), min(height, int(max(b[3] for b in boxes) + pad)))


def block_readings(tess, image, lang: str, boxes: Sequence[Sequence[float]], targets: Sequence[int], *,
                   rtl: bool = False) -> dict[int, TessLine]:
    """Per target line (an index into `boxes`, every line of the region in `image` pixels): what Tesseract's
    read of the area holding the targets gives it (words in `image` pixels). A target no word falls in is left
    out; so is a word whose centre no target's box holds (it belongs to another line, or to none)."""
    if not targets:
        return {}
    x0, y0, x1, y1 = area([boxes[i] for i in targets], image.width, image.height)
    found = tess.read_block(image.crop((x0, y0, x1, y1)), lang)
    wanted = set(targets)
    parts: dict[int, dict[int, list[list[Any]]]] = {}  # target -> Tesseract line -> its words there
    for n, line in enumerate(found):
        for w in line.words:
            word = [w[0] + x0, w[1] + y0, w[2] + x0, w[3] + y0, *w[4:]]
            k = owner(word, boxes)
            if k in wanted:
                parts.setdefault(k, {}).setdefault(n, []).append(word)
    out = {}
    for k, by_line in parts.items():
        pieces = []
        for n, words in by_line.items():
            whole = len(words) == len(found[n].words)
            text = found[n].text if whole else joined(words, lang, found[n].box[3] - found[n].box[1])
            pieces.append((words, text))
        # pieces of several Tesseract lines in one detector line: in reading order along the line
        pieces.sort(key=lambda p: -max(w[2] for w in p[0]) if rtl else min(w[0] for w in p[0]))
        words = [w for p in pieces for w in p[0]]
        text = " ".join(p[1] for p in pieces if p[1])
        out[k] = TessLine(text, round(sum(w[5] for w in words) / len(words), 4), lang, words, tuple(boxes[k][:4]))
    return out
