"""The one geometry model of a block's text on its page: `Line`s with `Word`s, boxes in page points (top-left
origin), each marked `measured` (found on the page: an engine's line detector, RapidOCR's word boxes, the PDF's
text layer) or estimated (placed by us: a line split into words in proportion to their length, a region with no
known lines cut into equal bands). The searchable PDF, ALTO, hOCR and the Docling JSON all place text from here.

Where the lines come from, best first:
- the engine's own lines (`stats["line_boxes"]`, crop pixels, mapped to points by `stats["crop"]`: the built-in
  engine and the classic one; the classic engine also records each line's word boxes, `line_stats[i]["words"]`);
- the classic layout's OCR lines reused as the block's reading (`extra["ocr_lines"]`, points);
- the PDF's text layer for a block taken from it (its words, given by the caller);
- for an engine that reports only a region's text, the lines a line finder sees in the region's crop (given by the
  caller: app.core.pipeline.found_lines), the words spread over them (estimated);
- otherwise one band of the region per line of the block's text (estimated).
A person's edit keeps the measured line boxes but spreads its words over them (their word boxes then estimated).

What must never live here: reading pages, writing files, Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from app.core.document.regions import Region
from app.core.text.textcheck import right_to_left
from app.core.text.textlayer import normalise

Box = tuple[float, float, float, float]


@dataclass
class Word:
    box: Box
    text: str
    conf: float | None = None  # 0..1 where the engine reported it
    measured: bool = False


@dataclass
class Line:
    box: Box
    text: str
    words: list[Word] = field(default_factory=list)  # in logical (reading) order, right to left ones too
    measured: bool = False

    @property
    def rtl(self) -> bool:
        """Is the line written right to left (most of its letters Arabic or Hebrew)? Its text and words stay
        in logical order; only their boxes run from the right."""
        return right_to_left(self.text)


def line_boxes_pt(region: Region) -> list[tuple[Box, str | None]]:
    """The lines the engine found in `region`, in points, each with the text it read there (None: not recorded);
    empty when it recorded none."""
    return [(b, t) for b, t, _ in _measured_lines(region)]


def _measured_lines(region: Region) -> list[tuple[Box, str | None, list[Word]]]:
    stats = region.extra.get("stats") or {}
    boxes, crop = stats.get("line_boxes"), stats.get("crop")
    if boxes and crop:
        s = float(crop["dpi"]) / 72.0
        ox, oy = crop["origin"]

        def pt(b) -> Box:
            return ((ox + b[0]) / s, (oy + b[1]) / s, (ox + b[2]) / s, (oy + b[3]) / s)

        per_line = stats.get("line_stats") or []
        if len(per_line) != len(boxes):
            per_line = [{}] * len(boxes)
        out = []
        for b, st in zip(boxes, per_line):
            words = [Word(pt(w[:4]), str(w[4]), _conf(w[5] if len(w) > 5 else None), True)
                     for w in st.get("words") or ()]
            out.append((pt(b), st.get("text"), words))
        return out
    if stats.get("reused_layout_ocr") and region.extra.get("ocr_lines"):
        return [(tuple(float(v) for v in line[:4]), str(line[4]), []) for line in region.extra["ocr_lines"]]
    return []


def _conf(v) -> float | None:
    try:
        return None if v is None else max(0.0, min(1.0, float(v)))
    except (TypeError, ValueError):
        return None


def lines_inside(region: Region) -> list[tuple[Box, str | None]]:
    """`line_boxes_pt`, when every line's middle lies in the region's box as it is now (a box a person moved or
    resized after the reading keeps its text, which then goes into bands of the new box)."""
    lines = line_boxes_pt(region)
    return lines if _all_inside(region.box_pt, [b for b, _ in lines]) else []


def _all_inside(box: Sequence[float], boxes: Sequence[Box]) -> bool:
    x0, y0, x1, y1 = box
    return all(x0 <= (b[0] + b[2]) / 2 <= x1 and y0 <= (b[1] + b[3]) / 2 <= y1 for b in boxes)


def assign_lines(lines: list[str], line_boxes: Sequence[tuple[Sequence[float], str | None]]) -> list[str]:
    """The text to place over each line box: the block's lines one to a box when they are as many; else the block's
    words, each box taking as many as its line read (the same words: an unedited block), or a share of them in
    proportion to what it read (its width when unknown)."""
    if len(lines) == len(line_boxes):
        return list(lines)
    words = " ".join(lines).split()
    read = [normalise(t).split() if t else None for _, t in line_boxes]
    if all(r is not None for r in read) and [w for r in read for w in r] == words:
        counts = [len(r) for r in read]
    else:
        weights = [len(" ".join(r)) if r is not None else (b[2] - b[0]) for r, (b, _) in zip(read, line_boxes)]
        counts = char_shares(words, weights)
    out, k = [], 0
    for n in counts:
        out.append(" ".join(words[k:k + n]))
        k += n
    return out


def shares(n: int, weights: Sequence[float]) -> list[int]:
    """`n` items cut into consecutive runs in proportion to `weights` (every item given out)."""
    total = sum(max(0.0, float(w)) for w in weights) or 1.0
    cuts, acc = [], 0.0
    for w in weights:
        acc += max(0.0, float(w))
        cuts.append(round(n * acc / total))
    cuts[-1] = n
    return [b - a for a, b in zip([0, *cuts[:-1]], cuts)]


def char_shares(words: Sequence[str], weights: Sequence[float]) -> list[int]:
    """How many of `words` (in order) go to each line, the lines taking shares of the characters in proportion to
    `weights` (what each line read, or its width): a word goes to the line its middle character falls in."""
    total = sum(max(0.0, float(w)) for w in weights) or 1.0
    chars = sum(len(w) for w in words) + max(0, len(words) - 1)
    ends, acc = [], 0.0
    for w in weights:
        acc += max(0.0, float(w))
        ends.append(chars * acc / total)
    counts, pos, line = [0] * len(weights), 0, 0
    for w in words:
        middle = pos + len(w) / 2
        while line < len(ends) - 1 and middle > ends[line]:
            line += 1
        counts[line] += 1
        pos += len(w) + 1
    return counts


def spread_words(box: Box, text: str) -> list[Word]:
    """`text`'s words laid over `box` in reading order, each as wide as its share of the characters (a space
    between words counted as one character): estimated boxes. A right-to-left line's first word takes the
    right end of the box; the words stay in logical order."""
    words = text.split()
    if not words:
        return []
    x0, y0, x1, y1 = box
    unit = (x1 - x0) / max(1, sum(len(w) for w in words) + len(words) - 1)
    rtl = right_to_left(text)
    out, x = [], x0
    for w in words:
        a, b = x, min(x1, x + unit * len(w))
        out.append(Word(((x0 + x1 - b, y0, x0 + x1 - a, y1) if rtl else (a, y0, b, y1)), w))
        x += unit * (len(w) + 1)
    return out


def bands(box: Sequence[float], lines: list[str]) -> list[Line]:
    """Estimated lines: one equal band of `box` per line of text."""
    x0, y0, x1, y1 = box
    if not lines:
        return []
    band = (y1 - y0) / len(lines)
    out = []
    for i, text in enumerate(lines):
        b = (x0, y0 + band * i, x1, y0 + band * (i + 1))
        out.append(Line(b, text, spread_words(b, text)))
    return out


def layer_lines(words) -> list[tuple[Box, str, list[Word]]]:
    """Text-layer words (app.core.text.textlayer.Word: box_pt, text, block, line, word) grouped into their lines, in the
    layer's order: (line box, its text, its measured words)."""
    grouped: dict[tuple[int, int], list] = {}
    for w in sorted(words, key=lambda w: (w.block, w.line, w.word)):
        grouped.setdefault((w.block, w.line), []).append(w)
    out = []
    for ws in grouped.values():
        box = (min(w.box_pt[0] for w in ws), min(w.box_pt[1] for w in ws),
               max(w.box_pt[2] for w in ws), max(w.box_pt[3] for w in ws))
        out.append((box, " ".join(w.text for w in ws), [Word(tuple(w.box_pt), w.text, None, True) for w in ws]))
    return out


