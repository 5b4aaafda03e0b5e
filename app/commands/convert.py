"""`scriptorium convert INPUT... -o OUTDIR`: PDFs/images (or folders of them) → Markdown + JSON (+ picture crops).

For each input it writes OUTDIR/<stem>.md, OUTDIR/<stem>.json (`--formats`: any of md, json, html, pdf = the
source's pages made searchable, docx, xlsx, alto, hocr, docling) and OUTDIR/<stem>_images/*.png as one unit (a later input whose stem an earlier one
took gets "<stem>-2", "-3"...),
shows a progress line on a terminal (pages, regions, tokens/s) and prints one summary line. The output folder is
checked before any decoding; third-party warnings are hidden unless `-v`. `--trace FILE` records the event stream
as JSON lines (app.core.record.trace); with several inputs each gets its own file, FILE's stem + "-<output stem>".
A folder is walked recursively and its tree mirrored under OUTDIR; a per-page checkpoint in OUTDIR lets `--resume`
skip the pages (and inputs) an earlier, interrupted run finished; several inputs end with a summary table
(app.commands.convert_inputs). `--engine remote --server URL...` reads regions on OCR servers (app.core.engines.remote).
Each engine's own flags are generated from its spec in the registry (app.core.engines.flags).

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
from app.core.pipeline.options import (
    ALTO_VERSIONS, AUTO_BATCH, DEFAULT_FORMATS, DEFAULT_LAYOUT_TIMEOUT_S, TEXT_LAYER_MODES, parse_formats,
)
from app.core.engines import ENGINES  # names only: neither module imports torch
from app.core.engines.flags import add_engine_arguments, engine_options, missing
from app.commands.interrupts import Interrupts as _Interrupts
from app.commands.interrupts import take_over_interrupts as _take_over_interrupts
from app.commands.interrupts import warm_imports as _warm_imports
from app.core.layout import LAYOUTS
from app.commands.exit_codes import (  # noqa: F401 - the codes are convert's
    EXIT_ENGINE, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_WARNINGS,
)

LAYOUT_CHOICES = LAYOUTS
MAX_DPI = 1200.0  # a page at 1200 DPI is already ~10k px a side


def add_arguments(p: argparse.ArgumentParser) -> None:
    from app.core.engines.glm_engine import BATCH_SIZE  # no torch at import

    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="PDF or image files (PNG, JPEG, TIFF, WebP, BMP), or folders of them (walked recursively)")
    p.add_argument("-o", "--output", "--out", dest="output", required=True, metavar="OUTDIR", help="output folder")
    p.add_argument("--engine", default="auto", choices=("auto", *ENGINES),  # the registry as it is now
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
    p.add_argument("--rotate", choices=("auto", "none"), default="auto",
                   help="auto (default): turn scanned pages the right way up (0/90/180/270) and straighten a small "
                        "skew before their layout, recorded in the JSON's page rotation and skew; none: read as they are")
    p.add_argument("--password", default=None, help="password of encrypted PDFs")
    p.add_argument("--keep-headers", action="store_true",
                   help="keep running headers, footers and page numbers (footnotes are always kept)")
    p.add_argument("--device", default=None, help="cuda, mps or cpu (default: best available)")
    p.add_argument("--dtype", default=None, help="fp32, bf16, fp16 (default: bf16 on GPU, fp32 on CPU)")
    p.add_argument("--block-size", type=positive(int), default=None,
                   help="self-speculative block size (default: checkpoint)")
    p.add_argument("--cache", choices=("dynamic", "static"), default=None,
                   help="KV cache of the decoders (default: static on CUDA, dynamic elsewhere)")
    p.add_argument("--max-new-tokens", type=positive(int), default=None, help="cap on generated tokens per region")
    p.add_argument("--batch", type=_batch, default=AUTO_BATCH, metavar="N",
                   help="regions of a page read together in one forward by a local GLM-OCR/GravityOCR engine (the same "
                        f"tokens as one at a time): 1 = one at a time, N = at most N (default 0: the engine's batch size, "
                        f"{BATCH_SIZE})")
    p.add_argument("--trace", default=None, metavar="FILE", help="write the event stream as JSON lines")
    p.add_argument("--no-compare", action="store_true", help="skip the comparison with the PDF text layer")
    p.add_argument("--text-layer", default="prefer", choices=TEXT_LAYER_MODES,
                   help="a PDF's own text layer: prefer = take its text where it is trustworthy, OCR the rest; "
                        "compare = OCR every region and measure it against the layer; ignore = OCR only "
                        "(default: prefer)")
    p.add_argument("--formats", type=_formats, default=DEFAULT_FORMATS, metavar="LIST",
                   help="output files, any of md,json,html,pdf,docx,xlsx,alto,hocr,docling (pdf: the pages with an "
                        "invisible, searchable text layer; xlsx: the tables; alto: ALTO XML; docling: DoclingDocument "
                        "JSON; default md,json)")
    p.add_argument("--alto-version", type=int, choices=ALTO_VERSIONS, default=4,
                   help="the ALTO the alto format writes: 4 (ALTO 4.4, default) or 2 (ALTO 2.1)")
    p.add_argument("--layout-timeout", type=_seconds, default=DEFAULT_LAYOUT_TIMEOUT_S, metavar="SECONDS",
                   help="time budget of one page's layout; past it the whole page is read as one region "
                        f"(default {DEFAULT_LAYOUT_TIMEOUT_S:g}; 0: none)")
    p.add_argument("--jobs", type=positive(int), default=1, metavar="N",
                   help="read with N worker processes, each with its share of the cores: inputs, and the pages "
                        "of a long input, side by side; the same outputs (default 1: in this process)")
    p.add_argument("--resume", action="store_true",
                   help="skip the pages and inputs an earlier run into the same OUTDIR finished (its checkpoint)")
    add_engine_arguments(p)
    # headless, the built-in decoder reads only the lines it could change (app.core.engines.builtin.sure_lines)
    p.set_defaults(engine_builtin__decoder="unsure")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.add_argument("-v", "--verbose", action="store_true", help="also show third-party warnings and log lines")


def add_remote_arguments(p: argparse.ArgumentParser) -> None:
    """The remote engine's flags alone (`bench remote`'s), generated from its spec like convert's."""
    from app.core.engines.flags import add_engine_arguments

    add_engine_arguments(p, ["remote"])


