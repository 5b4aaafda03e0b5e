"""The text a region got, line by line, beside the decoder's own reading where the two differ, and why.

The built-in engine reads each line twice over: the recogniser's characters, then the decoder's rewrite of them;
what the document keeps is settled per line (app.core.engines.builtin.engine, arbiter.py, lexicon.py) and said in the
region's `line_stats`: `text` (what the document got), `decoder_text` (the decoder's own reading, when the document
kept something else), `kept_recogniser`, `decoder_taken` / `recogniser_kept` (the arbiter's places), `words_settled`
(the word list's changes before decoding), `fallback` (a line the decoder cannot write). So the decoding views, which
draw the decoder's rounds, can show the document's text and mark each line where the decoder read otherwise, and map
a round's characters (in the decoder's output) onto the region's text.

What must never live here: Qt, drawing, decoding.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any, Sequence

RECOGNISER_KEPT, ARBITER, WORD_LIST, RECOGNISER_ONLY = "recogniser kept", "arbiter", "word list", "recogniser only"


@dataclass(frozen=True)
class LineReading:
    """One line of a region as the document got it. `decoder` is the decoder's own reading where the document got
    another text (None: the same, or not decoded); `reasons` say why, `detail` in a sentence. `raw_*` is where the
    decoder's reading sits in the decoded output the rounds wrote (-1: not in it), `doc_*` where `text` sits in the
    region's text (-1: not found)."""

    text: str
    decoder: str | None
    reasons: tuple[str, ...]
    detail: str
    raw_start: int = -1
    raw_end: int = -1
    doc_start: int = -1
    doc_end: int = -1

    @property
    def differs(self) -> bool:
        return self.decoder is not None and self.decoder != self.text


def _places(n: Any) -> str:
    n = int(n or 0)
    return f"{n} place{'s' if n != 1 else ''}"


def _explain(st: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    reasons, parts = [], []
    settled = [tuple(c) for c in (st.get("words_settled") or ()) if len(c) == 2]
    if settled:
        reasons.append(WORD_LIST)
        parts.append("the word list settled " + ", ".join(f"{a} → {b}" for a, b in settled[:4])
                     + " before decoding")
    if st.get("fallback"):
        reasons.append(RECOGNISER_ONLY)
        missing = st.get("outside_vocab") or ""
        parts.append("the decoder cannot write " + (f"{missing!r}" if missing else "this line")
                     + ": the recogniser's reading, not decoded")
    elif st.get("decoder_text") is not None and st.get("decoder_text") != st.get("text"):
        if st.get("kept_recogniser") and "decoder_taken" not in st:
            reasons.append(RECOGNISER_KEPT)
            parts.append("the decoder rewrote the line: the recogniser's reading is kept")
        elif st.get("kept_recogniser"):
            reasons.append(RECOGNISER_KEPT)
            parts.append(f"the recogniser was sure at the {_places(st.get('recogniser_kept'))} the decoder changed")
        else:
            reasons.append(ARBITER)
            parts.append(f"the arbiter took the decoder's reading at {_places(st.get('decoder_taken'))} where the "
                         f"recogniser was unsure and kept the recogniser's at {_places(st.get('recogniser_kept'))}")
    return tuple(reasons), "; ".join(parts)


def line_readings(stats: dict[str, Any] | None, region_text: str, decoded: str, task: str = "text"
                  ) -> list[LineReading]:
    """The region's lines from its statistics (empty when the engine reported none per line). `region_text` is the
    region's text (RegionFinished.text), `decoded` the decoder's output the rounds wrote, in order."""
    lines = (stats or {}).get("line_stats") or []
    out: list[LineReading] = []
    raw_at = doc_at = 0
    for st in lines:
        if not isinstance(st, dict):
            continue
        text = str(st.get("text") or "")
        reasons, detail = _explain(st)
        own = None if st.get("fallback") else str(st.get("decoder_text", text) or "")
        raw_start = raw_end = -1
        if own:
            found = decoded.find(own, raw_at)
            if found >= 0:
                raw_start, raw_end, raw_at = found, found + len(own), found + len(own)
        needle = escape(text, quote=False) if task == "table" else text
        doc_start = doc_end = -1
        if needle:
            found = region_text.find(needle, doc_at)
            if found >= 0:
                doc_start, doc_end, doc_at = found, found + len(needle), found + len(needle)
        out.append(LineReading(text, own if own is not None and own != text else None, reasons, detail,
                               raw_start, raw_end, doc_start, doc_end))
    return out


def document_span(readings: Sequence[LineReading], start: int, end: int) -> tuple[int, int]:
    """A span of the decoder's output (a round's characters) as a span of the region's text: the same characters
    where the line is the decoder's, the whole line where the document got another reading. Unchanged when nothing
    is known per line."""
    hits = [r for r in readings if r.raw_start >= 0 and r.doc_start >= 0
            and r.raw_start < max(end, start + 1) and start < max(r.raw_end, r.raw_start + 1)]
    if not hits:
        return start, end
    spans = []
    for r in hits:
        if r.differs or (r.raw_end - r.raw_start) != (r.doc_end - r.doc_start):
            spans.append((r.doc_start, r.doc_end))
            continue
        a = r.doc_start + max(0, start - r.raw_start)
        b = r.doc_start + min(r.raw_end, end) - r.raw_start
        spans.append((a, max(a, b)))
    return min(a for a, _ in spans), max(b for _, b in spans)
