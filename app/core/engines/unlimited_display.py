"""Unlimited-OCR's raw generation as a person sees it while it streams: the special strings the parser never
puts in a block's text dropped, grounding headers and page markers hidden (an unfinished one too), and offsets
from the raw output into a block's text. The parsing itself (raw output -> blocks -> regions) is
app.core.engines.unlimited_output.

What must never live here: parsing blocks, torch, anything that decodes."""
from __future__ import annotations

import re

from app.core.engines.unlimited_output import (DET_CLOSE, DET_OPEN, NOISE_TOKENS, PAGE_MARK, REF_CLOSE,
                                               REF_OPEN)


_DROPPED = NOISE_TOKENS + (PAGE_MARK, DET_CLOSE, REF_OPEN, REF_CLOSE)
_DROPPED_RE = re.compile("|".join(re.escape(t) for t in _DROPPED))


def drop_specials(raw: str) -> str:
    """`raw` without the special strings the parser never puts in a block's text (markers, stray tags, noise).
    """
    return _DROPPED_RE.sub("", raw)


_STREAM_HEADER = re.compile(f"(?:{re.escape(REF_OPEN)}.*?{re.escape(REF_CLOSE)})?{re.escape(DET_OPEN)}.*?"
                            f"{re.escape(DET_CLOSE)}", re.S)
_STREAM_HIDDEN = re.compile("|".join(re.escape(t) for t in _DROPPED))
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def stream_display(raw: str) -> str:
    """A generation's text as it streams, for a person: grounding headers (`<|det|>label [box]<|/det|>`), page
    markers and other special strings hidden, and so is a header or special string still incomplete at the end
    (it is shown once it closes, as nothing); control characters dropped. The display of a prefix of `raw` is
    a prefix of the display of `raw`, so offsets map with `len(stream_display(raw[:pos]))`."""
    text = _STREAM_HEADER.sub("\n\n", raw)  # a header starts a block: a paragraph break where it stood
    # a header that has not closed yet (with the label before it, in the legacy form)
    cut = text.rfind(DET_OPEN)
    if cut >= 0 and text[:cut].endswith(REF_CLOSE):
        cut = text.rfind(REF_OPEN, 0, cut)
    ref = text.rfind(REF_OPEN)  # a label whose box has not come yet (a complete header was replaced above)
    if ref >= 0:
        cut = ref if cut < 0 else min(cut, ref)
    if cut >= 0:
        text = text[:cut]
    text = _STREAM_HIDDEN.sub("", text).lstrip("\n")
    tail = text.rfind("<", max(0, len(text) - 24))
    if tail >= 0 and any(t.startswith(text[tail:]) for t in _DROPPED + (DET_OPEN,)):
        text = text[:tail]
    return _CONTROL.sub("", text)


def text_offset(raw: str, start: int, pos: int) -> int:
    """How many characters of a block's text (as `to_regions` gives it) lie before offset `pos` of the raw
    output, for a block whose `raw_text_span` begins at `start`: special strings the parser drops do not count
    (nor one cut by `pos`), nor the leading whitespace its `strip` drops."""
    piece = drop_specials(raw[start:max(start, pos)])
    cut = piece.rfind("<", max(0, len(piece) - 24))
    if cut >= 0 and any(t.startswith(piece[cut:]) for t in _DROPPED):
        piece = piece[:cut]
    return len(piece.lstrip())
