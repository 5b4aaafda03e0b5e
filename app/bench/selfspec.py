"""`python -m app bench selfspec [--quick]`: self-speculative vs autoregressive decoding, measured side by side.

Two tables and one verdict, one run:
1. Decoding: the same crops decoded with AR and with self-spec (each block size), plus self-spec fed oracle drafts
   (the AR output itself; the upper bound the mechanics allow), with events on (a listener keeps every event);
   the self-spec rows run without the reject inspector (as before it existed), the "inspector on" rows with it
   (the engine's default while someone listens), and the line `inspector overhead` gives their wall ratio.
   Repetitions are interleaved (AR, then every self-spec row, then again) and reported as medians with their
   spread; the spec/AR wall ratio is taken per repetition, and a row whose spread straddles 1.0 says
   "inconclusive" instead of a winner.
2. Forward cost: one draft forward (x0 + B masks, block mask) and one verify forward (B+1 candidates, causal) in
   units of one AR step, for the decode model itself and at the real GLM-OCR decoder's dimensions (random weights,
   fp32 and bf16), over a KV cache as long as the decode's mean context. A round beats AR when it commits more
   tokens than draft + verify cost.
The last line, `overhead ratio (measured/ideal)`, compares the oracle rows' measured speed-up over AR (whole decode
walls, events on) with the one their forwards alone give (timed inside the same decodes): 1.0 means the rounds'
host work costs no larger share than AR's.

Runs unchanged on CUDA (times are synchronised). `--model DIR` decodes a real checkpoint instead of the tiny kit.
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

# The published zai-org/GLM-OCR text decoder (config.json, text_config); the transformers defaults differ.
GLM_OCR_TEXT = dict(
    hidden_size=1536, intermediate_size=4608, num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=8,
    head_dim=128, vocab_size=59392, rms_norm_eps=1e-5, max_position_embeddings=131072,
    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [16, 24, 24],
                     "partial_rotary_factor": 1.0},
)
TINY_VISION = dict(depth=1, hidden_size=32, num_heads=2, intermediate_size=64, patch_size=14, temporal_patch_size=2,
                   spatial_merge_size=2)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app bench selfspec", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="CI-size run (a few seconds): tiny model, 1-layer real dims")
    add_model_flags(p, model_help="checkpoint folder to decode (default: a freshly built tiny random model)",
                    dtype_help="dtype for the decoding table (auto: fp32 on CPU, bf16 on GPU)")
    p.add_argument("--blocks", type=int, nargs="+", help="block sizes (default: 4 8 32; quick: 4)")
    p.add_argument("--images", type=int, help="synthetic crops to decode (default 3; quick 2)")
    p.add_argument("--new-tokens", type=int, help="max new tokens per crop (default 96; quick 24)")
    p.add_argument("--context", type=int, help="KV cache length for the forward-cost table (default: the decode's mean)")
    p.add_argument("--layers", type=int, help="decoder layers at the real dimensions (default 16; quick 1)")
    p.add_argument("--reps", type=int, help="interleaved repetitions, median taken (default 5; quick 3)")
    p.add_argument("--skip-real", action="store_true", help="skip the real-dimension forward costs")
    p.add_argument("--json", help="also write all numbers to this JSON file")
    args = p.parse_args(argv)
    quick = args.quick
    args.blocks = args.blocks or ([4] if quick else [4, 8, 32])
    args.images = args.images or (2 if quick else 3)
    args.new_tokens = args.new_tokens or (24 if quick else 96)
    args.layers = args.layers or (1 if quick else 16)
    args.reps = args.reps or (3 if quick else 5)
    return args


def _sync(device: str) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def table(title: str, headers: list[str], rows: list[list[Any]]) -> str:
    """A plain Markdown table (readable in a terminal, pasteable into notes)."""
    def fmt(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda vals: "| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |"  # noqa: E731
    out = [f"\n{title}\n", line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(out + [line(r) for r in cells])


# --- 1. decoding side by side ---------------------------------------------------------------------------------


def _oracle(truth: list[int]):
    def hook(_round: int, output: list[int], candidates: list[int]) -> list[int]:
        drafted = truth[len(output):len(output) + len(candidates)]
        return drafted + candidates[len(drafted):]

    return hook


def decode_comparison(args, loaded) -> tuple[list[dict[str, Any]], int]:
    """Every decoder over the same crops, events on (a listener keeps every event, as a trace does), interleaved:
    each repetition runs AR, then each self-spec row, so a load spike hits all of them alike. Returns the rows
    (medians, spreads, the per-repetition spec/AR ratio) and the decode's mean context length."""
    from app.core.engines.glm_engine import open_ar, open_selfspec
    from app.core.decoding.stats import merge
    from app.core.tiny.glm_checkpoint import sample_images

    images = sample_images(args.images, seed=11)
    ar = open_ar(loaded=loaded, max_new_tokens=args.new_tokens)
    truth = [ar.decode_region(im, "text", region_id=f"r{i}").tokens for i, im in enumerate(images)]  # + warm-up
    prompts = [int(ar.build_inputs(im, "text")["input_ids"].shape[1]) for im in images]
    configs: list[tuple[str, int, Any, list]] = [("AR", 0, ar, [None] * len(images))]
    for block in args.blocks:
        spec = open_selfspec(loaded=loaded, block_size=block, max_new_tokens=args.new_tokens)
        spec.inspect = None  # the rows as before the reject inspector: events on, no inspector
        inspected = open_selfspec(loaded=loaded, block_size=block, max_new_tokens=args.new_tokens)
        configs.append(("self-spec", block, spec, [None] * len(images)))
        configs.append((INSPECTOR_ROW, block, inspected, [None] * len(images)))  # the default: the rejected slot
        configs.append(("self-spec, oracle drafts", block, spec, [_oracle(t) for t in truth]))
    runs: list[list[dict[str, Any]]] = [[] for _ in configs]
    for _ in range(args.reps):
        for slot, (_label, _block, engine, hooks) in enumerate(configs):
            events: list = []
            results = [engine.decode_region(im, "text", region_id=f"r{i}", emit=events.append, draft_hook=h)
                       for i, (im, h) in enumerate(zip(images, hooks))]
            stats = merge(r.stats for r in results)
            stats["same"] = sum(t == r.tokens for t, r in zip(truth, results))
            runs[slot].append(stats)
    rows = []
    ar_ms = [r["decode_ms"] for r in runs[0]]
    for (label, block, _engine, _hooks), reps in zip(configs, runs):
        last = reps[-1]
        ms, ms_low, ms_high = spread([r["decode_ms"] for r in reps])
        ratio, low, high = spread([r["decode_ms"] / a for r, a in zip(reps, ar_ms)])
        drafts = min(last["rounds"], last["forwards"])
        rows.append(dict(decoder=label, block=block, identical="-" if not block else f"{min(r['same'] for r in reps)}"
                         f"/{len(images)}", tokens=last["tokens"], forwards=last["forwards"], drafts=drafts,
                         verifies=last["forwards"] - drafts if block else 0, tpf=last["tpf"],
                         mean_k=last["mean_accepted"], decode_ms=ms, decode_low=ms_low, decode_high=ms_high,
                         ratio=ratio, ratio_low=low, ratio_high=high,
                         verdict="-" if not block else _verdict(low, high),
                         decode_ms_reps=[r["decode_ms"] for r in reps],
                         forward_ms_reps=[r["draft_ms"] + r["verify_ms"] + r["step_ms"] for r in reps]))
    context = round(sum(prompts) / len(prompts) + rows[0]["tokens"] / len(images) / 2)
    meta = dict(model=str(loaded.path), device=str(loaded.device), dtype=str(loaded.dtype).replace("torch.", ""))
    for row in rows:
        row.update(meta)
    return rows, context


