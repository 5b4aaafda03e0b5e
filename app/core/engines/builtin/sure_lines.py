"""Which lines the built-in decoder reads (the engine's `decoder` option, `convert --decoder`):

- `always`: every line the decoder can write (the window: its rounds are drawn);
- `unsure`: only lines where the recogniser was unsure of a character (top-1 below the arbiter's UNSURE). On a line
  it was sure of everywhere, the decoder cannot change the text: the arbiter (arbiter.py) keeps the recogniser's
  characters at every place it was sure of, and a rewrite is thrown away whole (engine.rewrote), so the line is
  written as the recogniser (and the word list) read it, without a forward. `convert`'s default. The one
  difference: a line the decoder would have run to its token budget on is not cut there.
- `never`: no line is decoded (the recogniser and the word list alone).

A line not decoded is written as the recogniser read it: its characters as tokens (TokensCommitted, so a trace and
the window still show its text), their confidences as the line's probabilities, no rounds; its stats say
`decoder: "skipped"`.

What must never live here: decoding, the arbiter's rule itself.
"""
from __future__ import annotations

import math

from app.core.decoding.autoregressive import Decoded
from app.core.decoding.stats import DecodeStats
from app.core.engines.builtin.arbiter import UNSURE
from app.core.record.events import TokensCommitted

CHOICES = ("always", "unsure", "never")


def skips(decoder: str, reading) -> bool:
    """Is this line written without the decoder under `decoder` (one of CHOICES)?"""
    if decoder == "never":
        return True
    return decoder == "unsure" and bool(reading.conf) and min(reading.conf) >= UNSURE


def kept_line(engine, reading, *, region_id: str, emit, offsets: dict, sep: str) -> tuple[Decoded, str]:
    """The line as the recogniser read it, shaped as a decode (see the module): (Decoded, text)."""
    text = reading.text
    ids = [int(engine.codec.char.get(ch, engine.codec.unk)) for ch in reading.chars]
    if text:
        emit(TokensCommitted(region_id, offsets["step"], ids, (sep + text) if sep else text, 0.0, 0,
                             token_texts=list(reading.chars)))
    lps = [math.log(max(1e-6, min(1.0, float(p)))) for p in reading.conf]
    decoded = Decoded(ids, DecodeStats(engine.mode, block_size=engine.block_size), "stop", [], lps)
    return decoded, text
