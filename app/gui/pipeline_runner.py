"""What the decoding worker runs: the core pipeline, with the loaded engine and layout kept between runs (the
model is loaded once per engine choice, not once per document) and the last document's pipeline kept open so a
page can be decoded again without laying it out again.

Runs on the worker thread only; it passes the pipeline's events through untouched (the pipeline itself announces
each page's comparison with the text layer, `TextLayerCompared`). What must never live here: Qt, widgets.
"""
from __future__ import annotations

from typing import Any

from app.core import events as ev


def _clean(value: Any) -> Any:
    return None if value in ("auto", "", 0) else value


class PipelineRunner:
    def __init__(self) -> None:
        self.engine = None
        self.engine_key: tuple | None = None
        self.layout = None
        self.layout_key: tuple | None = None
        self.pipe = None  # the last run's pipeline (document still open)
        self.device = ""

    def _options(self, request):
        from app.core.pipeline import PipelineOptions
        from app.gui.session import pictures_dir

        o = dict(request.options)
        engine_options = dict(o.get("engine_options") or {})
        if o.get("max_new_tokens"):
            engine_options["max_new_tokens"] = int(o["max_new_tokens"])
        from app.core.document import DEFAULT_DPI

        return PipelineOptions(
            engine=request.engine or "auto",
            dpi=float(o.get("dpi") or DEFAULT_DPI),
            layout=o.get("layout") or "auto",
            pages=request.pages,
            password=request.password,
            device=_clean(o.get("device")),
            dtype=_clean(o.get("dtype")),
            model_path=_clean(o.get("model_path")),
            layout_model_path=_clean(o.get("layout_model_path")),
            block_size=_clean(o.get("block_size")),
            engine_options=engine_options,
            picture_dir=str(pictures_dir(str(request.path))),  # so the editor and preview show the pictures
        )

    def run(self, request, emit, cancel):
        from app.core.pipeline import Pipeline, PipelineError, resolve_engine_name

        options = self._options(request)
        engine_key = (resolve_engine_name(options.engine, options.model_path), options.model_path, options.device,
                      options.dtype, options.block_size, tuple(sorted(options.engine_options.items())))
        layout_key = (options.layout, options.layout_model_path, options.device)
        if engine_key != self.engine_key:
            self._drop_engine()
        if layout_key != self.layout_key:
            self.layout = None
        if request.pages and self._can_redecode(request, options, engine_key):
            return self._redecode(request, emit, cancel)
        if self.pipe is not None:
            self.pipe.close()
            self.pipe = None
        pipe = Pipeline(options, emit, cancel, engine=self.engine, layout=self.layout)
        self.pipe = pipe
        try:
            output = pipe.run(request.path)
        except PipelineError:
            output = None  # the pipeline has already emitted an ErrorRaised for the person
        self.engine, self.engine_key = pipe.engine, engine_key if pipe.engine is not None else None
        self.layout, self.layout_key = pipe.layout, layout_key if pipe.layout is not None else None
        self.device = str(getattr(self.engine, "device", "") or options.device or "cpu")
        return output

    def _can_redecode(self, request, options, engine_key) -> bool:
        pipe = self.pipe
        if pipe is None or pipe.output is None or pipe.document is None or self.engine is None:
            return False
        if getattr(self.engine, "kind", "region") == "document":  # it reads pages, not regions: read them again
            return False
        if str(pipe.document.path) != str(request.path) and pipe.output.path != str(request.path):
            return False
        laid_out = {p.index for p in pipe.output.pages}
        return engine_key == self.engine_key and all(i in laid_out for i in request.pages)

    def _redecode(self, request, emit, cancel):
        """Decode laid-out pages again with the loaded model (layout and region ids unchanged)."""
        import time

        from app.core.engine import Cancelled

        pipe = self.pipe
        pipe.emit, pipe.cancel = emit, cancel
        t0 = time.perf_counter()
        emit(ev.RunStarted(engine=pipe.engine_name, document=str(request.path), device=self.device))
        # the document and the unchanged layout again, so that a trace of this run replays on its own
        emit(ev.DocumentOpened(str(request.path), pipe.document.page_count, pipe.document.title))
        for i in request.pages:
            page = pipe.output.page(i)
            emit(ev.LayoutDone(i, [r.to_dict() for r in page.regions], page.layout))
        try:
            if request.region_ids:
                pipe.decode_regions(request.region_ids)
            for i in [] if request.region_ids else request.pages:
                cancel.check()
                pipe.decode_page(i)
        except Cancelled:
            emit(ev.RunCancelled(where="decoding"))
            return pipe.output
        emit(ev.RunFinished(stats={"pages": len(request.pages)}, ms=round((time.perf_counter() - t0) * 1000, 1)))
        return pipe.output

    def _drop_engine(self) -> None:
        engine, self.engine, self.engine_key = self.engine, None, None
        close = getattr(engine, "close", None)
        if close:
            close()

    def close(self) -> None:
        if self.pipe is not None:
            self.pipe.close()
            self.pipe = None
        self._drop_engine()
        self.layout = None
