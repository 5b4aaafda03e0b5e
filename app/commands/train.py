"""`scriptorium train`: train the built-in line reader on CPU (docs/built-in-model.md).

    python -m app train --out models/builtin                  # the recipe: features + 60 min training, <= 2 h on 2 cores
    python -m app train --out models/builtin --resume         # continue an interrupted run (same --work folder)

The reader is a small GlmOcr text decoder over RapidOCR's pretrained PP-OCRv6 recogniser (its greedy CTC characters
and confidences as a discrete prefix), trained with GravityOCR's joint AR + block-diffusion objective. Features are
cached in --work (resumable), the run is seeded and resumable, and it writes the checkpoint plus MODEL_CARD.md with
the measured figures. Nothing heavy is imported until the command runs.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from app.commands.arguments import positive


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None,
                   help="checkpoint folder (default: <user data>/models/builtin, where the builtin engine looks)")
    p.add_argument("--work", default="runs/builtin",
                   help="folder for the feature cache, the resume state and the latest checkpoint")
    p.add_argument("--lines", type=positive(int), default=20000, help="training lines to render and read")
    p.add_argument("--heldout-lines", type=positive(int), default=400,
                   help="held-out lines (fonts and texts never trained on) for the model card")
    p.add_argument("--minutes", type=positive(float), default=None,
                   help="training minutes (default 60; features and evaluation excluded)")
    p.add_argument("--steps", type=positive(int), default=None, help="stop after this many steps (default: time only)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run")
    p.add_argument("--batch-size", type=positive(int), default=None,
                   help="lines per step (default 32)")
    p.add_argument("--lr", type=positive(float), default=None, help="peak learning rate (default 1e-3)")
    p.add_argument("--preset", default="small", choices=("small", "test"), help="model size")
    p.add_argument("--block-size", type=positive(int), default=16, help="diffusion block size B (default 16)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes rendering lines (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=positive(int), default=None,
                   help="torch / ONNX Runtime CPU threads (default 2)")
    p.add_argument("--version", type=int, default=2, choices=(1, 2),
                   help="model version: 2 (default) writes every character the recogniser reads and sees its top-3 "
                        "per character; 1 is the first 300-character model")
    p.add_argument("--init", default=None,
                   help="warm start from this checkpoint folder (e.g. the shipped first-version models/builtin)")
    p.add_argument("--negatives", type=positive(int), default=1024,
                   help="random vocabulary rows per step in the sampled softmax (default 1024)")
    p.add_argument("--synthetic", type=int, default=0,
                   help="lines whose prefix is their own text (no image), added to the rendered ones: they teach the "
                        "decoder to write the recogniser's rarer characters cheaply (default 0)")
    p.add_argument("--wait-for-features", action="store_true",
                   help="train on the feature shards already made (another process is making the rest), picking "
                        "up new ones each epoch")
    p.add_argument("--no-final-eval", action="store_true", help="skip the CPU engine measurements at the end")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.core.base.paths import user_models_dir

    out = Path(args.out) if args.out else user_models_dir() / "builtin"
    return run_reader(args, out)


def run_reader(args: argparse.Namespace, out) -> int:
    """The built-in reader recipe (CPU): features, training, held-out evaluation, checkpoint + model card."""
    from app.core.training.reader_card import verdict
    from app.core.training.reader_train import ReaderConfig, train_reader

    t0 = time.perf_counter()
    cfg = ReaderConfig(
        out=str(out), work=args.work, lines=args.lines, heldout_lines=args.heldout_lines,
        minutes=args.minutes or 60.0, steps=args.steps, batch_size=args.batch_size or 32, lr=args.lr or 1e-3,
        preset=args.preset, block_size=args.block_size, seed=args.seed, threads=args.threads or 2,
        workers=2 if args.workers is None else args.workers, resume=args.resume, final_eval=not args.no_final_eval,
        version=args.version, init=args.init, negatives=args.negatives, synthetic=args.synthetic,
        wait_for_features=args.wait_for_features,
    )
    # a state that does not match the options: a person's mistake (exit 2)
    report, code = _guarded(lambda: train_reader(cfg, log=lambda m: print(m, flush=True)), (ValueError,))
    if report is None:
        return code
    ev = report.get("eval") or {}
    print(f"done in {(time.perf_counter() - t0) / 60:.1f} min wall time: {report.get('steps')} steps, "
          f"{report.get('lines_seen')} lines; held-out CER {ev.get('cer')} (recogniser {ev.get('rec_cer')}), "
          f"TPF {ev.get('tpf')}; bar {verdict(report)}; model card: {out / 'MODEL_CARD.md'}", flush=True)
    return 0


def _guarded(run, mistakes: tuple[type[BaseException], ...]):
    """(report, 0) from `run()`, or (None, exit code) with one line on stderr: 2 for the `mistakes` a person can
    fix, 1 for a bug (a message, never a traceback, unless SCRIPTORIUM_DEBUG is set)."""
    try:
        return run(), 0
    except mistakes as exc:
        print(f"scriptorium train: {exc}", file=sys.stderr)
        return None, 2
    except Exception as exc:  # noqa: BLE001 - a bug must still end in a message, not a traceback
        if os.environ.get("SCRIPTORIUM_DEBUG"):
            raise
        print(f"scriptorium train: unexpected {type(exc).__name__}: {exc} (set SCRIPTORIUM_DEBUG=1 for the "
              "traceback, and please report it)", file=sys.stderr)
        return None, 1
