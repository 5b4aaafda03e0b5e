"""OCR text vs the PDF's own text layer: the character error rate (CER) per block and per page.

    ref = reference_text(words, box_pt)        # the text-layer words inside a block, in reading order
    cer(ocr_text, ref)                          # Levenshtein distance / len(ref), after normalisation
    page_cer(pairs)                             # Σ distances / Σ reference lengths over the page's blocks

Both sides are normalised before comparing, so markup is not counted as an error: HTML tags, Markdown heading
and list markers, `$$` delimiters and `\\tag{}` are removed, and whitespace is collapsed to single spaces. A word
belongs to a block when at least half of its box lies inside the block. Edit distance: app.core.text.textmetrics.
CER is None when there is nothing to compare against (no text layer words in the block).

The layer compared with (and taken instead of OCR, app.core.pipeline.text_source) is the document's ORIGINAL
layer of real glyphs (`original_layer`): read from the file on disk when the in-memory document was changed (a
library's OCR hook inserts its text into the page), and without text that is drawn invisibly (render mode 3, alpha
0: an OCR layer under a scan), set in an OCR tool's glyph-less font, or holding U+FFFD. Such text is no reference:
comparing OCR with it would invent a quality figure.
"""
from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

from app.core.document import TextWord

if TYPE_CHECKING:  # pragma: no cover
    from app.core.document import Document

OCR_LAYER_FONTS = ("GlyphLessFont",)  # the font OCR tools (Tesseract, ocrmypdf) write their hidden layer in
_STROKED, _FILLED = 32, 16  # MuPDF's FZ_STEXT_STROKED / FZ_STEXT_FILLED span flags (render modes that paint)
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
    from app.core.text.textmetrics import edit_distance

    return edit_distance(normalise(ref), normalise(ocr))


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


@dataclass
class PageLayer:
    """A page's original text layer: `words` of real, visible glyphs; `hidden` the boxes (points) of text that is
    there but cannot be trusted (invisible, an OCR tool's font, replacement characters)."""
    words: list[TextWord]
    hidden: list[tuple[float, float, float, float]]
    # (box in points, spans) per line of an unrotated page: a formula's sizes, baselines and fonts (app.core.text.layer_math)
    lines: list = field(default_factory=list)

    def hidden_in(self, box_pt, min_inside: float = 0.5) -> bool:
        return any(inside_fraction(h, box_pt) >= min_inside for h in self.hidden)


_SPACING_ACCENTS = {"\u00b4": "\u0301", "\u02c6": "\u0302", "\u02dc": "\u0303", "\u00a8": "\u0308",
                    "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02d9": "\u0307", "\u00af": "\u0304",
                    "\u02da": "\u030a", "\u02dd": "\u030b"}
_ACCENTED = re.compile("([" + "".join(_SPACING_ACCENTS) + "])([A-Za-z\u0131\u0237])")


def typeset_marks(text: str) -> str:
    """What TeX's text layers spell in two glyphs, as one: an accent set over a letter ("J´an Min´aˇc" → "Ján
    Mináč"; an accent before a dotless ı is over an i) and quotes set as two single ones ("‘‘…’’" → "“…”").
    An accent that makes no single letter with the next one (an apostrophe typed as ´) is left as it is."""
    if "\u2018\u2018" in text or "\u2019\u2019" in text:
        text = text.replace("\u2018\u2018", "\u201c").replace("\u2019\u2019", "\u201d")

    def one(m: re.Match) -> str:
        base = {"\u0131": "i", "\u0237": "j"}.get(m.group(2), m.group(2))
        made = unicodedata.normalize("NFC", base + _SPACING_ACCENTS[m.group(1)])
        return made if len(made) == 1 else m.group(0)

    return _ACCENTED.sub(one, text)


RESPACE_MIN = 12  # a word this long without a space may be several whose spaces the layer left out
_LETTER_DIGIT = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")
WORD_GAP = 0.1  # a gap between two glyphs of at least this share of the font size is a space ...
GLYPH_GAP = 0.04  # ... where the word's other glyphs stand at most this far apart


def respaced(page, box, text: str) -> str:
    """A long word of the layer (or one where letters and digits meet) read again glyph by glyph: a font set tight
    with no space glyphs ("CompositionofthepretrainingdataforOLMo2.", "Table1") shows its word breaks only as gaps
    a little wider than the letters'. Spaces go where a gap stands out; a word whose gaps are all alike is left as
    it is."""
    joined = len(text) >= 4 and _LETTER_DIGIT.search(text)  # "Table1": a number set tight after its word
    if any(c.isspace() for c in text) or not (joined or sum(c.isalpha() for c in text) >= RESPACE_MIN):
        return text
    raw = page.get_text("rawdict", clip=box)
    chars = [(c["c"], c["bbox"], float(sp.get("size") or 0)) for b in raw.get("blocks", ()) for ln in b.get("lines", ())
             for sp in ln.get("spans", ()) for c in sp.get("chars", ())]
    chars = [c for c in chars if box[0] - 0.5 <= (c[1][0] + c[1][2]) / 2 <= box[2] + 0.5]
    if "".join(c[0] for c in chars) != text or not chars:
        return text
    size = max(c[2] for c in chars) or 1.0
    gaps = [b[1][0] - a[1][2] for a, b in zip(chars, chars[1:])]
    wide = [g >= WORD_GAP * size for g in gaps]
    if not any(wide) or sorted(g for g, w in zip(gaps, wide) if not w)[-1:] > [GLYPH_GAP * size]:
        return text
    if len(text) < RESPACE_MIN and any(w and not (chars[k][0].isalpha() and chars[k + 1][0].isdigit())
                                       for k, w in enumerate(wide)):
        return text  # a short word breaks only between its letters and its number (math spacing is no space)
    return "".join(c[0] + (" " if w else "") for c, w in zip(chars, wide + [False]))