def block_geometry(region: Region, lines: list[str], layer_words=None,
                   found: Sequence[tuple[Box, str | None]] = ()) -> list[Line]:
    """The block's text (`lines`: its plain-text lines as exported) placed on the page: measured lines where the
    engine, the layout's OCR, the text layer (`layer_words`, for a block taken from the layer) or a line finder
    (`found`: boxes seen on the page, for an engine that reports only text) found them, with their measured words
    where the words placed are the ones read there; estimated otherwise (module docstring)."""
    if not lines or region.box_pt[2] - region.box_pt[0] <= 1 or region.box_pt[3] - region.box_pt[1] <= 1:
        return []
    seen = [(tuple(b), t, []) for b, t in found] if len(found) >= len(lines) else []  # fewer: the finder merged some
    found = _measured_lines(region) or (layer_lines(layer_words) if layer_words else []) or seen
    if not found or not _all_inside(region.box_pt, [b for b, _, _ in found]):
        return bands(region.box_pt, lines)
    texts = assign_lines(lines, [(b, t) for b, t, _ in found])
    out = []
    for (box, _read, measured_words), text in zip(found, texts):
        if not text:
            continue
        if measured_words and [w.text for w in measured_words] == text.split():
            words = measured_words
        else:
            words = spread_words(box, text)
        out.append(Line(box, text, words, True))
    return out
