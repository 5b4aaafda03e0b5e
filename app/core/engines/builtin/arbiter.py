"""Who has the last word on a line: the recogniser where it was sure, the decoder where the recogniser was not.

The built-in decoder reads the recogniser's characters and may write something else. That is its worth where the
recogniser hesitated ("tbe" → "the", with a 62 % 'b'); it is a loss where the recogniser was sure and the decoder,
trained on synthetic lines, drifts on a real page ("distributed" → "distriboted" over a 99 % 'u'). So the two
readings are aligned (rapidfuzz's Levenshtein opcodes) and each place where they differ is settled on its own:

- the decoder's version is taken where the recogniser's least sure character in that place (for an insertion, the
  characters on either side of it) is below `UNSURE`;
- the recogniser's characters are kept everywhere else.

The result never moves away from the recogniser where its evidence was strong, so the engine reads no worse than the
recogniser it reads from on the characters it was sure of, and takes the decoder's corrections where it was not.

What must never live here: decoding, the recogniser, events.
"""
from __future__ import annotations

from dataclasses import dataclass

UNSURE = 0.5  # a recogniser character below this top-1 probability may be overruled by the decoder


@dataclass(frozen=True)
class Verdict:
    text: str
    taken: int  # places where the decoder's version was taken
    kept: int  # places where the recogniser's characters were kept over the decoder's


def _char_conf(chars, conf) -> list[float]:
    """One confidence per character of "".join(chars) (a CTC class may write more than one character)."""
    out: list[float] = []
    for ch, p in zip(chars, conf):
        out.extend([float(p)] * max(1, len(ch)) if ch else [])
    return out


def arbitrate(chars, conf, decoded: str, unsure: float = UNSURE) -> Verdict:
    """The line's text from the recogniser's `chars` (with their top-1 `conf`) and the decoder's `decoded` text."""
    from rapidfuzz.distance import Levenshtein

    recognised = "".join(chars)
    if decoded == recognised:
        return Verdict(decoded, 0, 0)
    p = _char_conf(chars, conf)
    if len(p) != len(recognised):  # cannot place the confidences: the recogniser's reading stands
        return Verdict(recognised, 0, 1)
    out: list[str] = []
    taken = kept = 0
    for tag, i1, i2, j1, j2 in Levenshtein.opcodes(recognised, decoded):
        if tag == "equal":
            out.append(recognised[i1:i2])
            continue
        if i2 > i1:
            least = min(p[i1:i2])
        else:  # an insertion between i1 - 1 and i1
            least = min([p[k] for k in (i1 - 1, i1) if 0 <= k < len(p)] or [0.0])
        if least < unsure:
            out.append(decoded[j1:j2])
            taken += 1
        else:
            out.append(recognised[i1:i2])
            kept += 1
    return Verdict("".join(out), taken, kept)
