"""What the one worker lane runs for the window: the core pipeline, with the loaded engine and layout kept between
runs (the model is loaded once per engine choice, not once per document) and the last document's pipeline kept
open, so a page or a region can be read again without laying it out again (`Pipeline.rerun`).

Runs on the worker thread only; it passes the pipeline's events through untouched. What must never live here: Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.core.engines import Emit, resolve_engine_name
from app.core.base.cancel import CancelToken
from app.core.pipeline import DocumentOutput, Pipeline, PipelineError, PipelineOptions
from app.core.document.regions import Region


@dataclass
class RunRequest:
    """One run the window asks for: a document, or some of its laid-out pages or regions, with these options."""

    path: str
    options: PipelineOptions
    pages: list[int] | None = None  # None: every page
    region_ids: list[str] | None = None  # read just these regions again
    run_id: int = 0
    # pages a person laid out (app.core.review.region_edits): their regions (Region.to_dict), read instead of a layout
    layouts: dict[int, list[dict]] = field(default_factory=dict)
    # pages read turned as a person said, or as they were read when a person laid them out: (turn, skew)
    turns: dict[int, tuple[int, float]] = field(default_factory=dict)


class PipelineRunner:
    def __init__(self) -> None:
        self.engine = None
        self.engine_key: tuple | None = None
        self.layout = None
        self.layout_key: tuple | None = None
        self.pipe: Pipeline | None = None  # the last run's pipeline (document still open)

    @property
    def device(self) -> str:
        return self.engine.device if self.engine is not None else ""

    def run(self, request: RunRequest, emit: Emit, cancel: CancelToken) -> DocumentOutput | None:
        """Run `request`; None when it failed (the pipeline has emitted the fatal ErrorRaised for the person)."""
        o = request.options
        engine_key = (resolve_engine_name(o.engine, o.model_path), o.model_path, o.device, o.dtype, o.block_size,
                      tuple(sorted(o.engine_options.items())))
        layout_key = (o.layout, o.layout_model_path, o.device)
        if engine_key != self.engine_key:
            self._drop_engine()
        if layout_key != self.layout_key:
            self.layout = None
        try:
            if request.pages and self._can_rerun(request, engine_key):
                self.pipe.emit, self.pipe.cancel = emit, cancel
                self.pipe.page_turns.update(request.turns)
                for index, regions in request.layouts.items():  # the person's regions, as they are now
                    if index in {p.index for p in self.pipe.output.pages}:
                        self.pipe.set_regions(index, [Region.from_dict(r) for r in regions]).layout = "person"
                return self.pipe.rerun(request.pages, request.region_ids)
            if self.pipe is not None:
                self.pipe.close()
            self.pipe = Pipeline(replace(o, pages=request.pages), emit, cancel, engine=self.engine, layout=self.layout)
            self.pipe.fixed_layouts = {i: [_unread(r) for r in regions] for i, regions in request.layouts.items()}
            self.pipe.page_turns = dict(request.turns)
            try:
                return self.pipe.run(request.path)
            finally:
                self.engine, self.engine_key = self.pipe.engine, engine_key if self.pipe.engine is not None else None
                self.layout, self.layout_key = self.pipe.layout, layout_key if self.pipe.layout is not None else None
        except PipelineError:
            return None

    def _can_rerun(self, request: RunRequest, engine_key: tuple) -> bool:
        pipe = self.pipe
        if pipe is None or pipe.output is None or pipe.document is None or self.engine is None:
            return False
        if self.engine.kind == "document":  # it reads pages, not regions: read them again
            return False
        if pipe.output.path != str(request.path):
            return False
        laid_out = {p.index for p in pipe.output.pages}
        if any(pipe.document.orientation(i)[0] != turn for i, (turn, _skew) in request.turns.items()
               if i in request.pages):
            return False  # a page turned another way is laid out again
        return engine_key == self.engine_key and all(i in laid_out for i in request.pages)

    def _drop_engine(self) -> None:
        engine, self.engine, self.engine_key = self.engine, None, None
        if engine is not None:
            engine.close()

    def close(self) -> None:
        if self.pipe is not None:
            self.pipe.close()
            self.pipe = None
        self._drop_engine()
        self.layout = None


def _unread(d: dict) -> Region:
    """A person's region as a fresh run reads it: its place and kind, without an earlier reading."""
    r = Region.from_dict(d)
    r.text = ""
    r.flags = [f for f in r.flags if f not in ("error", "cancelled")]
    for key in ("engine", "stats", "cer", "reference_chars", "confidence"):
        r.extra.pop(key, None)
    return r