INSPECTOR_ROW = "self-spec, inspector on"


def inspector_overhead(rows: list[dict[str, Any]]) -> dict[int, tuple[float, float, float]]:
    """Per block size: the decode wall with the reject inspector on / off (the same crops, events on both times),
    taken per repetition (the two ran back to back), as (median, min, max)."""
    out = {}
    for row in rows:
        if row["decoder"] != INSPECTOR_ROW:
            continue
        off = next(r for r in rows if r["decoder"] == "self-spec" and r["block"] == row["block"])
        out[row["block"]] = spread([on / base for on, base in zip(row["decode_ms_reps"], off["decode_ms_reps"])])
    return out


def _verdict(low: float, high: float) -> str:
    """spec/AR wall: faster or slower only when every repetition says so; else the spread is larger than the
    effect and the run cannot tell."""
    if high < 1.0:
        return "faster"
    if low > 1.0:
        return "slower"
    return "inconclusive"


def overhead_ratios(rows: list[dict[str, Any]]) -> dict[int, float]:
    """measured / ideal speed-up over AR per block size, for the oracle rows (the regime self-spec is for: many
    tokens a round). ideal = what the forwards alone give: AR's forward time / self-spec's forward time, both timed
    inside the same decodes (so under the same load); measured = the whole decode walls, events on. Taken per
    repetition (AR and the row ran back to back), median over repetitions. 1.0 = the rounds' host work (accepting,
    events, token texts, reads) costs no larger share than AR's own."""
    ar = next(r for r in rows if not r["block"])
    out = {}
    for row in rows:
        if row["decoder"] != "self-spec, oracle drafts":
            continue
        per_rep = [(a_wall / s_wall) / (a_fwd / s_fwd) for a_wall, s_wall, a_fwd, s_fwd in
                   zip(ar["decode_ms_reps"], row["decode_ms_reps"], ar["forward_ms_reps"], row["forward_ms_reps"])]
        out[row["block"]] = spread(per_rep)[0]
    return out


