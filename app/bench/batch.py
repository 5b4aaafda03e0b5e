"""`python -m app bench batch [--quick]`: several regions decoded in one forward per step vs one at a time.

The same crops are decoded by the AR engine (or, with `--block B`, the self-spec engine) one region at a time (`decode_region`) and in batches of 1, 4, 8 and 16
(`decode_batch`: a padded batch over a static KV cache with a length per row; self-spec in lockstep rounds), interleaved repetition by
repetition. Reports tokens/s (whole requests: prefill and vision included) as the median with its spread, the ratio
to sequential, and whether every batch gave exactly the sequential tokens. A ratio whose spread overlaps 1.0 is
called inconclusive, never a win or a loss.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.bench.model_flags import add_model_flags


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app bench batch", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="CI-size run (a few seconds)")
    add_model_flags(p, model_help="checkpoint folder (default: a freshly built tiny random GlmOcr)",
                    dtype_help="auto: fp32 on CPU, bf16 on GPU")
    p.add_argument("--batches", type=int, nargs="+", help="batch sizes (default 1 4 8 16; quick 1 8)")
    p.add_argument("--regions", type=int, help="crops decoded per repetition (default 16; quick 8)")
    p.add_argument("--new-tokens", type=int, help="max new tokens per crop (default 48; quick 16)")
    p.add_argument("--block", type=int, default=0,
                   help="decode self-speculatively with this block size (default 0: greedy AR)")
    p.add_argument("--reps", type=int, help="interleaved repetitions, median reported (default 5; quick 3)")
    p.add_argument("--json", help="also write the numbers to this JSON file")
    args = p.parse_args(argv)
    args.batches = args.batches or ([1, 8] if args.quick else [1, 4, 8, 16])
    args.regions = args.regions or (8 if args.quick else 16)
    args.new_tokens = args.new_tokens or (16 if args.quick else 48)
    args.reps = args.reps or (3 if args.quick else 5)
    return args


def measure(args, model_dir: Path) -> dict[str, Any]:
    from app.bench.selfspec import spread
    from app.core.engines.glm_engine import RegionCrop, open_ar, open_selfspec
    from app.core.checkpoints.loader import load_model
    from app.core.tiny.glm_checkpoint import sample_images

    loaded = load_model(args.manifest, model_dir, device=args.device, dtype=args.dtype)
    engine = (open_selfspec(loaded=loaded, block_size=args.block, max_new_tokens=args.new_tokens) if args.block
              else open_ar(loaded=loaded, max_new_tokens=args.new_tokens))
    crops = [RegionCrop(im, "text", f"r{i}") for i, im in enumerate(sample_images(args.regions, seed=13))]

    def sequential():
        return [engine.decode_region(c.image, c.task, region_id=c.region_id) for c in crops]

    def batched(size: int):
        def run():
            engine.batch_size = size
            return engine.decode_batch(crops)
        return run

    modes = {"sequential": sequential, **{f"batch {b}": batched(b) for b in args.batches}}
    for run in modes.values():  # warm-up (first-call allocations, lazy imports)
        run()
    walls: dict[str, list[float]] = {m: [] for m in modes}
    tokens: dict[str, list[list[int]]] = {}
    for _ in range(args.reps):
        for mode, run in modes.items():
            t0 = time.perf_counter()
            results = run()
            walls[mode].append(time.perf_counter() - t0)
            tokens[mode] = [r.tokens for r in results]
    count = sum(len(t) for t in tokens["sequential"])
    seq_rates = [count / w for w in walls["sequential"]]
    rows = []
    for mode in modes:
        rates = [count / w for w in walls[mode]]
        ratios = [r / s for r, s in zip(rates, seq_rates)]  # per repetition: same load on both
        med, low, high = spread(rates)
        rmed, rlow, rhigh = spread(ratios)
        rows.append(dict(mode=mode, tokens_per_s=med, low=low, high=high, ratio=rmed, ratio_low=rlow,
                         ratio_high=rhigh, identical=tokens[mode] == tokens["sequential"],
                         verdict=verdict(rlow, rhigh) if mode != "sequential" else "-"))
    return dict(rows=rows, tokens=count, regions=len(crops), device=str(loaded.device),
                dtype=str(loaded.dtype).replace("torch.", ""))


def verdict(low: float, high: float) -> str:
    """Faster / slower only when the whole spread of the per-repetition ratio is on one side of 1."""
    if low > 1.0:
        return "faster"
    if high < 1.0:
        return "slower"
    return "inconclusive"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    import torch

    from app.bench.selfspec import table
    from app.core.checkpoints.loader import pick_device

    args.device = pick_device(args.device)
    torch.set_num_threads(max(1, args.threads))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="scriptorium-bench-") as tmp:
        if args.model:
            model_dir = Path(args.model)
        else:
            from app.core.tiny.glm_checkpoint import build

            model_dir = build(Path(tmp) / "tiny-glmocr", seed=0)
        data = measure(args, model_dir)
    print(table(
        f"Batched {'self-spec (B=%d)' % args.block if args.block else 'AR'} decoding: {data['regions']} crops, {data['tokens']} tokens, max {args.new_tokens} new tokens "
        f"({'tiny random GlmOcr' if not args.model else args.model}, {data['device']}, {data['dtype']}, "
        f"{torch.get_num_threads()} thread(s)); median of {args.reps} interleaved repetitions [min-max]",
        ["decoding", "tokens/s", "spread", "x sequential", "ratio spread", "same tokens", "verdict"],
        [[r["mode"], r["tokens_per_s"], f"{r['low']:.1f}-{r['high']:.1f}", r["ratio"],
          f"{r['ratio_low']:.2f}-{r['ratio_high']:.2f}", "yes" if r["identical"] else "NO", r["verdict"]]
         for r in data["rows"]]))
    print(f"total {time.perf_counter() - t0:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2))
    return 0 if all(r["identical"] for r in data["rows"]) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