def remote_options(args: argparse.Namespace) -> dict:
    from app.core.engines.flags import engine_options

    return engine_options(args, "remote")


def _formats(text: str) -> tuple[str, ...]:
    try:
        return parse_formats(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _batch(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is below 0 (0: the engine's batch size)")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= 86400 or value != value:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 86400 seconds")
    return value


def _trace_path(trace: str, stem: str, several: bool) -> Path:
    t = Path(trace)
    return t.with_name(f"{t.stem}-{stem}{t.suffix or '.jsonl'}") if several else t


def _open_trace(path: Path, meta: dict):
    from app.core.record.trace import TraceWriter

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

    from app.commands.unknown_word import unreadable_inputs

    refusal = unreadable_inputs(args.inputs)
    if refusal:  # a mistyped path or an empty folder is a usage error: said once, before anything loads
        print(f"scriptorium convert: error: {refusal}", file=sys.stderr)
        return EXIT_USAGE

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers' weight-loading bar, on our stderr
    from app.core.checkpoints.loader import ModelError, check_device_name, check_dtype_name
    from app.core.base.noise import quiet_third_party
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
        cache=args.cache, compare_text_layer=not args.no_compare, text_layer=args.text_layer,
        engine_options={"max_new_tokens": args.max_new_tokens} if args.max_new_tokens else {},
        formats=args.formats, alto_version=args.alto_version, layout_timeout=args.layout_timeout, batch=args.batch,
        rotate=args.rotate,
    )
    from app.core.engines import resolve_engine_name

    name = resolve_engine_name(args.engine, args.model)  # "auto" takes the options of the engine it stands for
    if name in ENGINES:
        chosen = engine_options(args, name)
        lacking = missing(ENGINES[name], chosen)
        if lacking:
            print(f"error: --engine {name} needs {' and '.join(lacking)}", file=sys.stderr)
            return EXIT_USAGE
        options.engine_options.update(chosen)
    from app.commands.convert_inputs import (
        ConvertProgress, FileResult, discard_checkpoints, expand_inputs, page_count, print_summary,
    )

    items, _ = expand_inputs(args.inputs)  # no folder is empty here: unreadable_inputs said so before
    several = len(items) > 1 or any(Path(raw).is_dir() for raw in args.inputs)
    show = not args.quiet and sys.stderr.isatty()
    progress = ConvertProgress(sum(page_count(i.path) for i in items) if show else 0, len(items), show)
    models: dict[str, object] = {"engine": None, "layout": None}  # loaded once, reused for every input
    worst = EXIT_OK
    results: list[FileResult] = [FileResult(str(item.rel), "failed") for item in items]

    def one(k: int, models: dict, **overlapped) -> int:
        item, result, trace = items[k], results[k], None
        if args.trace:
            trace_path = _trace_path(args.trace, item.rel.as_posix().replace("/", "-"), len(items) > 1)
            try:
                trace = _open_trace(trace_path, {"input": str(item.path)})
            except OSError as exc:
                print(f"error: cannot write the trace file {trace_path}: {exc.strerror or exc}", file=sys.stderr)
                return EXIT_USAGE
        try:
            code = _convert_one(item, out_dir, options, models, trace, progress, result, args.resume, **overlapped)
        finally:
            if trace is not None:
                trace.close()
        if code == EXIT_INTERRUPTED:
            result.outcome = "interrupted"
        return code

    lanes = options.engine_options.get("concurrency", 1) * len(options.engine_options.get("servers", ()))
    if args.jobs > 1:  # worker processes (app.commands.convert_jobs)
        from app.commands.convert_jobs import convert_in_workers

        codes, interrupted = convert_in_workers(args, options, name, items, out_dir, progress, results)
    elif len(items) > 1 and lanes > 1:  # an engine of servers with more than one request in flight
        codes, interrupted = _overlapped(items, one)  # the next input is laid out while the previous one's last
    else:  # regions are read
        codes, interrupted = [], False
        for rank in range(len(items)):
            codes.append(one(rank, models))
            if codes[-1] in (EXIT_USAGE, EXIT_INTERRUPTED, EXIT_ENGINE):
                break  # the next input would fail the same way (or the run was interrupted)
    try:
        if interrupted:
            return EXIT_INTERRUPTED
        for code in codes:
            if code in (EXIT_USAGE, EXIT_INTERRUPTED):
                return code
            if code == EXIT_INPUT or code == EXIT_ENGINE:
                worst = code if worst in (EXIT_OK, EXIT_WARNINGS) else worst
            elif code == EXIT_WARNINGS and worst == EXIT_OK:
                worst = code
        if len(codes) == len(items) and None not in codes and EXIT_ENGINE not in codes and not any(
                r.failed for r in results):
            discard_checkpoints(out_dir)  # every input went through: nothing is left to resume
    finally:
        progress.clear()
        started = [r for r, c in zip(results, codes) if c is not None]
        if several and started:
            print_summary(started)
        if models["engine"] is not None:  # released with the run: a server the engine started is stopped
            models["engine"].close()
    return worst


def _overlapped(items, one) -> tuple[list[int | None], bool]:
    """Every input on its own thread, on one region queue (app.commands.convert_inputs.Overlap): the exit codes (None: not
    started) and whether Ctrl+C ended the run."""
    from app.commands.convert_inputs import Overlap
    from app.core.base.aio import background_loop
    from app.core.base.cancel import CancelToken

    cancel = _Interrupts.cancel = CancelToken()
    _Interrupts.overlap = True
    try:
        with background_loop() as loop:
            overlap = Overlap(len(items), loop, cancel)
            try:
                overlap.run(lambda rank: one(rank, overlap.models, cancel=cancel, overlap=overlap, rank=rank),
                            stop=lambda code: code in (EXIT_USAGE, EXIT_INTERRUPTED, EXIT_ENGINE))
            except KeyboardInterrupt:  # every document started was cancelled and has ended
                return overlap.codes, True
            return overlap.codes, cancel.cancelled
    finally:
        _Interrupts.overlap = False


def _interrupted(inp: Path) -> int:
    print(f"{inp.name}: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _convert_one(item, out_dir: Path, options, models: dict, trace, progress, result, resume: bool, *, cancel=None,
                 overlap=None, rank: int = 0) -> int:
    """Convert one input; prints its summary line (or why it failed) and returns its exit code. With `overlap`
    (app.commands.convert_inputs.Overlap) it reads on the region queue the inputs share and writes in its turn."""
    import dataclasses
    import os

    from app.commands.convert_inputs import Checkpoint, checkpoint_settings, report_converted
    from app.core.base.cancel import CancelToken
    from app.core.record.events import ErrorRaised, PageFinished, PhaseChanged
    from app.core.pipeline import Pipeline, PipelineError
    from app.core.pipeline.output import check_output

    checkpoint = Checkpoint(out_dir, item, checkpoint_settings(options))
    inp, stem, out_dir = item.path, item.rel.name, out_dir / item.rel.parent  # a folder's tree is mirrored
    why = checkpoint.load() if resume and inp.is_file() else "no --resume"
    if resume and not why and checkpoint.done:
        progress.start_document(inp.name, len(checkpoint.pages))
        print(f"{inp.name}: already converted (checkpoint), skipped")
        result.outcome = "skipped"
        return EXIT_OK
    restored = dict(checkpoint.pages) if not why else {}
    checkpoint.pages, checkpoint.done = {}, False
    progress.start_document(inp.name, len(restored))
    warnings: list[str] = []
    failed_pages: set[int] = set()  # pages with a region that failed (a server gone): a resumed run reads them again
    _Interrupts.armed = False
    pipe = None

    def emit(event) -> None:
        if isinstance(event, PhaseChanged):
            _Interrupts.armed = event.phase in _Interrupts.ARMED_PHASES
            _Interrupts.phase = event.phase
        if trace is not None:
            trace(event)
        if isinstance(event, ErrorRaised) and not event.fatal:
            warnings.append(event.message)
        if isinstance(event, PageFinished) and pipe is not None and pipe.output is not None:
            page = pipe.output.page(event.page)
            if any("error" in r.flags for r in page.regions):
                failed_pages.add(page.index)
            else:
                checkpoint.page_finished(page, pipe.output.engine, pipe.output.layout, pipe.engine.input_dpi)
        progress(event)

    try:  # before any decoding: a read-only folder must not cost the whole OCR first
        out_dir.mkdir(parents=True, exist_ok=True)
        check_output(out_dir, stem, options.formats)
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"{inp.name}: failed (output)")
        return EXIT_INPUT
    for page in restored.values():
        checkpoint.pages[page.index] = page
    cancel = _Interrupts.cancel = cancel or CancelToken()
    run_options = _remaining(options, inp, restored)
    if run_options is None and not options.ocr_dpi and checkpoint.input_dpi:  # only writing: pictures at the
        options = dataclasses.replace(options, ocr_dpi=checkpoint.input_dpi)  # DPI the engine read them at
    pipe = Pipeline(run_options or options, emit=emit, cancel=cancel, engine=models["engine"],
                    layout=models["layout"], seat=overlap.seat(rank) if overlap is not None else None)
    t0 = time.perf_counter()
    try:
        if run_options is None:  # every page was finished before: only the output set is left to write
            out = _restored_output(pipe, inp, checkpoint)
        else:
            out = pipe.run(inp)
        if overlap is not None:
            overlap.wait_turn(rank)  # outputs are written in input order
        if cancel.cancelled:  # Ctrl+C reached the run as a cancel (or as an exception native code swallowed)
            raise KeyboardInterrupt
        if restored:
            out.pages = sorted([*out.pages, *restored.values()], key=lambda pg: pg.index)
            out.stats.update(pipe.document_stats(time.perf_counter() - t0))
        files = pipe.write(out_dir, stem)
        checkpoint.done = not failed_pages  # written either way; with failed regions --resume reads those pages again
        checkpoint.save()
    except PipelineError as exc:
        if cancel.cancelled:
            return _interrupted(inp)
        print(f"error: {exc}", file=sys.stderr)
        print(f"{inp.name}: failed ({exc.kind})")
        return EXIT_ENGINE if exc.kind in ("engine", "layout") else EXIT_INPUT
    except Exception as exc:  # noqa: BLE001 - a bug must still end in a message, not a traceback
        if cancel.cancelled:
            return _interrupted(inp)
        if os.environ.get("SCRIPTORIUM_DEBUG"):
            raise
        print(f"error: {inp.name}: unexpected {type(exc).__name__}: {exc} (set SCRIPTORIUM_DEBUG=1 for the "
              "traceback, and please report it)", file=sys.stderr)
        print(f"{inp.name}: failed (internal error)")
        return EXIT_INPUT
    except KeyboardInterrupt:
        cancel.cancel()
        return _interrupted(inp)  # `finally` closes the document (and the caller the trace)
    finally:
        _Interrupts.armed = False  # all written (or nothing): leaving at once loses nothing
        pipe.close()
    models["engine"], models["layout"] = pipe.engine, pipe.layout  # reuse the loaded models for the next input
    report_converted(inp, out, files, warnings, result, len(restored), time.perf_counter() - t0)
    return EXIT_WARNINGS if warnings else EXIT_OK


def _remaining(options, inp: Path, restored: dict):
    """The options for the pages a checkpoint does not hold yet (None: it holds them all)."""
    if not restored:
        return options
    import dataclasses

    from app.commands.convert_inputs import page_count
    from app.core.pipeline.options import parse_pages

    try:
        wanted = parse_pages(options.pages, page_count(inp))
    except ValueError:
        return options  # the run says what is wrong with --pages
    left = [i for i in wanted if i not in restored]
    if not left:
        return None
    return dataclasses.replace(options, pages=",".join(str(i + 1) for i in left))


def _restored_output(pipe, inp: Path, checkpoint):
    from app.core.pipeline.output import DocumentOutput

    doc = pipe.open(inp)
    pipe.output = DocumentOutput(str(inp), checkpoint.engine, checkpoint.layout, doc.page_count,
                                 warnings=list(doc.warnings))
    return pipe.output