# --- 2. forward cost in AR steps ------------------------------------------------------------------------------


def _random_decoder(text_config: dict[str, Any], device: str, dtype):
    """A GlmOcrForConditionalGeneration with the given text decoder and a negligible vision tower, random weights."""
    import torch
    from transformers import GlmOcrConfig, GlmOcrForConditionalGeneration

    config = GlmOcrConfig(text_config=dict(text_config),
                          vision_config=dict(TINY_VISION, out_hidden_size=text_config["hidden_size"]))
    try:  # skip the library's per-parameter init (slow at 673M parameters); every weight is filled below
        from transformers.initialization import no_init_weights
    except ImportError:  # pragma: no cover - older/newer transformers: the normal init is merely slower
        import contextlib

        no_init_weights = contextlib.nullcontext
    with torch.device(device), no_init_weights():
        model = GlmOcrForConditionalGeneration(config)
    chunk = torch.randn(1 << 20, generator=torch.Generator().manual_seed(0)).mul_(0.02).to(device)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "norm" in name:
                continue  # RMSNorm weights are built as ones
            flat = param.view(-1)
            for start in range(0, flat.numel(), chunk.numel()):  # tile one random chunk: cheap, no NaN, no denormal
                flat[start:start + chunk.numel()].copy_(chunk[: flat.numel() - start])
    return model.to(dtype).eval()


def _filled_cache(model, context: int, device: str, dtype):
    import torch

    from app.core.decoding.autoregressive import new_cache

    cfg = model.config.text_config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    cache = new_cache(model)
    gen = torch.Generator(device=device).manual_seed(0)
    for layer in range(cfg.num_hidden_layers):
        k = torch.randn(1, cfg.num_key_value_heads, context, head_dim, generator=gen, device=device).to(dtype)
        v = torch.randn(1, cfg.num_key_value_heads, context, head_dim, generator=gen, device=device).to(dtype)
        cache.update(k, v, layer)
    return cache


def forward_costs(model, label: str, args, device: str, dtype, reps: int, context: int) -> list[dict[str, Any]]:
    """Median wall time of an AR step and of the draft (B+1 rows, block mask) and verify (B+1 rows, causal: x0 is
    already cached by the draft) forwards for each B, interleaved, over a cache of `context` tokens (cropped back
    after every forward)."""
    import torch

    from app.core.decoding.autoregressive import for_attention, forward_logits, text_positions
    from app.core.decoding.selfspec import window_mask

    cache = _filled_cache(model, context, device, dtype)
    clen = cache.get_seq_length()
    vocab = model.config.get_text_config().vocab_size
    gen = torch.Generator().manual_seed(1)

    def run(q: int, bidirectional: bool) -> float:
        ids = torch.randint(0, vocab, (1, q), generator=gen).to(device)
        mask = None
        if q > 1:
            mask = for_attention(window_mask(clen, q, causal_from=1 if bidirectional else q,
                                             bidirectional=bidirectional, device=device), model)
        _sync(device)
        t0 = time.perf_counter()
        with torch.no_grad():
            logits = forward_logits(model, ids, text_positions(clen, q, 0, device), cache, mask)
            logits.argmax(-1).tolist()
        _sync(device)
        cache.crop(-q)
        return (time.perf_counter() - t0) * 1e3

    run(1, False)  # warm-up
    for block in args.blocks:
        run(block + 1, True)
    times: dict[str, list[float]] = {}
    for _ in range(reps):
        times.setdefault("ar", []).append(run(1, False))
        for block in args.blocks:
            times.setdefault(f"draft{block}", []).append(run(block + 1, True))
            times.setdefault(f"verify{block}", []).append(run(block + 1, False))
    ar_ms, ar_low, ar_high = spread(times["ar"])
    rows = []
    for block in args.blocks:
        draft, verify = spread(times[f"draft{block}"])[0], spread(times[f"verify{block}"])[0]
        rows.append(dict(model=label, dtype=str(dtype).replace("torch.", ""), device=device, context=clen,
                         ar_ms=ar_ms, ar_low=ar_low, ar_high=ar_high, block=block, draft_ms=draft, verify_ms=verify,
                         draft_x=draft / ar_ms, verify_x=verify / ar_ms, round_x=(draft + verify) / ar_ms))
    return rows


