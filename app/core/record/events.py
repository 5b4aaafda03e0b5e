"""The event vocabulary: one set of plain dataclasses shared by the decoders, the pipeline, the GUI, trace files
and tests.

Every event is a fact in the past tense. Events carry integers, floats and short strings only (never tensors or
images), so a trace file (JSON lines, one event per line) can be replayed on a machine with no model at all and
drive the GUI exactly like a live run. Token texts travel with the token ids for that reason.

What must never live here: anything that computes, renders or imports torch/Qt.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

_REGISTRY: dict[str, type["Event"]] = {}


@dataclass
class Event:
    """Base class. `type` is the stable name written to trace files."""

    type: ClassVar[str] = "event"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type in _REGISTRY and _REGISTRY[cls.type] is not cls:
            raise TypeError(f"event type {cls.type!r} registered twice")
        _REGISTRY[cls.type] = cls

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))


def event_from_dict(data: dict[str, Any]) -> Event:
    """Inverse of `Event.to_dict`; unknown keys are ignored so newer traces still open in older apps."""
    data = dict(data)
    kind = data.pop("type", None)
    cls = _REGISTRY.get(kind)
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    for f in dataclasses.fields(cls):  # JSON has no tuples; restore them where the field default is one
        if f.name in kwargs and isinstance(kwargs[f.name], list) and f.name in _TUPLE_FIELDS:
            kwargs[f.name] = tuple(kwargs[f.name])
        nested = _NESTED_LISTS.get(f.name)  # lists of small dataclasses come back as dicts
        if nested is not None and isinstance(kwargs.get(f.name), list):
            kwargs[f.name] = [nested.from_dict(x) if isinstance(x, dict) else x for x in kwargs[f.name]]
    return cls(**kwargs)


def event_from_json(line: str) -> Event:
    return event_from_dict(json.loads(line))


_TUPLE_FIELDS = {"attended", "box", "box_pt"}
_NESTED_LISTS: dict[str, Any] = {}  # field name -> dataclass of its items (filled below, once the classes exist)


# --- run and document lifecycle -------------------------------------------------------------------------------


@dataclass
class RunStarted(Event):
    """A run began: which engine reads which document, on which device."""

    type: ClassVar[str] = "run_started"
    engine: str
    document: str = ""
    model: str = ""
    device: str = ""
    dtype: str = ""
    block_size: int = 0


@dataclass
class PhaseChanged(Event):
    """A named phase of a run: loading_model, rendering, layout, decoding, assembling. `current/total` count the
    phase's units (e.g. region 7 of 18) when it has any."""

    type: ClassVar[str] = "phase_changed"
    phase: str
    detail: str = ""
    current: int = 0
    total: int = 0


@dataclass
class DocumentOpened(Event):
    type: ClassVar[str] = "document_opened"
    path: str
    page_count: int
    title: str = ""
    warnings: list[str] = field(default_factory=list)  # e.g. a damaged file that was repaired


@dataclass
class PageRendered(Event):
    type: ClassVar[str] = "page_rendered"
    page: int  # 0-based
    width: int  # pixels at `dpi`
    height: int
    dpi: float


@dataclass
class LayoutDone(Event):
    """Regions of one page, in reading order, and the frame of the page their boxes are in. Each region is
    `Region.to_dict()` (see app.core.document.regions). Sent by the pipeline only."""

    type: ClassVar[str] = "layout_done"
    page: int
    regions: list[dict[str, Any]]
    source: str = ""  # ppdoclayout | pymupdf | page | unlimited
    width_pt: float = 0.0
    height_pt: float = 0.0
    dpi: float = 0.0  # of `box` (0: unknown, an old trace)
    width_px: int = 0
    height_px: int = 0
    has_text_layer: bool = False
    rotation: int = 0  # degrees the page was turned clockwise to be read (the frame is of the page as read)
    skew: float = 0.0  # degrees it was then straightened by


@dataclass
class RegionStarted(Event):
    type: ClassVar[str] = "region_started"
    region_id: str
    page: int
    task: str  # text | table | formula
    engine: str
    prompt_tokens: int = 0
    max_new_tokens: int = 0
    stop_ids: list[int] = field(default_factory=list)  # the checkpoint's stop ids (a view tells a stop token from text)


# --- decoding ----------------------------------------------------------------------------------------------------


@dataclass
class SlotInspection:
    """The reject inspector at one candidate slot of a round (0 = a0, 1..B = drafts): what the drafter and the
    verifier believed there, from the round's own logits. Probabilities in 0..1, entropies in bits; `margin` = the
    verifier's top-1 probability minus its probability of the drafted token (0 at an accepted slot; small = a close
    call). `*_texts` are the top tokens' own texts."""

    position: int
    drafted: int
    accepted: bool
    draft_top: list[int]
    draft_probs: list[float]
    verify_top: list[int]
    verify_probs: list[float]
    draft_entropy: float = 0.0
    verify_entropy: float = 0.0
    draft_p_drafted: float = 0.0  # the drafter's probability of its own token
    verify_p_drafted: float = 0.0  # the verifier's probability of the drafted token
    margin: float = 0.0
    draft_texts: list[str] = field(default_factory=list)
    verify_texts: list[str] = field(default_factory=list)
    drafted_text: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SlotInspection":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    @classmethod
    def from_raw(cls, raw: dict[str, Any], texts) -> "SlotInspection":
        """From the decoder's plain dict (app.core.decoding.inspector) and `texts(ids) -> list[str]`."""
        slot = cls.from_dict(raw)
        slot.draft_texts = list(texts(slot.draft_top))
        slot.verify_texts = list(texts(slot.verify_top))
        slot.drafted_text = texts([slot.drafted])[0]
        return slot


