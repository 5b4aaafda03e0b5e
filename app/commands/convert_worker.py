"""One worker process of `convert --jobs N` (app.commands.convert_jobs starts them, spawned): it limits
its native kernels to its share of the cores, loads the engine and layout once, and reads the units it is
sent — an input, or a run of an input's pages — with the same pipeline `convert` runs in process. Each page
goes back to the parent the moment it is finished (the parent keeps it in the input's checkpoint), and each
unit ends with one message saying how it went.

Messages on the result queue: ("page", unit id, pickled (PageOutput, engine, layout, input DPI)), ("end", unit id,
UnitEnd), and ("gone", worker id, "") when the worker has closed its engine and leaves. A worker ignores
Ctrl+C (the parent decides): the shared cancel event stops the page it is reading within a region (the
pipeline's cancel token); a worker whose parent is gone leaves.

What must never live here: scheduling, writing output files, printing (the parent's).
"""
from __future__ import annotations

import dataclasses
import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Unit:
    id: int
    rank: int  # the input's place in the run
    path: Path
    pages: tuple[int, ...] | None  # 0-based pages; None: the pages the options name (the whole input)


@dataclass
class UnitEnd:
    engine: str = ""
    layout: str = ""
    input_dpi: float = 0.0  # the engine's crop DPI (the parent saves picture crops at it)
    warnings: list[str] = field(default_factory=list)  # the run's non-fatal errors (not the document's)
    engine_stats: dict[str, Any] | None = None
    error: str = ""  # set when the unit failed: the message for a person
    kind: str = ""  # PipelineError's kind ("engine", "layout", "document", "options", ...) or "internal"
    cancelled: bool = False


def serve(worker: int, units, results, cancel_event, threads: int, options, verbose: bool) -> None:
    """The worker's whole life: read units from `units` (None ends it) until told to stop."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to decide
    from app.core.base.threads import limit_threads

    limit_threads(threads)  # before any model is loaded
    from app.core.base.cancel import CancelToken
    from app.core.base.noise import quiet_third_party

    quiet_third_party(verbose=verbose)
    token = CancelToken()
    threading.Thread(target=lambda: (cancel_event.wait(), token.cancel()), daemon=True).start()
    threading.Thread(target=_orphaned, args=(os.getppid(), token), daemon=True).start()
    models: dict[str, Any] = {"engine": None, "layout": None}
    try:
        while not token.cancelled:
            unit = units.get()
            if unit is None:
                break
            results.put(("end", unit.id, read_unit(unit, options, models, token, results)))
    finally:
        if models["engine"] is not None:
            models["engine"].close()
        results.put(("gone", worker, ""))


def _orphaned(parent: int, token) -> None:
    """The parent is gone (killed): stop reading and leave, as a layout child does."""
    while os.getppid() == parent:
        time.sleep(1.0)
    token.cancel()
    os._exit(1)


def read_unit(unit: Unit, options, models: dict, token, results) -> UnitEnd:
    """Read one unit with the worker's models; every finished page is put on `results` as it comes."""
    from app.core.pipeline import Pipeline, PipelineError
    from app.core.record.events import ErrorRaised, PageFinished

    if unit.pages is not None:
        options = dataclasses.replace(options, pages=",".join(str(i + 1) for i in unit.pages))
    end = UnitEnd()
    pipe = None

    def emit(event) -> None:
        if isinstance(event, ErrorRaised) and not event.fatal:
            end.warnings.append(event.message)
        elif isinstance(event, PageFinished) and pipe is not None and pipe.output is not None:
            out = pipe.output
            results.put(("page", unit.id, pickle.dumps((out.page(event.page), out.engine, out.layout,
                                                                float(pipe.engine.input_dpi)))))

    pipe = Pipeline(options, emit=emit, cancel=token, engine=models["engine"], layout=models["layout"])
    try:
        out = pipe.run(unit.path)
        own = set(out.warnings)  # the document's warnings: the parent's own opening says them once
        end.warnings = [w for w in end.warnings if w not in own]
        end.engine, end.layout = out.engine, out.layout
        end.input_dpi = float(pipe.engine.input_dpi)
        end.engine_stats = out.stats.get("engine_stats")
        end.cancelled = out.cancelled or token.cancelled
    except PipelineError as exc:
        end.error, end.kind, end.cancelled = str(exc), exc.kind, token.cancelled
    except Exception as exc:  # noqa: BLE001 - a bug must still end in a message, not a silent worker
        if os.environ.get("SCRIPTORIUM_DEBUG"):
            import traceback

            traceback.print_exc()
        end.error, end.kind = f"{unit.path.name}: unexpected {type(exc).__name__}: {exc}", "internal"
        end.cancelled = token.cancelled
    finally:
        pipe.close()
    models["engine"], models["layout"] = pipe.engine, pipe.layout  # the next unit reuses them
    return end
