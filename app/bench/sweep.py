"""`python -m app bench sweep [--trace FILE] [--region ID] [--blocks 4,8,16,32,64] [--reps N] [--json FILE]`: the
block-size sweep (app.core.engines.block_sweep) on the built-in model on CPU: the regions of a recorded run
(default: the bundled sample's, resources/traces/sample-builtin.jsonl, whose document is
resources/samples/sample.pdf) decoded autoregressively and at each B, `--reps` times each. Printed: per B the
tokens, forwards, TPF, the decoder's time and the wall time (mean ± std over repetitions) and whether every region wrote AR's tokens; the same
per region kind, and the B that read each kind fastest. Exits 1 (loudly) when any B changed a token: self-speculative
decoding is exact, so that is a decoder bug.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TRACE = ROOT / "resources" / "traces" / "sample-builtin.jsonl"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app bench sweep", description=__doc__.split("\n")[0])
    p.add_argument("--trace", default=str(DEFAULT_TRACE), help="a recorded run whose layout to sweep")
    p.add_argument("--document", help="the document the trace read (default: the path the trace names)")
    p.add_argument("--region", action="append", help="sweep only this region id (repeatable)")
    p.add_argument("--blocks", default="4,8,16,32,64", help="block sizes, comma-separated (default 4,8,16,32,64)")
    p.add_argument("--reps", type=int, default=3, help="repetitions per block size and region (default 3)")
    p.add_argument("--quick", action="store_true", help="CI-size run: 2 regions, 1 repetition")
    p.add_argument("--model", help="built-in checkpoint folder (default: the installed one)")
    p.add_argument("--json", help="also write every point to this JSON file")
    return p.parse_args(argv)


def layout_of(trace_path: str) -> tuple[str, list[dict], float]:
    """The document, the regions (all pages) and their DPI as the trace's `layout_done` events give them."""
    from app.core.record.events import LayoutDone, RunStarted
    from app.core.record.trace import read_trace

    document, regions, dpi = "", [], 0.0
    for ev in read_trace(trace_path):
        if isinstance(ev, RunStarted):
            document = ev.document
        elif isinstance(ev, LayoutDone):
            regions += ev.regions
            dpi = dpi or ev.dpi
    return document, regions, dpi


def format_result(result) -> str:
    lines = [f"{'B':>4} {'tokens':>7} {'forwards':>9} {'TPF':>6} {'decoder ms':>11} {'wall ms':>16}  same as AR"]
    for kind in (None, *result.kinds()):
        if kind is not None:
            lines.append(f"-- {kind} (fastest B={result.best(kind)})")
        for s in result.summary(kind):
            name = "AR" if s.block_size == 0 else str(s.block_size)
            lines.append(f"{name:>4} {s.tokens:>7} {s.forwards:>9} {s.tpf:>6.2f} {s.decoder_ms:>11.1f} {s.ms:>9.1f} ± {s.ms_std:>4.1f}  "
                         f"{'yes' if s.identical else 'NO — A DECODER BUG'}")
    lines.append(f"fastest B overall: {result.best()}  (repetitions: {result.reps})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(argv or []))
    from app.core.document import open_document
    from app.core.engines.block_sweep import items_from_layout, sweep
    from app.core.engines.builtin import open_engine

    document, regions, _dpi = layout_of(args.trace)
    path = Path(args.document or document)
    if not path.is_absolute() and not path.exists():
        path = ROOT / path
    engine = open_engine(model_path=args.model, device="cpu")
    items = items_from_layout(open_document(path), regions, engine.input_dpi, args.region)
    reps = 1 if args.quick else args.reps
    if args.quick:
        items = items[:2]
    blocks = [int(b) for b in args.blocks.split(",") if b.strip()]
    print(f"sweep: {len(items)} regions of {path.name}, B in {blocks}, {reps} repetitions, built-in model on CPU")
    result = sweep(engine, items, blocks, reps=reps)
    print(format_result(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    bad = result.mismatches()
    for p in bad:
        print(f"BUG: region {p.region_id} at B={p.block_size} wrote a different token than AR at output index "
              f"{p.first_difference}", file=sys.stderr)
    return 1 if bad else 0
