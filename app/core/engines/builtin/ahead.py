"""Lines decoded while their page is laid out (issue #38). A scanned page's lines are read once, before the layout
(app.core.pipeline.page_ocr), and the layout then runs in its child process for a third of a second or more while
this process waits. Under `decoder="unsure"` (convert's default) the lines the decoder will read are known by
then: each page line the recogniser was unsure of, as the engine will see it (its fresh reading, the word list's
settling applied: lexicon.settle_reading). `Ahead.run` decodes those in that wait (the pipeline's
`ScanReader.decode_ahead` calls it); when the engine reaches such a line in a region (`read_line`), it takes the
decode kept for exactly that reading and token budget and replays its rounds to the listener, so the events, the
text and the statistics are those of decoding it there: the decode is greedy and its input is the reading alone.
A line read otherwise (turned, routed to another recogniser, read with another budget, a region read again) is
decoded where it is read, as before.

Not under `decoder="always"` (the window): there the rounds are drawn as they are decoded.

What must never live here: the decode itself (app.core.decoding.selfspec), which lines are decoded
(sure_lines.skips), the region's assembly (engine.py).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence


def key(reading, budget: int) -> tuple:
    """What a line's decode depends on: the reading the decoder is given (its prefix) and its token budget."""
    return (tuple(reading.chars), tuple(reading.conf), tuple(reading.alts), tuple(reading.alt_p),
            tuple(reading.alts2), tuple(reading.alt_p2), int(budget))


@dataclass
class Done:
    """A line decoded ahead: the Decoded, and the rounds its decode reported."""

    decoded: Any
    rounds: list = field(default_factory=list)

    def replay(self, on_round: Callable | None):
        """The decode as if run now: its rounds to `on_round` (None: nobody listens), then a copy of it."""
        if on_round is not None:
            for rnd in self.rounds:
                on_round(rnd)
        return copy.deepcopy(self.decoded)


class Ahead:
    """The engine's lines decoded ahead, for one page of one document at a time: a page of another document drops
    them (folders of one-page scans all read page 0; they were kept, and a document read again took them all)."""

    def __init__(self) -> None:
        self.page: object = None
        self.document: object = None
        self.done: dict[tuple, Done] = {}

    def take(self, page: object, reading, budget: int) -> Done | None:
        """The line decoded ahead for `reading` on `page` with `budget`, or None."""
        return self.done.get(key(reading, budget)) if page == self.page else None

    def run(self, engine, page: object, readings: Sequence, budget: Callable, cancel=None,
            document: object = None) -> int:
        """Decode each of `readings` (the engine's, word list settled) that the engine will decode, for `page` of
        `document` (what tells the pipeline's documents apart), each with its `budget(reading)` of tokens
        (engine.line_budget); the count decoded. A cancelled decode is not kept."""
        from app.core.decoding.selfspec import selfspec_decode
        from app.core.engines.builtin.reader import one_thread, prefill
        from app.core.engines.builtin.sure_lines import skips

        if (document, page) != (self.document, self.page):
            self.document, self.page, self.done = document, page, {}
        n = 0
        with one_thread():  # as the engine decodes a region (decode_lines): the same numbers
            for reading in readings:
                if engine.mode != "selfspec" or skips(engine.decoder, reading) or not engine.can_write(reading):
                    continue
                k = key(reading, budget(reading))
                if k in self.done:
                    continue
                if cancel is not None and cancel.cancelled:
                    break
                done = Done(None)
                done.decoded = selfspec_decode(engine.model, prefill(engine.model, engine.codec, reading),
                                               mask_id=engine.mask_id, block_size=engine.block_size,
                                               stop_ids=engine.stop_ids, max_new_tokens=k[-1],
                                               on_round=done.rounds.append, cancel=cancel, inspect=engine.inspect)
                if done.decoded.stopped != "cancelled":
                    self.done[k] = done
                    n += 1
        return n
