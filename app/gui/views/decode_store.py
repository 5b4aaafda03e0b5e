"""What the decoding dock keeps of each document: a region is known by (document, region id), because region ids
repeat from one document to the next (every first page has a `p1-r01`).

`DocumentDecode` is one document's latest run as the dock shows it: the events it recorded (for the playback bar
and Save trace), the rounds and the R-SWA window built from them (app.gui.views.rounds_state / window_state), where
the playback bar stood and, for a replayed trace, where its events go. `DecodeStore` keeps them by document,
bounded: the latest run of the last `KEEP_DOCUMENTS` documents read (the document shown and the one being read are
never dropped), and within one document the rounds and per-token events of its latest `PLAYBACK_REGIONS` regions
(`DocumentDecode.trim`; the window's `playback_regions` setting), so memory stays flat over a long document. A document dropped from the store shows an empty dock saying so (its trace, when one was recorded,
replays it). No Qt here.

What must never live here: widgets, painting, timers, the session's own blocks (app.core.review.session).
"""
from __future__ import annotations

import dataclasses
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from app.core.record.events import (DocumentOpened, Event, LayoutDone, NgramBanned, PrefixLaid, RegionFinished,
                                    RegionStarted, RoundVerified, RunStarted, TokensCommitted, WindowStepped)
from app.gui.views.rounds_state import RoundsModel
from app.gui.views.window_state import WindowModel

KEEP_DOCUMENTS = 4  # documents whose latest run the dock keeps for playback (the shown and the live one always)
PLAYBACK_REGIONS = 200  # regions of one document whose rounds, steps and tokens are kept (the latest ones)
# the per-token events of a region: what is dropped when its rounds are (RegionStarted/Finished and the rest stay)
_REGION_STEPS = (RoundVerified, TokensCommitted, WindowStepped, NgramBanned, PrefixLaid)


def document_key(path: str) -> str:
    """One spelling per document: a relative path (a replayed trace's) and its absolute one are the same."""
    if not path:
        return ""
    return os.path.normcase(os.path.normpath(os.path.abspath(os.path.expanduser(path))))


def document_name(path: str) -> str:
    return Path(path).name if path else ""


def trace_document(events) -> str:
    """The document a recorded run read: its DocumentOpened's path, else its RunStarted's ("" when neither)."""
    started = ""
    for ev in events:
        if isinstance(ev, DocumentOpened):
            return ev.path
        if isinstance(ev, RunStarted) and not started:
            started = ev.document
    return started


