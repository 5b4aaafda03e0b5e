"""`python -m app bench rswa [--quick]`: KV-cache size and per-token time of R-SWA decoding vs full attention.

One run, side by side, on a tiny random `UnlimitedOcrForConditionalGeneration` from the test kit with a realistic
prefix (P = 5,466 positions ≈ BOS + 20 base-mode pages of 273 image tokens + prompt) and the real window W = 128.
Generation is forced to run without EOS. Variants: R-SWA with the dynamic reference-sliding cache, R-SWA with the
static one, and the same weights with every layer on full causal attention (dynamic cache). At 1k, 5k and 20k
generated tokens the table shows the cache positions per layer (read from the live cache through the window
observer), the KV bytes of the tiny model (positions × 2 × layers × kv_heads × head_dim × dtype bytes, checked
against the bytes the cache tensors actually hold), the time per token over the last 200 steps (median wall time, and
mean CPU time of this process, which other processes on a shared machine do not inflate), and the bytes
the same positions would take at the released model's dimensions (12 layers × 10 KV heads × 128, bf16 = 61,440
bytes per position).

`--quick` (CI smoke test, a few seconds): P = 200, W = 16, checkpoints 50/100/200.
Per-token times of a tiny model are dominated by Python/launch overhead; the memory columns are the point.
"""
from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def _held_bytes(cache) -> int:
    """Bytes of key/value states the cache holds right now, summed over layers (logical sizes of the tensors)."""
    total = 0
    for layer in cache.layers:
        if getattr(layer, "all_keys", None) is not None:  # static R-SWA: one [prefix | W] buffer each
            tensors = (layer.all_keys, layer.all_values)
        else:
            tensors = tuple(t for t in (getattr(layer, "prefill_keys", None), getattr(layer, "prefill_values", None),
                                        layer.keys, layer.values) if t is not None)
        total += sum(t.numel() * t.element_size() for t in tensors if t.dim() >= 2)
    return total


def run_variant(model, cache_kind: str, prefix_embeds, checkpoints: list[int], window_ms: int = 200) -> list[dict]:
    from app.core.decoding.rswa import KVGeometry, RswaDecoder

    geo = KVGeometry.of(model)
    decoder = RswaDecoder(model, cache=cache_kind, max_new_tokens=max(checkpoints))  # no EOS ids: no early stop
    rows, wall, cpu = [], [], []
    wanted = set(checkpoints)
    steps = decoder.steps(prefix_embeds)
    while True:
        c0 = time.process_time()
        step = next(steps, None)
        if step is None:
            break
        if step.index > 0:
            wall.append(step.ms)
            cpu.append((time.process_time() - c0) * 1000.0)
        generated = step.index + 1
        if generated in wanted:
            positions = step.window.cache_positions
            rows.append({
                "generated": generated,
                "positions": positions,
                "bytes": positions * geo.bytes_per_position,
                "held_bytes": _held_bytes(decoder.cache),
                "ms_per_token": statistics.median(wall[-window_ms:] or [step.ms]),
                "cpu_ms_per_token": statistics.mean(cpu[-window_ms:] or [0.0]),
            })
    decoder.release()
    return rows


def _fmt_bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench rswa", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small prefix and few tokens (CI smoke test)")
    p.add_argument("--prefix", type=int, help="prefix length P (default 5466; quick 200)")
    p.add_argument("--window", type=int, help="sliding window W (default 128; quick 16)")
    p.add_argument("--tokens", type=str, help="comma-separated checkpoints (default 1000,5000,20000)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = p.parse_args(argv)

    import torch

    from app.core.decoding.rswa import REAL_GEOMETRY, KVGeometry, full_attention_twin
    from app.core.checkpoints.loader import load_model
    from app.core.tiny.unlimited import build

    torch.set_num_threads(max(1, args.threads))
    P = args.prefix or (200 if args.quick else 5466)
    W = args.window or (16 if args.quick else 128)
    checkpoints = [int(v) for v in args.tokens.split(",")] if args.tokens else (
        [50, 100, 200] if args.quick else [1000, 5000, 20000])

    with tempfile.TemporaryDirectory(prefix="rswa-bench-") as tmp:
        path = build(tmp, seed=0, sliding_window=W)
        loaded = load_model("unlimited-ocr", path, device=args.device, dtype="fp32")
    model = loaded.model
    geo = KVGeometry.of(model)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 380, (1, P), generator=gen).to(loaded.device)
    with torch.inference_mode():
        embeds = model.get_input_embeddings()(ids)
    variants = [("R-SWA, dynamic cache", model, "dynamic"), ("R-SWA, static cache", model, "static"),
                ("full attention", full_attention_twin(model), "dynamic")]

    print(f"R-SWA benchmark — tiny UnlimitedOcrForConditionalGeneration ({geo.layers} layers × {geo.kv_heads} KV "
          f"heads × {geo.head_dim}, fp32 = {geo.bytes_per_position:,} B/position), P = {P:,}, W = {W}, "
          f"device {loaded.device}, {torch.get_num_threads()} thread(s), no EOS")
    results: dict[str, list[dict]] = {}
    t_all = time.perf_counter()
    for name, m, kind in variants:
        t0 = time.perf_counter()
        results[name] = run_variant(m, kind, embeds, checkpoints)
        print(f"  {name}: {time.perf_counter() - t0:.1f} s")
    print()
    print("| variant | generated | cache positions / layer | KV bytes (tiny, fp32) | held by the cache tensors "
          "| ms / token (wall, median) | CPU ms / token | projected KV at real dims (bf16) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, rows in results.items():
        for r in rows:
            print(f"| {name} | {r['generated']:,} | {r['positions']:,} | {r['bytes']:,} | {r['held_bytes']:,} "
                  f"| {r['ms_per_token']:.2f} | {r['cpu_ms_per_token']:.2f} "
                  f"| {_fmt_bytes(r['positions'] * REAL_GEOMETRY.bytes_per_position)} |")
    last = {name: rows[-1] for name, rows in results.items()}
    full, stat = last["full attention"], last["R-SWA, static cache"]
    print()
    print(f"At {checkpoints[-1]:,} tokens full attention holds {full['positions'] / stat['positions']:.1f}× the "
          f"positions of R-SWA (bound P + W = {P + W:,}); at the real model's dimensions that is "
          f"{_fmt_bytes(full['positions'] * REAL_GEOMETRY.bytes_per_position)} vs "
          f"{_fmt_bytes(stat['positions'] * REAL_GEOMETRY.bytes_per_position)}. Total {time.perf_counter() - t_all:.1f} s.")
    if args.json:
        args.json.write_text(json.dumps({"prefix": P, "window": W, "geometry": geo.__dict__, "rows": results},
                                        indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