def cost_table(args, device: str, loaded, context: int) -> list[dict[str, Any]]:
    """The decode model's own forward costs at the decode's context (the ideal the decode is held to), then the real
    GLM-OCR decoder's dimensions with random weights, fp32 and bf16, at the same context."""
    import gc

    import torch

    rows = forward_costs(loaded.model, "decode model", args, device, loaded.dtype, args.reps * 5, context)
    if args.skip_real:
        return rows
    real = dict(GLM_OCR_TEXT, num_hidden_layers=args.layers)
    label = "GLM-OCR dims" + ("" if args.layers == 16 else f" ({args.layers} layer{'s' * (args.layers > 1)})")
    model = _random_decoder(real, device, torch.float32)
    for dtype in (torch.float32, torch.bfloat16):
        model = model.to(dtype)
        rows += forward_costs(model, label, args, device, dtype, args.reps, context)
    del model
    gc.collect()
    return rows


def spread(values: list[float]) -> tuple[float, float, float]:
    """(median, min, max) of repeated measurements."""
    import statistics

    return statistics.median(values), min(values), max(values)


# --- main -----------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    import torch
    import transformers

    from app.core.checkpoints.loader import load_model, pick_device

    device = pick_device(args.device)
    args.device = device
    torch.set_num_threads(max(1, args.threads))
    t0 = time.perf_counter()
    print(f"self-spec benchmark: device {device}, torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{torch.get_num_threads()} CPU thread(s){', quick' if args.quick else ''}")

    with tempfile.TemporaryDirectory(prefix="scriptorium-bench-") as tmp:
        if args.model:
            model_dir = Path(args.model)
        else:
            from app.core.tiny.glm_checkpoint import build

            model_dir = build(Path(tmp) / "tiny-glmocr", seed=0)
        loaded = load_model(args.manifest, model_dir, device=args.device, dtype=args.dtype)
        decode_rows, context = decode_comparison(args, loaded)
    context = args.context or context
    print(table(
        f"Decoding {args.images} crops, max {args.new_tokens} new tokens, events on "
        f"({decode_rows[0]['model'] if args.model else 'tiny random GlmOcr'}, {decode_rows[0]['dtype']}); "
        f"median of {args.reps} interleaved repetitions [min-max]",
        ["decoder", "B", "same as AR", "tokens", "forwards", "TPF", "mean k", "decode ms", "spec/AR wall",
         "ratio spread", "verdict"],
        [[r["decoder"], r["block"] or "-", r["identical"], r["tokens"], r["forwards"], r["tpf"],
          r["mean_k"] if r["block"] else "-", r["decode_ms"], r["ratio"],
          f"{r['ratio_low']:.2f}-{r['ratio_high']:.2f}", r["verdict"]] for r in decode_rows]))
    if args.model is None:
        print("(random weights: the model's own drafts are almost never right; the oracle rows show what the "
              "mechanics give when they are)")

    cost_rows = cost_table(args, device, loaded, context)
    print(table(
        f"Forward cost in AR steps (KV cache {context} tokens: the decode's mean context; median of "
        f"{args.reps * 5} (decode model) / {args.reps} (GLM-OCR dims, random weights))",
        ["model", "dtype", "AR step ms", "B", "draft B+1 (x AR)", "verify B+1 (x AR)", "round (x AR)"],
        [[r["model"], r["dtype"], r["ar_ms"], r["block"], r["draft_x"], r["verify_x"], r["round_x"]]
         for r in cost_rows]))
    print("\nA round beats AR when it commits more tokens than its 'round (x AR)' cost; "
          "on a GPU both forwards cost about one AR step, so the speedup approaches TPF.")
    ratios = overhead_ratios(decode_rows)
    inspector = inspector_overhead(decode_rows)
    print(f"total {time.perf_counter() - t0:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(decoding=decode_rows, forward_cost=cost_rows, context=context,
                                                   overhead_ratio=ratios, inspector_overhead=inspector), indent=2))
    print("inspector overhead (decode wall, on/off, events on both): " + ", ".join(
        f"B={b} {m:.2f} [{lo:.2f}-{hi:.2f}]{' within noise' if lo <= 1.0 <= hi else ''}"
        for b, (m, lo, hi) in inspector.items()))
    print("overhead ratio (measured/ideal): " + ", ".join(f"B={b} {r:.2f}" for b, r in ratios.items()))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