def inspections(raw: list[dict[str, Any]], texts) -> list[SlotInspection]:
    """A Round's inspector dicts as events' SlotInspection records, their token texts filled by `texts`."""
    return [SlotInspection.from_raw(r, texts) for r in raw]


@dataclass
class RoundVerified(Event):
    """One self-speculative round (docs/architecture.md, The self-speculative round): draft forward then verify forward.

    candidates = [a0, d1..dB]; verified[i] = the verifier's argmax for the position of candidates[i];
    k = first i with candidates[i] != verified[i] (B+1 when all match); new_tokens = candidates[:k] + [verified[k]]
    or candidates + [bonus], already truncated at a stop id / max_new_tokens.
    """

    type: ClassVar[str] = "round_verified"
    region_id: str
    round_index: int
    k: int
    candidates: list[int]
    verified: list[int]
    new_tokens: list[int]
    text: str  # decoded text of new_tokens (what this round appended to the output)
    draft_ms: float
    verify_ms: float
    cache_len: int  # cached tokens after the round's crop
    candidate_texts: list[str] = field(default_factory=list)
    verified_texts: list[str] = field(default_factory=list)
    bonus: int | None = None  # the extra token when all B+1 candidates were accepted
    block_size: int = 0
    output_len: int = 0  # response tokens committed so far, this round included
    forwards: int = 2  # draft + verify; 1 when a0 alone ended the decode (no verify), 0 when the prefill's token did
    # the reject inspector (only while someone listens): the first rejected slot (and neighbours, or every slot)
    inspected: list[SlotInspection] = field(default_factory=list)
    probs: list[float] = field(default_factory=list)  # the verifier's probability of each new token (inspector on)


@dataclass
class TokensCommitted(Event):
    """Autoregressive decoding committed one token (or a small batch)."""

    type: ClassVar[str] = "tokens_committed"
    region_id: str
    step: int  # index of the first token in the response
    tokens: list[int]
    text: str
    ms: float
    cache_len: int = 0
    token_texts: list[str] = field(default_factory=list)


@dataclass
class PrefixLaid(Event):
    """R-SWA decoding (docs/architecture.md, The R-SWA window): the pinned prefix is in the cache. `segments` describe
    it left to right, each {"kind": "bos"|"image"|"prompt", "label": str, "start": int, "end": int} (end exclusive,
    token positions)."""

    type: ClassVar[str] = "prefix_laid"
    region_id: str
    prefix_len: int
    window: int
    segments: list[dict[str, Any]]
    layers: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    dtype_bytes: int = 0


@dataclass
class WindowStepped(Event):
    """One R-SWA decode step. Integers only, read from the real cache. `attended` is the half-open range of output
    indices visible to the step's query (the fed token included); `evicted` the output index that left the window
    at this step, if any."""

    type: ClassVar[str] = "window_stepped"
    region_id: str
    step: int
    token: int
    text: str
    prefix_len: int
    decoded: int
    attended: tuple[int, int]
    evicted: int | None
    cache_positions: int
    cache_bytes: int
    full_positions: int
    full_bytes: int
    ms: float = 0.0


@dataclass
class NgramBanned(Event):
    """The no-repeat n-gram blocker removed `token` at `step`; the repeated n-gram began at output index
    `ngram_start`."""

    type: ClassVar[str] = "ngram_banned"
    region_id: str
    step: int
    token: int
    ngram_start: int
    text: str = ""


@dataclass
class PageEncoded(Event):
    """A page image went through the vision encoder (whole-document engines encode one page at a time)."""

    type: ClassVar[str] = "page_encoded"
    page: int
    tokens: int
    ms: float = 0.0


@dataclass
class RegionFinished(Event):
    type: ClassVar[str] = "region_finished"
    region_id: str
    text: str
    stats: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)  # per token, as RegionResult.logprobs (empty: none reported)


@dataclass
class TextLayerCompared(Event):
    """A page's decoded blocks against the PDF's own text layer: per block `{"region_id", "cer", "reference",
    "reference_chars"}` (reference = the text-layer words inside the block, for a diff) and the page's CER. Emitted by the pipeline
    after each decoded page (and after regions are decoded again); it also stores CER in `Region.extra`."""

    type: ClassVar[str] = "text_layer_compared"
    page: int
    blocks: list[dict[str, Any]] = field(default_factory=list)
    cer: float | None = None


@dataclass
class PageFinished(Event):
    type: ClassVar[str] = "page_finished"
    page: int
    regions: int = 0
    ms: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # ms per stage (app.core.pipeline.page_stages)


@dataclass
class ErrorRaised(Event):
    """Something failed; `message` is written for a person (names the file/model and the cause)."""

    type: ClassVar[str] = "error"
    message: str
    where: str = ""
    region_id: str = ""
    fatal: bool = True


@dataclass
class RunCancelled(Event):
    type: ClassVar[str] = "run_cancelled"
    where: str = ""
    stats: dict[str, Any] = field(default_factory=dict)  # of what the document holds now, as RunFinished's


@dataclass
class RunFinished(Event):
    type: ClassVar[str] = "run_finished"
    stats: dict[str, Any] = field(default_factory=dict)
    ms: float = 0.0


_NESTED_LISTS["inspected"] = SlotInspection


def all_event_types() -> dict[str, type[Event]]:
    return dict(_REGISTRY)
