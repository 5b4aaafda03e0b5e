"""`python -m app bench paths [--quick]`: the decoder's execution paths side by side at the real GLM-OCR decoder's
dimensions (hidden 1536, 16 layers, 16/8 heads, vocab 59392) with random weights.

Paths: `dynamic` (transformers' DynamicCache, eager), `static` (the preallocated cache, eager) and `compiled` (the
static cache's forward through torch.compile; on CUDA mode "reduce-overhead", i.e. CUDA graphs). For each: greedy
AR, self-spec with oracle drafts (the AR output itself, so rounds are as long as the mechanics allow) for each B,
and batched AR of several prompts. A prompt of `--context` random tokens stands in for the image + prompt prefix.
Repetitions are interleaved; medians with their spread; tokens are compared with the dynamic path's (fp32 must be
identical; bf16 may differ at near-ties, and the table says how many matched). A compiled path's first run (the
compilation) is reported on its own and never mixed into the timings; prefills are not timed (decode only).

This is the bench to run on a GPU machine (`--device cuda`, bf16 by default there); `python -m app bench gpu`
runs it together with the selfspec and batch benches.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app bench paths", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="CI-size run: 1 layer, short context, no compilation")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | mps")
    p.add_argument("--dtype", default="auto", help="auto: bf16 on GPU, fp32 on CPU")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("--layers", type=int, help="decoder layers (default 16; quick 1)")
    p.add_argument("--context", type=int, help="prompt tokens before decoding (default 1024; quick 64)")
    p.add_argument("--new-tokens", type=int, help="tokens decoded per prompt (default 128; quick 12)")
    p.add_argument("--blocks", type=int, nargs="+", help="self-spec block sizes (default 8 32; quick 4)")
    p.add_argument("--batch", type=int, help="prompts in the batched AR row (default 8; quick 2)")
    p.add_argument("--reps", type=int, help="interleaved repetitions, median reported (default 3; quick 1)")
    p.add_argument("--paths", nargs="+", choices=("dynamic", "static", "compiled"),
                   help="paths to run (default: all three; quick: dynamic static)")
    p.add_argument("--json", help="also write the numbers to this JSON file")
    args = p.parse_args(argv)
    q = args.quick
    args.layers = args.layers or (1 if q else 16)
    args.context = args.context or (64 if q else 1024)
    args.new_tokens = args.new_tokens or (12 if q else 128)
    args.blocks = args.blocks or ([4] if q else [8, 32])
    args.batch = args.batch or (2 if q else 8)
    args.reps = args.reps or (1 if q else 3)
    args.paths = args.paths or (["dynamic", "static"] if q else ["dynamic", "static", "compiled"])
    return args


def _prefix(model, ids, device):
    """A text-only prefix: the prompt run causally into a fresh DynamicCache (δ = 0)."""
    import torch

    from app.core.decoding.autoregressive import Prefix, cache_kwarg, new_cache

    t0 = time.perf_counter()
    cache = new_cache(model)
    pos = torch.arange(ids.shape[1], device=device).view(1, 1, -1).expand(3, 1, -1)
    with torch.no_grad():
        out = model(input_ids=ids, position_ids=pos, use_cache=True, logits_to_keep=1, **{cache_kwarg(model): cache})
    return Prefix(cache, out.logits[0, -1], int(ids.shape[1]), 0, (time.perf_counter() - t0) * 1e3)


def measure(args) -> dict[str, Any]:
    import torch

    from app.bench.selfspec import GLM_OCR_TEXT, _random_decoder, _sync, spread
    from app.core.decoding.autoregressive import ar_decode
    from app.core.decoding.batch import batch_ar_decode
    from app.core.decoding.selfspec import selfspec_decode
    from app.core.decoding.static_cache import compiled_logits, to_static

    device = args.device
    dtype = {"auto": torch.bfloat16 if device.startswith("cuda") else torch.float32, "fp32": torch.float32,
             "float32": torch.float32, "bf16": torch.bfloat16, "bfloat16": torch.bfloat16}[args.dtype]
    model = _random_decoder(dict(GLM_OCR_TEXT, num_hidden_layers=args.layers), device, dtype)
    vocab = GLM_OCR_TEXT["vocab_size"]
    gen = torch.Generator().manual_seed(3)
    prompts = [torch.randint(0, vocab, (1, args.context + 7 * i), generator=gen).to(device) for i in range(args.batch)]
    budget, mask_id = args.new_tokens, vocab - 1
    runners = {"dynamic": None, "static": None, "compiled": compiled_logits(device) if "compiled" in args.paths else None}

    def prefix(path: str, ids, block: int = 0):
        p = _prefix(model, ids, device)
        return p if path == "dynamic" else to_static(model, p, budget=budget, block_size=block, runner=runners[path])

    def oracle(truth):
        return lambda _r, out, c: (truth[len(out):len(out) + len(c)] + c)[: len(c)]

    def timed(fn):
        _sync(device)
        t0 = time.perf_counter()
        out = fn()
        _sync(device)
        return out, time.perf_counter() - t0

    truth = ar_decode(model, prefix("dynamic", prompts[0]), stop_ids=[], max_new_tokens=budget).tokens
    truths = [truth] + [ar_decode(model, prefix("dynamic", p), stop_ids=[], max_new_tokens=budget).tokens
                        for p in prompts[1:]]
    # each job prepares its prefixes (prefill, untimed) and returns the decode to time
    jobs: dict[tuple[str, str], Any] = {}
    for path in args.paths:
        def ar_job(path=path):
            p = prefix(path, prompts[0])
            return lambda: [ar_decode(model, p, stop_ids=[], max_new_tokens=budget).tokens]

        jobs[(path, "AR")] = ar_job
        for block in args.blocks:
            def spec_job(path=path, block=block):
                p = prefix(path, prompts[0], block)
                return lambda: [selfspec_decode(model, p, mask_id=mask_id, block_size=block, stop_ids=[],
                                                max_new_tokens=budget, draft_hook=oracle(truth)).tokens]

            jobs[(path, f"self-spec B={block}")] = spec_job
        if path != "dynamic":  # batching needs a length per row: the static cache
            def batch_job(path=path):
                ps = [_prefix(model, p, device) for p in prompts]
                return lambda: [d.tokens for d in batch_ar_decode(model, ps, stop_ids=[], budgets=[budget] * len(ps),
                                                                  runner=runners[path])]

            jobs[(path, f"batch {args.batch}")] = batch_job
    first: dict[tuple[str, str], float] = {}
    for key, job in jobs.items():  # warm-up; for the compiled path this is the compilation
        _, first[key] = timed(job())
    walls: dict[tuple[str, str], list[float]] = {k: [] for k in jobs}
    same: dict[tuple[str, str], str] = {}
    for _ in range(args.reps):
        for key, job in jobs.items():
            tokens, wall = timed(job())
            walls[key].append(wall)
            ref = truths if key[1].startswith("batch") else [truth]
            same[key] = f"{sum(a == b for a, b in zip(tokens, ref))}/{len(ref)}"
    rows = []
    for (path, decoder), w in walls.items():
        count = budget * (args.batch if decoder.startswith("batch") else 1)
        med, low, high = spread(w)
        rows.append(dict(path=path, decoder=decoder, tokens=count, tokens_per_s=count / med,
                         low=count / high, high=count / low, first_run_s=first[(path, decoder)],
                         same_as_dynamic_ar=same[(path, decoder)]))
    return dict(rows=rows, device=device, dtype=str(dtype).replace("torch.", ""), layers=args.layers,
                context=args.context, new_tokens=budget)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    import torch

    from app.bench.selfspec import table
    from app.core.checkpoints.loader import pick_device

    args.device = pick_device(args.device)
    torch.set_num_threads(max(1, args.threads))
    t0 = time.perf_counter()
    data = measure(args)
    print(table(
        f"Decoder paths at GLM-OCR decoder dimensions ({data['layers']} layer(s), random {data['dtype']} weights, "
        f"{data['device']}), prompt {data['context']} tokens, {data['new_tokens']} new tokens; median of "
        f"{args.reps} interleaved repetitions [min-max]; self-spec fed oracle drafts",
        ["path", "decoding", "tokens/s", "spread", "first run s", "same as dynamic AR"],
        [[r["path"], r["decoder"], r["tokens_per_s"], f"{r['low']:.1f}-{r['high']:.1f}", r["first_run_s"],
          r["same_as_dynamic_ar"]] for r in data["rows"]]))
    print(f"total {time.perf_counter() - t0:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
