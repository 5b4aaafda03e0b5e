"""`python -m app bench builtin [--reps N] [--pdf FILE] [--model DIR]`: the built-in model on CPU, self-speculative
vs autoregressive, measured side by side in one run on the bundled sample (resources/samples/sample.pdf).

Each page is rendered at the engine's input DPI (200) and read as one region: RapidOCR's detector finds the lines,
the PP-OCRv6 recogniser reads them (timed once, shared by both modes), then every line is decoded by the AR baseline
and by self-speculative decoding, alternating, `--reps` times. Reported:
- decoder wall time per mode (mean ± std over repetitions, and the min), the ratio AR / self-spec, and the same ratio
  end to end (detector + recogniser + decoder);
- TPF (response tokens / forwards), mean accepted draft length per round, whether self-spec == AR token for token;
- per-line times (median over repetitions) with the line's tokens, rounds and acceptances;
- CER against the PDF's text layer (the words inside each detected line box) of the built-in model and of the
  recogniser's own greedy CTC reading, on the same lines.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app bench builtin", description=__doc__.split("\n")[0])
    p.add_argument("--pdf", help="PDF to read (default: the bundled sample)")
    p.add_argument("--model", help="built-in checkpoint folder (default: the installed one)")
    p.add_argument("--reps", type=int, default=3, help="timing repetitions per mode (default 3)")
    p.add_argument("--pages", type=int, default=0, help="read only the first N pages (default all)")
    p.add_argument("--threads", type=int, default=2,
                   help="ONNX Runtime threads for the detector/recogniser (default 2; the decoder runs on one thread)")
    p.add_argument("--dpi", type=float, default=200.0, help="page rendering DPI (default 200, the engine's)")
    p.add_argument("--quick", action="store_true", help="CI-size run: first page, 8 lines, 1 repetition")
    p.add_argument("--json", help="also write all numbers to this JSON file")
    return p.parse_args(argv)


def cer(ref: str, hyp: str) -> tuple[int, int]:
    from app.core.text.textmetrics import errors

    return errors(ref, hyp)


def reference_text(page, box_px, scale: float) -> str:
    """The text-layer words whose centres fall inside `box_px` (pixels at `scale` px/pt), in reading order."""
    x0, y0, x1, y1 = box_px
    words = []
    for w in page.get_text("words"):
        cx, cy = (w[0] + w[2]) / 2 * scale, (w[1] + w[3]) / 2 * scale
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            words.append(w)
    words.sort(key=lambda w: (w[5], w[6], w[7]))
    return " ".join(w[4] for w in words)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(list(argv or []))
    import numpy as np
    import pymupdf
    import torch
    from PIL import Image

    from app.core.engines.builtin import open_engine
    from app.core.engines import EngineUnavailable
    from app.core.base.paths import sample_document

    torch.set_num_threads(1)  # what the engine does while decoding (reader.one_thread)
    try:
        engine = open_engine(model_path=args.model, device="cpu", threads=args.threads)
    except EngineUnavailable as exc:
        print(f"bench builtin: {exc}", file=sys.stderr)
        return 2
    if not hasattr(engine, "recogniser"):
        print("bench builtin: the installed built-in checkpoint is not a recogniser-prefix reader", file=sys.stderr)
        return 2
    reps = 1 if args.quick else max(1, args.reps)
    pdf = Path(args.pdf) if args.pdf else sample_document()
    doc = pymupdf.open(pdf)
    pages = range(min(len(doc), 1 if args.quick else (args.pages or len(doc))))
    lines: list[dict[str, Any]] = []
    det_ms = rec_ms = 0.0
    scale = args.dpi / 72.0
    for pno in pages:
        page = doc[pno]
        pix = page.get_pixmap(dpi=int(args.dpi))
        img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
        t0 = time.perf_counter()
        rows = engine.find_lines(img)
        det_ms += (time.perf_counter() - t0) * 1e3
        flat = [piece for row in rows for piece in row]
        t0 = time.perf_counter()
        readings = engine.recogniser.read([crop for _, crop in flat]) if flat else []
        rec_ms += (time.perf_counter() - t0) * 1e3
        for (box, _), reading in zip(flat, readings):
            lines.append({"page": pno + 1, "box": box, "reading": reading, "reference": reference_text(page, box, scale)})
    if args.quick:
        lines = lines[:8]
    if not lines:
        print("bench builtin: no text lines found", file=sys.stderr)
        return 1

    def decode(mode: str, reading):
        engine.mode = mode
        engine.block_size = int(engine.bd["bd_size"]) if mode == "selfspec" else 0
        offsets = {"round": 0, "step": 0, "tokens": 0}
        t0 = time.perf_counter()
        dec, text = engine.read_line(reading, region_id="bench", emit=lambda e: None, offsets=offsets, sep="",
                                     budget=min(256, 2 * len(reading.chars) + 32))
        return (time.perf_counter() - t0) * 1e3, dec, text

    decode("selfspec", lines[0]["reading"])  # warm-up (first-call allocations)
    decode("ar", lines[0]["reading"])
    totals = {"ar": [], "selfspec": []}
    per_line_ms = {"ar": [[] for _ in lines], "selfspec": [[] for _ in lines]}
    results: dict[str, list] = {"ar": [None] * len(lines), "selfspec": [None] * len(lines)}
    for rep in range(reps):
        order = ("ar", "selfspec") if rep % 2 == 0 else ("selfspec", "ar")
        rep_total = {"ar": 0.0, "selfspec": 0.0}
        for i, line in enumerate(lines):
            for mode in order:
                ms, dec, text = decode(mode, line["reading"])
                rep_total[mode] += ms
                per_line_ms[mode][i].append(ms)
                results[mode][i] = (dec, text)
        for mode in rep_total:
            totals[mode].append(rep_total[mode])

    stops = set(engine.stop_ids)
    tokens = forwards = 0
    accepted: list[int] = []
    identical = 0
    errs = {"model": 0, "recogniser": 0}
    chars = 0
    table = []
    for i, line in enumerate(lines):
        ss, ss_text = results["selfspec"][i]
        ar, ar_text = results["ar"][i]
        identical += int(ss.tokens == ar.tokens)
        body = [t for t in ss.tokens if t not in stops]
        tokens += len(body)
        forwards += 2 * len(ss.rounds)
        ks = [r.k for r in ss.rounds]
        accepted += ks
        ref = " ".join(line["reference"].split())
        if ref:
            e_m, n = cer(ref, " ".join(ss_text.split()))
            e_r, _ = cer(ref, " ".join(line["reading"].text.split()))
            errs["model"] += e_m
            errs["recogniser"] += e_r
            chars += n
        table.append({"line": i + 1, "page": line["page"], "chars": len(ss_text), "tokens": len(body),
                      "rounds": len(ss.rounds), "accepted": ks,
                      "ar_ms": round(statistics.median(per_line_ms["ar"][i]), 2),
                      "selfspec_ms": round(statistics.median(per_line_ms["selfspec"][i]), 2),
                      "text": ss_text, "recogniser": line["reading"].text, "reference": ref})

    def spread(xs: list[float]) -> dict[str, float]:
        return {"mean": round(statistics.mean(xs), 1), "std": round(statistics.pstdev(xs), 1), "min": round(min(xs), 1)}

    ar_t, ss_t = spread(totals["ar"]), spread(totals["selfspec"])
    shared = det_ms + rec_ms
    summary = {
        "pdf": str(pdf), "pages": len(pages), "lines": len(lines), "reps": reps, "threads": args.threads,
        "model": engine.model_path, "block_size": int(engine.bd["bd_size"]),
        "decoder_ms": {"ar": ar_t, "selfspec": ss_t},
        "ratio_decoder": round(ar_t["mean"] / max(1e-9, ss_t["mean"]), 2),
        "ratio_end_to_end": round((ar_t["mean"] + shared) / max(1e-9, ss_t["mean"] + shared), 2),
        "detect_ms": round(det_ms, 1), "recognise_ms": round(rec_ms, 1),
        "tpf": round(tokens / max(1, forwards), 3),
        "mean_accepted": round(float(np.mean(accepted)) if accepted else 0.0, 3),
        "selfspec_equals_ar": identical == len(lines), "identical_lines": identical,
        "cer_model": round(errs["model"] / max(1, chars), 5), "cer_recogniser": round(errs["recogniser"] / max(1, chars), 5),
        "reference_chars": chars,
        "tokens_per_s": {"ar": round(tokens / max(1e-9, ar_t["mean"] / 1e3), 1),
                         "selfspec": round(tokens / max(1e-9, ss_t["mean"] / 1e3), 1)},
    }
    print(f"built-in model on {pdf.name}: {len(lines)} lines on {len(pages)} page(s), {reps} repetition(s), "
          f"{args.threads} thread(s), block {summary['block_size']}")
    print(f"{'line':>4} {'pg':>2} {'tok':>4} {'rnd':>3} {'AR ms':>8} {'spec ms':>8} {'x':>5}  accepted k per round")
    for row in table:
        ratio = row["ar_ms"] / max(1e-9, row["selfspec_ms"])
        print(f"{row['line']:>4} {row['page']:>2} {row['tokens']:>4} {row['rounds']:>3} {row['ar_ms']:>8.1f} "
              f"{row['selfspec_ms']:>8.1f} {ratio:>5.2f}  {row['accepted']}")
    print()
    print(f"decoder wall time  AR {ar_t['mean']:.1f} ± {ar_t['std']:.1f} ms (min {ar_t['min']:.1f})   self-spec "
          f"{ss_t['mean']:.1f} ± {ss_t['std']:.1f} ms (min {ss_t['min']:.1f})   ratio AR/self-spec "
          f"{summary['ratio_decoder']:.2f}")
    print(f"end to end (+ detector {det_ms:.0f} ms + recogniser {rec_ms:.0f} ms, shared): ratio "
          f"{summary['ratio_end_to_end']:.2f}")
    print(f"TPF {summary['tpf']:.2f}   mean accepted per round {summary['mean_accepted']:.2f} of "
          f"{summary['block_size'] + 1}   self-spec == AR on {identical}/{len(lines)} lines   tokens/s AR "
          f"{summary['tokens_per_s']['ar']}, self-spec {summary['tokens_per_s']['selfspec']}")
    print(f"CER vs the text layer ({chars} chars): built-in model {summary['cer_model']:.2%}, recogniser's greedy "
          f"CTC {summary['cer_recogniser']:.2%}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "lines": table}, indent=2, ensure_ascii=False),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