@dataclass
class DocumentDecode:
    """One document's latest run in the dock."""

    path: str  # as the run named it (shown to the person: its file name)
    rounds: RoundsModel = field(default_factory=RoundsModel)
    window: WindowModel = field(default_factory=WindowModel)
    events: list[Event] = field(default_factory=list)  # the recording (playback, Save trace, A = the run shown)
    times: list[float] = field(default_factory=list)  # seconds since its first event
    t0: float | None = None
    position: int = 0  # events the views have applied (the playback bar's position when it was last shown)
    following_live: bool = True  # live events are applied as they come (False while the person scrubs)
    sink: Callable[[Event], None] | None = None  # a replayed trace: where its events go (the window)
    reset_sink: Callable[[], None] | None = None
    shown_region: str | None = None  # the region the rounds view showed when the person left this document
    ended: bool = False  # its live run has finished (or was cancelled): nothing more will be recorded
    region_order: dict[str, None] = field(default_factory=dict)  # regions recorded, the latest started last
    trimmed: set[str] = field(default_factory=set)  # regions whose rounds `trim` dropped

    @property
    def key(self) -> str:
        return document_key(self.path)

    @property
    def name(self) -> str:
        return document_name(self.path)

    def has_content(self) -> bool:
        return bool(self.events or self.rounds.regions or self.window.streams)

    def clear(self) -> None:
        """A new run of this document replaces the last one: models and recording start afresh."""
        self.rounds.reset()
        self.window.reset()
        self.events, self.times, self.t0 = [], [], None
        self.position = 0
        self.following_live = True
        self.sink = self.reset_sink = None
        self.shown_region = None
        self.ended = False
        self.region_order = {}
        self.trimmed = set()

    def record(self, event: Event, when: float) -> None:
        """Keep a live event (and its time) in the recording."""
        self.events.append(event)
        self.times.append(when)
        if isinstance(event, RegionStarted):
            self.region_order.pop(event.region_id, None)
            self.region_order[event.region_id] = None

    def trim(self, regions: int) -> list[str]:
        """Keep the rounds, steps and tokens of the latest `regions` regions only (memory stays flat over a long
        document): older regions' per-token events leave the recording, their RegionFinished its token lists and
        per-line and per-round statistics (what the rounds and the inspector drew; the session keeps the block's),
        their rounds the model, and a page all of whose regions went keeps their boxes in its LayoutDone but not their
        text-layer text and layout extras; what each region got (its text, its scalar statistics: the baseline
        rate, a server's figures) stays. Trims in batches (an eighth over the bound), so a long run pays it rarely.
        Returns the regions dropped."""
        order = list(self.region_order)
        if regions <= 0 or len(order) <= regions + max(4, regions // 8):
            return []
        drop = set(order[: len(order) - regions])
        for rid in drop:
            del self.region_order[rid]
        self.trimmed |= drop
        kept_events, kept_times = [], []
        for ev, t in zip(self.events, self.times):
            rid = getattr(ev, "region_id", None)
            if rid in drop and isinstance(ev, _REGION_STEPS):
                continue
            if rid in drop and isinstance(ev, RegionFinished):
                ev = dataclasses.replace(ev, tokens=[], logprobs=[], stats=slim_stats(ev.stats))
            elif isinstance(ev, LayoutDone) and ev.regions and _slimmable(ev, self.trimmed):
                ev = dataclasses.replace(ev, regions=[_slim_region(r) for r in ev.regions])
            kept_events.append(ev)
            kept_times.append(t)
        self.events[:] = kept_events  # the same lists: the playback bar holds them
        self.times[:] = kept_times
        self.position = min(self.position, len(self.events))
        self.rounds.forget(drop)
        for rid in drop:
            self.window.streams.pop(rid, None)
        if self.window.current in drop:
            self.window.current = None
        self.window.version += 1
        return sorted(drop)

    def catch_up(self) -> None:
        """Apply the recorded events the views have not applied yet (the person scrubbed back, then left)."""
        for ev in self.events[self.position:]:
            self.rounds.feed(ev)
            self.window.feed(ev)
        self.position = len(self.events)
        self.following_live = True


# what a trimmed region's RegionFinished keeps of its statistics besides the plain numbers and words
_KEPT_STATS = ("server", "spec")
# what a page's regions keep in its LayoutDone once all of them are trimmed (where they were, what they were)
_KEPT_REGION = ("id", "page", "box", "label", "task", "order", "box_pt", "dpi", "score", "source", "flags")


def slim_stats(stats: dict) -> dict:
    """A trimmed region's statistics: the numbers, words and flags, and a server's figures; not the lists and
    tables per line and per round."""
    return {k: v for k, v in (stats or {}).items()
            if k in _KEPT_STATS or v is None or isinstance(v, (bool, int, float, str))}


def _slimmable(ev: LayoutDone, trimmed: set[str]) -> bool:
    ids = [r.get("id") for r in ev.regions if isinstance(r, dict)]
    return bool(ids) and all(i in trimmed for i in ids) and any(set(r) - set(_KEPT_REGION) for r in ev.regions)


def _slim_region(region: dict) -> dict:
    return {k: v for k, v in region.items() if k in _KEPT_REGION} if isinstance(region, dict) else region


class DecodeStore:
    """Documents' decodes by document, the most recently used last; at most `keep` of them."""

    def __init__(self, keep: int = KEEP_DOCUMENTS) -> None:
        self.keep = max(1, keep)
        self._docs: OrderedDict[str, DocumentDecode] = OrderedDict()
        self.dropped: set[str] = set()  # documents whose decode was dropped to stay within `keep`

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, path: str) -> bool:
        return document_key(path) in self._docs

    def documents(self) -> list[DocumentDecode]:
        return list(self._docs.values())

    def get(self, path: str) -> DocumentDecode | None:
        return self._docs.get(document_key(path))

    def open(self, path: str, *, pinned: tuple[DocumentDecode | None, ...] = ()) -> DocumentDecode:
        """The decode of `path` (new when there is none), marked most recently used; the oldest beyond `keep` go,
        never one in `pinned` (the shown and the live document)."""
        key = document_key(path)
        doc = self._docs.get(key)
        if doc is None:
            doc = self._docs[key] = DocumentDecode(path)
        self._docs.move_to_end(key)
        self.dropped.discard(key)
        self._trim(pinned + (doc,))
        return doc

    def forget(self, path: str) -> DocumentDecode | None:
        """The document was closed: its decode goes."""
        return self._docs.pop(document_key(path), None)

    def clear(self) -> None:
        self._docs.clear()
        self.dropped.clear()

    def _trim(self, pinned: tuple[DocumentDecode | None, ...]) -> None:
        keep = {id(d) for d in pinned if d is not None}
        for key in list(self._docs):
            if len(self._docs) <= self.keep:
                break
            doc = self._docs[key]
            if id(doc) in keep:
                continue
            del self._docs[key]
            if doc.has_content():
                self.dropped.add(key)
