"""OCR text vs the PDF's own text layer: the character error rate (CER) per block and per page.

    ref = reference_text(words, box_pt)        # the text-layer words inside a block, in reading order
    cer(ocr_text, ref)                          # Levenshtein distance / len(ref), after normalisation
    page_cer(pairs)                             # Σ distances / Σ reference lengths over the page's blocks

Both sides are normalised before comparing, so markup is not counted as an error: HTML tags, Markdown heading
and list markers, `$$` delimiters and `\\tag{}` are removed, and whitespace is collapsed to single spaces. A word
belongs to a block when at least half of its box lies inside the block. Edit distance: rapidfuzz (C++).
CER is None when there is nothing to compare against (no text layer words in the block).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from app.core.document import TextWord

_TAGS = re.compile(r"<[^>]+>")
_MD_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+)", re.M)
_TAG_CMD = re.compile(r"\\tag\{[^}]*\}")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    t = _TAGS.sub(" ", text or "")
    t = html.unescape(t)
    t = _TAG_CMD.sub(" ", t)
    t = t.replace("$$", " ")
    t = _MD_PREFIX.sub("", t)
    return _SPACES.sub(" ", t).strip()


def inside_fraction(word_box, box) -> float:
    x0, y0, x1, y1 = word_box
    w = max(0.0, min(x1, box[2]) - max(x0, box[0]))
    h = max(0.0, min(y1, box[3]) - max(y0, box[1]))
    a = max(1e-9, (x1 - x0) * (y1 - y0))
    return w * h / a


def words_in_box(words: Iterable[TextWord], box_pt, min_inside: float = 0.5) -> list[TextWord]:
    return [w for w in words if inside_fraction(w.box_pt, box_pt) >= min_inside]


def reference_text(words: Iterable[TextWord], box_pt, min_inside: float = 0.5) -> str:
    """Text-layer words inside `box_pt`, in the text layer's (block, line, word) order, lines joined by newlines."""
    picked = sorted(words_in_box(words, box_pt, min_inside), key=lambda w: (w.block, w.line, w.word))
    lines: list[list[str]] = []
    last = None
    for w in picked:
        key = (w.block, w.line)
        if key != last:
            lines.append([])
            last = key
        lines[-1].append(w.text)
    return "\n".join(" ".join(line) for line in lines)


def distance(ocr: str, ref: str) -> int:
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(normalise(ocr), normalise(ref)))


def cer(ocr: str, ref: str) -> float | None:
    """Character error rate of `ocr` against `ref` (0 = identical; can exceed 1); None when ref is empty."""
    r = normalise(ref)
    if not r:
        return None
    return distance(ocr, ref) / len(r)


@dataclass
class BlockComparison:
    region_id: str
    reference: str
    distance: int
    ref_chars: int

    @property
    def cer(self) -> float | None:
        return self.distance / self.ref_chars if self.ref_chars else None


def compare_block(region_id: str, ocr: str, words: Sequence[TextWord], box_pt) -> BlockComparison | None:
    ref = reference_text(words, box_pt)
    n = len(normalise(ref))
    if n == 0:
        return None
    return BlockComparison(region_id, ref, distance(ocr, ref), n)


def page_cer(blocks: Iterable[BlockComparison | None]) -> float | None:
    blocks = [b for b in blocks if b is not None]
    total = sum(b.ref_chars for b in blocks)
    if not total:
        return None
    return sum(b.distance for b in blocks) / total
