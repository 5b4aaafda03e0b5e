"""What both decoding views' state needs: token text made visible, append-only text, and what to tell a person
whose engine cannot fill a view. No Qt here.

What must never live here: painting, widgets, timers, a view's own state (rounds_state, window_state).
"""
from __future__ import annotations

import re


WHITESPACE_KEY = "∅ a token with no visible text (a special token) · \u00b7 space · ↵ newline · → tab"


def visible_whitespace(text: str) -> str:
    """Token text with its whitespace made visible (a cell must never look empty)."""
    if not text:
        return "∅"
    text = text.replace(" ", "·").replace("\n", "↵").replace("\t", "→")
    return text.translate(_CONTROL_PICTURES) if any(ord(c) < 32 or c == "\x7f" for c in text) else text


_CONTROL_PICTURES = {i: 0x2400 + i for i in range(32)} | {0x7F: 0x2421}
# how stop tokens read when decoded alone (GLM's <|user|>, <|endoftext|>; </s>, <eos>, <end_of_turn> elsewhere)
_SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w.-]*\|>|</s>|<eos>|<end_of_turn>|<\|im_end\|>")


class _Text:
    """Append-only text kept as pieces; `value` joins them once per change."""

    __slots__ = ("_pieces", "_len", "_joined")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._len = 0
        self._joined: str | None = ""

    def append(self, piece: str) -> tuple[int, int]:
        start = self._len
        if piece:
            self._pieces.append(piece)
            self._len += len(piece)
            self._joined = None
        return start, self._len

    def __len__(self) -> int:
        return self._len

    @property
    def value(self) -> str:
        if self._joined is None:
            self._joined = "".join(self._pieces)
            self._pieces = [self._joined] if self._joined else []
        return self._joined


def engine_hint(engine: str, shows: str) -> str | None:
    """What to tell a person whose run cannot fill a view (`shows`: "rounds" or "window"); None when it can."""
    if not engine:
        return None
    from app.core.engines import ENGINES

    spec = ENGINES.get(engine)
    if spec is not None and spec.shows == shows:
        return None
    title = spec.title if spec is not None else engine
    if shows == "rounds":
        return (
            f"This run uses {title}: it decodes without draft/verify rounds, so there are none to show.\n"
            "GravityOCR (self-speculative) and the built-in model show their rounds here; "
            "`python -m app models` says where their weights are looked for.\n"
            "A trace file of such a run can still be replayed (File → Open trace)."
        )
    return (
        f"This run uses {title}: it reads region by region, with no sliding window over a whole document.\n"
        "Unlimited-OCR shows its R-SWA window and KV cache here; `python -m app models` says where its weights "
        "are looked for.\nA trace file of such a run can still be replayed (File → Open trace)."
    )
