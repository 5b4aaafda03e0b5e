"""`python -m app bench remote --server URL [--server URL2] [--remote-model NAME]`: the region scheduler against
real OCR servers, sequential vs concurrent, in one run over the same servers and the same regions.
`--engine llamacpp --gguf FILE --mmproj FILE` (or `--model DIR`) benches a llama-server the app starts itself:
concurrent = its `--llama-parallel` slots.

The sample document (repeated `--copies` times) is laid out once; its regions are then read twice through the
region scheduler: one request at a time, then up to the engine's concurrency (`--concurrency` per server). Printed:
regions/s and pages/s of each, the most requests in flight at once, the requests each server got; the last line is
`concurrent/sequential pages/s: X.XX (max in flight N)`.

On a GPU server concurrency is where the throughput comes from (SGLang/vLLM batch the requests); on a CPU-only
`transformers serve` it cannot speed compute up, so there the figure to read is that concurrency happens (N) and
costs nothing (a ratio near 1).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time


def _layout(engine, copies: int):
    """Regions (with their crops) of the sample document, `copies` times over, as scheduler jobs."""
    from app.core.base.cancel import CancelToken
    from app.core.base.paths import sample_document
    from app.core.pipeline import DocumentOutput, Pipeline, PipelineOptions
    from app.core.engines.scheduler import Job
    from app.core.document.regions import DECODED_TASKS

    pipe = Pipeline(PipelineOptions(compare_text_layer=False), cancel=CancelToken(), engine=engine)
    doc = pipe.open(sample_document())
    pipe.output = DocumentOutput(doc.path if hasattr(doc, "path") else "", engine.name, "", doc.page_count)
    jobs, pages = [], 0
    try:
        for i in range(doc.page_count):
            page = pipe.layout_page(i)
            crops = [(r, doc.crop(i, r.box_pt, pipe.ocr_dpi(i))) for r in page.regions if r.task in DECODED_TASKS]
            for copy in range(copies):
                jobs += [Job((copy, i, r.order), r, im) for r, im in crops]
            pages += copies
    finally:
        pipe.close()
    return jobs, pages


def _read(engine, jobs, lanes: int) -> dict:
    from app.core.base.aio import run_async
    from app.core.base.cancel import CancelToken
    from app.core.engines.scheduler import RegionScheduler

    engine.concurrency = lanes
    before = [s.requests for s in engine.servers]
    outcomes = []
    scheduler = RegionScheduler(engine, lambda _e: None, CancelToken())
    t0 = time.perf_counter()
    run_async(lambda: scheduler.run(jobs, outcomes.append))
    seconds = time.perf_counter() - t0
    failed = [o.error for o in outcomes if o.error is not None]
    if failed:
        print(f"{len(failed)} of {len(jobs)} regions failed, e.g.: {type(failed[0]).__name__}: {failed[0]}",
              file=sys.stderr)
    return {"seconds": seconds, "max_in_flight": scheduler.max_in_flight, "failed": len(failed),
            "per_server": [s.requests - b for s, b in zip(engine.servers, before)]}


def main(argv: list[str] | None = None) -> int:
    from app.core.engines.flags import add_engine_arguments, engine_options, missing
    from app.core.engines import ENGINES

    served = [name for name, spec in ENGINES.items() if spec.group in ("Servers", "llama.cpp")]  # engines of servers
    p = argparse.ArgumentParser(prog="scriptorium bench remote", description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", choices=served, default=served[-1],
                   help="remote: the --server URLs; llamacpp: a llama-server the app starts (default remote)")
    p.add_argument("--model", default=None, metavar="DIR", help="--engine llamacpp: a folder holding the GGUF and "
                   "its mmproj file")
    add_engine_arguments(p, served)
    p.add_argument("--copies", type=int, default=2, help="times the sample document is read (default 2)")
    p.add_argument("--max-new-tokens", type=int, default=64, help="token budget per region (default 64)")
    p.add_argument("--reps", type=int, default=1, help="repetitions of the sequential/concurrent pair; the ratio "
                   "of each is printed, then their median (default 1)")
    args = p.parse_args(argv)
    options = engine_options(args, args.engine)
    lacking = missing(ENGINES[args.engine], options)
    if lacking:
        p.error(f"--engine {args.engine} needs {', '.join(lacking)} (an OpenAI-compatible OCR server), or use "
                "--engine llamacpp")
    from app.core.engines import EngineUnavailable, open_engine

    try:
        engine = open_engine(args.engine, **options, model_path=args.model, max_new_tokens=args.max_new_tokens)
    except EngineUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    try:
        return _bench(engine, args)
    finally:
        engine.close()  # a llama-server the engine started is stopped


def _bench(engine, args) -> int:
    lanes = engine.concurrency
    jobs, pages = _layout(engine, max(1, args.copies))
    _read(engine, jobs[:lanes], lanes)  # warm-up: the server's first forwards (and first batch) cost extra
    ratios = []
    for _ in range(max(1, args.reps)):
        seq = _read(engine, jobs, 1)
        con = _read(engine, jobs, lanes)
        ratios.append(seq["seconds"] / con["seconds"])  # = concurrent/sequential pages/s
    print(f"servers: {', '.join(s.url for s in engine.servers)} · model {engine.model} · {pages} pages, "
          f"{len(jobs)} regions, ≤ {args.max_new_tokens} tokens each")
    print(f"device: {engine.device}")
    print(f"{'mode':<12}{'seconds':>9}{'regions/s':>11}{'pages/s':>9}{'max in flight':>15}{'failed':>8}  "
          "requests per server")
    for name, r in (("sequential", seq), ("concurrent", con)):
        print(f"{name:<12}{r['seconds']:>9.2f}{len(jobs) / r['seconds']:>11.2f}{pages / r['seconds']:>9.2f}"
              f"{r['max_in_flight']:>15}{r['failed']:>8}  " + ", ".join(str(n) for n in r["per_server"]))
    for s in engine.server_stats():
        spec = s["spec"]
        said = (f"{spec['source']}: accept length {spec.get('accept_length')}" if spec
                else "reports no speculative-decoding statistics")
        print(f"{s['url']} ({s['flavour']}): {said}")
    if len(ratios) > 1:
        print(f"{len(ratios)} repetitions, concurrent/sequential each: " + ", ".join(f"{r:.2f}" for r in ratios))
    ratio = statistics.median(ratios)
    print(f"concurrent/sequential pages/s: {ratio:.2f} (max in flight {con['max_in_flight']})")
    return 1 if seq["failed"] or con["failed"] else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
