"""`scriptorium convert INPUT... -o OUTDIR`: PDFs/images → Markdown + JSON (+ picture crops), headless.

For each input it writes OUTDIR/<stem>.md, OUTDIR/<stem>.json (`--formats`: any of md, json, html) and
OUTDIR/<stem>_images/*.png as one unit (a later input whose stem an earlier one took gets "<stem>-2", "-3"...),
shows a progress line on a terminal (pages, regions, tokens/s) and prints one summary line. The output folder is
checked before any decoding; third-party warnings are hidden unless `-v`. `--trace FILE` records the event stream
as JSON lines (app.core.trace); with several inputs each gets its own file, FILE's stem + "-<output stem>".

Exit codes: 0 every input converted cleanly; 1 at least one input could not be read (bad/encrypted/damaged file,
bad --pages) or its output could not be written; 2 bad command line; 3 the engine or layout could not be loaded, or
--device/--dtype names none (for every engine); 4 converted, but with warnings (a repaired file, a region that
failed, a page's layout past its time budget, a page of headers/footers only); 130 interrupted (Ctrl+C). The
worst outcome over all inputs wins (1 and 3 over 4).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from app.commands.arguments import positive
from app.core.pipeline.options import DEFAULT_FORMATS, DEFAULT_LAYOUT_TIMEOUT_S, TEXT_LAYER_MODES, parse_formats
from app.core.wording import count
from app.core.engines import ENGINES  # names only: neither module imports torch
from app.core.layout import LAYOUTS

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_ENGINE, EXIT_WARNINGS, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
ENGINE_CHOICES = ("auto", *ENGINES)
LAYOUT_CHOICES = LAYOUTS
MAX_DPI = 1200.0  # a page at 1200 DPI is already ~10k px a side


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="PDF or image files (PNG, JPEG, TIFF, WebP, BMP)")
    p.add_argument("-o", "--output", "--out", dest="output", required=True, metavar="OUTDIR", help="output folder")
    p.add_argument("--engine", default="auto", choices=ENGINE_CHOICES,
                   help="OCR engine (auto: GravityOCR when its weights are found, else built-in, else classic)")
    p.add_argument("--model", default=None, metavar="PATH", help="model folder for the engine")
    p.add_argument("--layout", default="auto", choices=LAYOUT_CHOICES,
                   help="layout (auto: PP-DocLayoutV3 when its weights are found, else PyMuPDF)")
    p.add_argument("--layout-model", default=None, metavar="PATH", help="PP-DocLayoutV3 model folder")
    p.add_argument("--dpi", type=positive(float, MAX_DPI), default=144.0,
                   help="page rendering DPI for layout and boxes (default 144)")
    p.add_argument("--ocr-dpi", type=positive(float, MAX_DPI), default=None,
                   help="DPI of the crops sent to the engine (default 200)")
    p.add_argument("--pages", default=None, metavar="RANGE", help="pages to convert, 1-based: e.g. 1-5,8")
    p.add_argument("--password", default=None, help="password of encrypted PDFs")
    p.add_argument("--keep-headers", action="store_true", help="keep headers, footers, footnotes and page numbers")
    p.add_argument("--device", default=None, help="cuda, mps or cpu (default: best available)")
    p.add_argument("--dtype", default=None, help="fp32, bf16, fp16 (default: bf16 on GPU, fp32 on CPU)")
    p.add_argument("--block-size", type=positive(int), default=None,
                   help="self-speculative block size (default: checkpoint)")
    p.add_argument("--max-new-tokens", type=positive(int), default=None, help="cap on generated tokens per region")
    p.add_argument("--trace", default=None, metavar="FILE", help="write the event stream as JSON lines")
    p.add_argument("--no-compare", action="store_true", help="skip the comparison with the PDF text layer")
    p.add_argument("--text-layer", default="prefer", choices=TEXT_LAYER_MODES,
                   help="a PDF's own text layer: prefer = take its text where it is trustworthy, OCR the rest; "
                        "compare = OCR every region and measure it against the layer; ignore = OCR only "
                        "(default: prefer)")
    p.add_argument("--formats", type=_formats, default=DEFAULT_FORMATS, metavar="LIST",
                   help="output files, any of md,json,html (default md,json)")
    p.add_argument("--layout-timeout", type=_seconds, default=DEFAULT_LAYOUT_TIMEOUT_S, metavar="SECONDS",
                   help="time budget of one page's layout; past it the whole page is read as one region "
                        f"(default {DEFAULT_LAYOUT_TIMEOUT_S:g}; 0: none)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.add_argument("-v", "--verbose", action="store_true", help="also show third-party warnings and log lines")


def _formats(text: str) -> tuple[str, ...]:
    try:
        return parse_formats(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 86400 or value != value:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 86400 seconds")
    return value


class Progress:
    """A one-line progress display on stderr (terminal only): pages, regions, tokens/s."""

    def __init__(self, name: str, enabled: bool) -> None:
        self.name, self.enabled = name, enabled
        self.page = self.pages = self.region = self.regions = 0
        self.tokens = 0
        self.t_decode: float | None = None
        self.phase = ""
        self._last = 0.0

    def __call__(self, event) -> None:
        from app.core import events as ev

        if isinstance(event, ev.PhaseChanged):
            self.phase = event.phase
            if event.phase in ("rendering", "layout"):
                self.page, self.pages = event.current or self.page, event.total or self.pages
            elif event.phase == "decoding":
                self.region, self.regions = event.current, event.total
                if self.t_decode is None:
                    self.t_decode = time.perf_counter()
        elif isinstance(event, ev.TokensCommitted):
            self.tokens += len(event.tokens)
        elif isinstance(event, ev.RoundVerified):
            self.tokens += len(event.new_tokens)
        self.draw()

    @property
    def rate(self) -> float:
        if self.t_decode is None or not self.tokens:
            return 0.0
        return self.tokens / max(1e-6, time.perf_counter() - self.t_decode)

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        width = 20
        within = max(0, self.region - 1) / self.regions if self.regions else 0.0
        done = (max(0, self.page - 1) + within) / self.pages if self.pages else 0.0
        bar = "#" * int(width * max(0.0, min(1.0, done)))
        rate = f" · {self.rate:.1f} tok/s" if self.tokens else ""
        line = (f"\r{self.name[:30]} [{bar:<{width}}] page {self.page}/{self.pages} · region {self.region}/"
                f"{self.regions}{rate} · {self.phase}")
        sys.stderr.write(line[:120].ljust(100))
        sys.stderr.flush()

    def clear(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 110 + "\r")
            sys.stderr.flush()


def _trace_path(trace: str, stem: str, several: bool) -> Path:
    t = Path(trace)
    return t.with_name(f"{t.stem}-{stem}{t.suffix or '.jsonl'}") if several else t


def output_stems(inputs: list[str]) -> list[str]:
    """One output stem per input: the file's stem, with "-2", "-3"... for a later input whose stem an earlier one
    took (a/report.pdf and b/report.pdf must not overwrite each other's report.md)."""
    taken: set[str] = set()
    stems = []
    for raw in inputs:
        base = Path(raw).stem or "document"
        stem, n = base, 1
        while stem.lower() in taken:  # case-insensitive file systems would collide too
            n += 1
            stem = f"{base}-{n}"
        taken.add(stem.lower())
        stems.append(stem)
    return stems


def _open_trace(path: Path, meta: dict):
    from app.core.trace import TraceWriter

    return TraceWriter(path, meta=meta)


def run(args: argparse.Namespace) -> int:
    previous = _take_over_interrupts()  # first: until a document is being read, Ctrl+C leaves at once
    try:
        return _run(args)
    finally:
        if previous is not None:  # called in-process (tests): give the caller its handler back
            import signal

            signal.signal(signal.SIGINT, previous)


def _run(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' weight-loading bar, on our stderr
    from app.core.loader import ModelError, check_device_name, check_dtype_name
    from app.core.noise import quiet_third_party
    from app.core.pipeline import PipelineOptions

    quiet_third_party(verbose=args.verbose)
    _warm_imports()  # an interrupt here leaves quietly: it must not land inside a C extension's import
    try:  # before any file is opened: a typo in --device is the same mistake for every engine and input
        check_device_name(args.device)
        check_dtype_name(args.dtype)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENGINE
    out_dir = Path(args.output)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"error: cannot create the output folder {out_dir}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    options = PipelineOptions(
        engine=args.engine, layout=args.layout, dpi=args.dpi, ocr_dpi=args.ocr_dpi, pages=args.pages,
        password=args.password, keep_headers=args.keep_headers, device=args.device, dtype=args.dtype,
        model_path=args.model, layout_model_path=args.layout_model, block_size=args.block_size,
        compare_text_layer=not args.no_compare, text_layer=args.text_layer,
        engine_options={"max_new_tokens": args.max_new_tokens} if args.max_new_tokens else {},
        formats=args.formats, layout_timeout=args.layout_timeout,
    )
    models: dict[str, object] = {"engine": None, "layout": None}  # loaded once, reused for every input
    worst = EXIT_OK
    several = len(args.inputs) > 1
    for raw, stem in zip(args.inputs, output_stems(args.inputs)):
        trace = None
        if args.trace:
            trace_path = _trace_path(args.trace, stem, several)
            try:
                trace = _open_trace(trace_path, {"input": str(raw)})
            except OSError as exc:
                print(f"error: cannot write the trace file {trace_path}: {exc.strerror or exc}", file=sys.stderr)
                return EXIT_USAGE
        try:
            code = _convert_one(Path(raw), stem, out_dir, options, models, trace, args.quiet)
        finally:
            if trace is not None:
                trace.close()
        if code == EXIT_INTERRUPTED:
            return code
        if code == EXIT_INPUT or code == EXIT_ENGINE:
            worst = code if worst in (EXIT_OK, EXIT_WARNINGS) else worst
            if code == EXIT_ENGINE:
                break  # the next input would fail the same way
        elif code == EXIT_WARNINGS and worst == EXIT_OK:
            worst = code
    return worst


class _Interrupts:
    """Ctrl+C while a document is being read or written cancels the run (the trace closed, "interrupted", exit 130,
    nothing half-written); while opening a document or loading a model — nothing is being written, and the time goes
    into imports and native loaders — the process leaves at once, quietly (app.quiet_exit).

    The run's cancel token is set first, so a KeyboardInterrupt that native code swallows (PyMuPDF turns one raised
    inside its write callback into a "Director error") still ends the run. During the layout no KeyboardInterrupt
    is raised at all: the wait on the layout child polls the token, and raising inside PyMuPDF's callbacks is what
    turned Ctrl+C into a failed layout and a finished run."""

    armed = False
    phase = ""
    cancel = None  # the CancelToken of the run in progress
    ARMED_PHASES = frozenset({"rendering", "layout", "decoding", "encoding", "assembling"})
    COOPERATIVE_PHASES = frozenset({"layout"})

    @classmethod
    def handler(cls, signum, frame) -> None:
        if cls.armed:
            first = cls.cancel is not None and not cls.cancel.cancelled
            if cls.cancel is not None:
                cls.cancel.cancel()
            if first and cls.phase in cls.COOPERATIVE_PHASES:
                return  # the layout wait sees the token within a poll; a second Ctrl+C raises
            raise KeyboardInterrupt
        from app import quiet_exit

        quiet_exit()


def _interrupted(inp: Path, progress) -> int:
    progress.clear()
    print(f"{inp.name}: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _take_over_interrupts():
    """Install `_Interrupts.handler`; returns the handler it replaced (None off the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, _Interrupts.handler)


def _warm_imports() -> None:
    """Import what every run needs (C extensions among them) before Ctrl+C can raise inside an import."""
    import numpy  # noqa: F401
    import PIL.Image  # noqa: F401
    import pymupdf  # noqa: F401
    import rapidfuzz  # noqa: F401

    import app.core.layout.budget  # noqa: F401
    import app.core.pipeline.html_render  # noqa: F401
    import app.core.pipeline.run  # noqa: F401
    import app.core.textlayer  # noqa: F401


def _convert_one(inp: Path, stem: str, out_dir: Path, options, models: dict, trace, quiet: bool) -> int:
    """Convert one input; prints its summary line (or why it failed) and returns its exit code."""
    import os

    from app.core.engines import CancelToken
    from app.core.events import ErrorRaised
    from app.core.pipeline import Pipeline, PipelineError

    progress = Progress(inp.name, not quiet and sys.stderr.isatty())
    warnings: list[str] = []

    from app.core.events import PhaseChanged

    _Interrupts.armed = False

    def emit(event) -> None:
        if isinstance(event, PhaseChanged):
            _Interrupts.armed = event.phase in _Interrupts.ARMED_PHASES
            _Interrupts.phase = event.phase
        if trace is not None:
            trace(event)
        if isinstance(event, ErrorRaised) and not event.fatal:
            warnings.append(event.message)
        progress(event)

    from app.core.pipeline.output import check_output

    try:  # before any decoding: a read-only folder must not cost the whole OCR first
        check_output(out_dir, stem, options.formats)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"{inp.name}: failed (output)")
        return EXIT_INPUT
    cancel = _Interrupts.cancel = CancelToken()
    pipe = Pipeline(options, emit=emit, cancel=cancel, engine=models["engine"], layout=models["layout"])
    t0 = time.perf_counter()
    try:
        out = pipe.run(inp)
        if cancel.cancelled:  # Ctrl+C reached the run as a cancel (or as an exception native code swallowed)
            raise KeyboardInterrupt
        files = pipe.write(out_dir, stem)
    except PipelineError as exc:
        if cancel.cancelled:
            return _interrupted(inp, progress)
        progress.clear()
        print(f"error: {exc}", file=sys.stderr)
        print(f"{inp.name}: failed ({exc.kind})")
        return EXIT_ENGINE if exc.kind in ("engine", "layout") else EXIT_INPUT
    except Exception as exc:  # noqa: BLE001 - a bug must still end in a message, not a traceback
        if cancel.cancelled:
            return _interrupted(inp, progress)
        if os.environ.get("SCRIPTORIUM_DEBUG"):
            raise
        progress.clear()
        print(f"error: {inp.name}: unexpected {type(exc).__name__}: {exc} (set SCRIPTORIUM_DEBUG=1 for the "
              "traceback, and please report it)", file=sys.stderr)
        print(f"{inp.name}: failed (internal error)")
        return EXIT_INPUT
    except KeyboardInterrupt:
        cancel.cancel()
        return _interrupted(inp, progress)  # `finally` closes the document (and the caller the trace)
    finally:
        _Interrupts.armed = False  # all written (or nothing): leaving at once loses nothing
        pipe.close()
    progress.clear()
    models["engine"], models["layout"] = pipe.engine, pipe.layout  # reuse the loaded models for the next input
    s = out.stats
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    cer = f", CER vs text layer {s['cer']:.1%}" if s.get("cer") is not None else ""
    rate = f", {s['tokens_per_s']:.1f} tok/s" if s.get("tokens_per_s") else ""
    if s.get("text_layer_blocks"):
        cer += f", {count(s['text_layer_blocks'], 'block')} from the text layer"
    flag = f", {count(len(warnings), 'warning')}" if warnings else ""
    written = next(iter(p for k, p in files.items() if k != "images"))
    print(f"{inp.name}: {count(s['pages'], 'page')}, {count(s['regions'], 'region')} ({s['decoded']} read, "
          f"{count(s['pictures'], 'picture')}), engine {out.engine}, layout {out.layout}{rate}{cer}, "
          f"{time.perf_counter() - t0:.1f} s{flag} → {written}")
    return EXIT_WARNINGS if warnings else EXIT_OK