def _untrusted_span(span: dict) -> bool:
    flags = int(span.get("char_flags", _FILLED))
    painted = bool(flags & (_STROKED | _FILLED)) and int(span.get("alpha", 255)) > 0
    return not painted or span.get("font", "") in OCR_LAYER_FONTS or "\ufffd" in span.get("text", "")


def _read_layer(page) -> PageLayer:
    import pymupdf

    rot = page.rotation_matrix if page.rotation else None

    def shown(box) -> tuple[float, float, float, float]:
        if rot is None:
            return tuple(float(v) for v in box)
        r = pymupdf.Rect(box) * rot
        return (float(r.x0), float(r.y0), float(r.x1), float(r.y1))

    blocks = page.get_text("dict").get("blocks", [])
    hidden = [shown(s["bbox"]) for b in blocks for line in b.get("lines", [])
              for s in line.get("spans", []) if s.get("text", "").strip() and _untrusted_span(s)]
    lines = [] if rot is not None else [
        (tuple(float(v) for v in line["bbox"]), [{k: s.get(k) for k in ("text", "size", "flags", "origin", "font")}
                                                 for s in line.get("spans", [])])
        for b in blocks for line in b.get("lines", []) if any(s.get("text", "").strip() for s in line.get("spans", []))]
    words = []
    for x0, y0, x1, y1, text, block, line, word in page.get_text("words", sort=True):
        if not text.strip():
            continue
        box = shown((x0, y0, x1, y1))
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if any(h[0] <= cx <= h[2] and h[1] <= cy <= h[3] for h in hidden):
            continue
        text = respaced(page, (x0, y0, x1, y1), text) if rot is None else text
        words.append(TextWord(typeset_marks(text), box, int(block), int(line), int(word)))
    return PageLayer(_drop_caps(words), hidden, lines)


def _drop_caps(words: list[TextWord]) -> list[TextWord]:
    """A paragraph's large initial letter (a drop cap: "O" two or more lines tall, then "ver the past …") joins
    the word it begins: a one-letter capital followed, right beside its top, by a word in small letters starting
    lower-case. The joined word keeps the small word's place in its line."""
    caps = [w for w in words if len(w.text) == 1 and w.text.isupper()]
    if not caps:
        return words
    gone: set[int] = set()
    out = list(words)
    for cap in caps:
        x0, y0, x1, y1 = cap.box_pt
        h = y1 - y0
        nxt = min((w for w in words if w is not cap and w.text[:1].islower() and 0 <= w.box_pt[0] - x1 < 0.5 * h
                   and y0 - 0.2 * h <= w.box_pt[1] <= y0 + 0.4 * h and w.box_pt[3] - w.box_pt[1] < 0.6 * h),
                  key=lambda w: w.box_pt[0] - x1, default=None)
        if nxt is None:
            continue
        k = out.index(nxt)
        out[k] = TextWord(cap.text + nxt.text, nxt.box_pt, nxt.block, nxt.line, nxt.word)
        gone.add(id(cap))
    return [w for w in out if id(w) not in gone]


def original_layer(document: "Document", index: int, password: str | None = None) -> PageLayer:
    """Page `index`'s original text layer (empty for image documents and pages without one). When the in-memory
    PDF was modified (`is_dirty`: e.g. OCR text inserted by a library), the page is read from the file on disk."""
    if document.kind != "pdf":
        return PageLayer([], [])
    import pymupdf

    with document.lock:
        mupdf = document.mupdf
        try:
            if not mupdf.is_dirty:
                return _read_layer(mupdf.load_page(index))
            with pymupdf.open(str(document.path)) as pristine:
                if pristine.needs_pass:
                    pristine.authenticate(password or "")
                return _read_layer(pristine.load_page(index))
        except Exception as exc:  # noqa: BLE001 - a damaged page or a file gone from disk: no reference, say so
            document.warnings.append(f"page {index + 1}: the text layer cannot be read ({exc})")
            return PageLayer([], [])


def garbled_fraction(text: str) -> float:
    """The share of characters no real text is made of: private-use code points (a font without a usable
    ToUnicode map), control characters, U+FFFD."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return 0.0
    bad = sum(1 for c in chars if c == "\ufffd" or 0xE000 <= ord(c) <= 0xF8FF or (ord(c) < 32))
    return bad / len(chars)
