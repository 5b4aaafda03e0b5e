"""Is this text plausibly what the page says? Checks that need no reference: the script of characters, a line read
much shorter than its ink, text made mostly of one repeated character or of placeholder characters.

They feed the review flags (app.core.pipeline.quality): text an engine could not really read is flagged, never
reported as a confident "ok". A leaf module: engines use it per line, the pipeline per block.
"""
from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Iterable

# a line whose text covers less than this share of the characters its box could hold is "unread"
MIN_LINE_COVERAGE = 0.3
# a block of at least this many visible characters made mostly (this share) of one character is garbled
REPEAT_MIN_CHARS = 10
REPEAT_SHARE = 0.6
RULE_CHARS = set("-–—_=.·•*~ ")  # rules, leaders and bullets repeat on purpose
PLACEHOLDERS = set("\ufffd\u25a1\u25af")  # replacement character, white square / rectangle (tofu)
# a block on a page of script S holding at least this share (and count) of letters of another script is suspicious
FOREIGN_SHARE = 0.3
FOREIGN_MIN = 3
WIDE_SCRIPTS = ("cjk", "hangul")  # a glyph about one line-height wide
RTL_SCRIPTS = ("arabic", "hebrew")  # written right to left

# Korean is its own script (Hangul): the bundled recogniser reads Chinese and Japanese, not Korean
_SCRIPTS = (("LATIN", "latin"), ("CJK", "cjk"), ("HIRAGANA", "cjk"), ("KATAKANA", "cjk"), ("HANGUL", "hangul"),
            ("CYRILLIC", "cyrillic"), ("GREEK", "greek"), ("ARABIC", "arabic"), ("HEBREW", "hebrew"),
            ("DEVANAGARI", "devanagari"), ("THAI", "thai"))


def script_of(ch: str) -> str:
    """The script of one letter ('latin', 'cjk', 'hangul', 'cyrillic', 'greek', …, 'other'); '' for digits, punctuation,
    symbols and spaces (they belong to every script)."""
    if not ch.isalpha():
        return ""
    if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf":
        return "cjk"
    name = unicodedata.name(ch, "")
    for key, script in _SCRIPTS:
        if key in name:
            return script
    return "other"


def script_counts(text: str) -> Counter:
    return Counter(s for s in map(script_of, text) if s)


def dominant_script(texts: Iterable[str]) -> str:
    """The script most letters of `texts` are in ('' when there are none)."""
    counts: Counter = Counter()
    for t in texts:
        counts.update(script_counts(t))
    return counts.most_common(1)[0][0] if counts else ""


def right_to_left(text: str) -> bool:
    """Is `text` written right to left: are most of its letters Arabic or Hebrew? (Digits and Latin words inside
    such a line are its own; the text is kept in logical order either way.)"""
    counts = script_counts(text)
    letters = sum(counts.values())
    return letters > 0 and sum(counts[s] for s in RTL_SCRIPTS) > 0.5 * letters


def line_coverage(box: tuple[float, float, float, float], text: str) -> float:
    """How much of a line box its text accounts for: visible characters over the characters the box could hold.
    A printed glyph is about 0.5 (Latin) to 1 (CJK, Hangul) line-heights wide; counting each CJK or Hangul character
    twice puts both near 1 for a line read in full."""
    x0, y0, x1, y1 = box
    h, w = max(1.0, y1 - y0), max(0.0, x1 - x0)
    if w < 2 * h:  # a word or two: too short to judge
        return 1.0
    visible = sum(2 if script_of(c) in WIDE_SCRIPTS else 1 for c in text if not c.isspace())
    return visible / (w / (0.55 * h))


def unread(box: tuple[float, float, float, float], text: str) -> bool:
    """A line whose text covers only a small part of its ink: most of it was not read (often a script the
    recogniser does not know, such as Cyrillic for PP-OCRv6)."""
    return line_coverage(box, text) < MIN_LINE_COVERAGE


def text_reasons(text: str, page_script: str = "") -> list[str]:
    """Why `text` does not look like real text, in words for a person ([] when nothing is wrong)."""
    reasons = []
    visible = [c for c in text if not c.isspace()]
    holes = sum(1 for c in visible if c in PLACEHOLDERS) + text.count("µµµ") * 3
    if visible and holes >= max(2, 0.1 * len(visible)):
        reasons.append("characters the engine could not write")
    if len(visible) >= REPEAT_MIN_CHARS:
        ch, n = Counter(visible).most_common(1)[0]
        if ch not in RULE_CHARS and n >= REPEAT_SHARE * len(visible):
            reasons.append(f"garbled: mostly {ch!r} repeated")
    if page_script:
        counts = script_counts(text)
        letters = sum(counts.values())
        foreign = {s: n for s, n in counts.items() if s != page_script and n >= FOREIGN_MIN}
        if letters and foreign and sum(foreign.values()) >= FOREIGN_SHARE * letters and page_script == "latin":
            reasons.append("characters outside the page's script (" + ", ".join(sorted(foreign)) + ")")
    return reasons
