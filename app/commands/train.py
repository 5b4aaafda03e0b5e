"""`scriptorium train`: train the built-in line reader on CPU (docs/built-in-model.md).

    python -m app train --out models/builtin                  # the recipe: features + 60 min training, <= 2 h on 2 cores
    python -m app train --out models/builtin --resume         # continue an interrupted run (same --work folder)
    python -m app train --recipe vision --device cuda ...     # the earlier GlmOcr-vision-tower recipe (GPU only)
    python -m app train --overfit --out /tmp/overfit          # 30-s CPU proof of the vision recipe: 4 lines, B = 4

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
    p.add_argument("--recipe", default="reader", choices=("reader", "vision"),
                   help="reader: the built-in model over the PP-OCR recogniser (CPU, default); vision: the earlier "
                        "GlmOcr vision-tower recipe (needs a GPU)")
    p.add_argument("--work", default="runs/builtin",
                   help="reader: folder for the feature cache, the resume state and the latest checkpoint")
    p.add_argument("--lines", type=positive(int), default=20000, help="reader: training lines to render and read")
    p.add_argument("--heldout-lines", type=positive(int), default=400,
                   help="reader: held-out lines (fonts and texts never trained on) for the model card")
    p.add_argument("--device", default="auto", help="vision: auto | cuda | cuda:N | cpu (default: auto)")
    p.add_argument("--minutes", type=positive(float), default=None,
                   help="training minutes (reader: default 60, features and evaluation excluded; vision: default 10, "
                        "the whole run)")
    p.add_argument("--steps", type=positive(int), default=None, help="stop after this many steps (default: time only)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run")
    p.add_argument("--batch-size", type=positive(int), default=None,
                   help="lines per step (reader: 32; vision: 256 on CUDA, 16 on CPU)")
    p.add_argument("--lr", type=positive(float), default=None, help="peak learning rate (reader 1e-3, vision 5e-4)")
    p.add_argument("--preset", default="small", choices=("small", "test"), help="model size")
    p.add_argument("--block-size", type=positive(int), default=16, help="diffusion block size B (default 16)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes rendering lines (reader: 2; vision: cores - 2 on CUDA)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=positive(int), default=None,
                   help="torch / ONNX Runtime CPU threads (reader default 2)")
    p.add_argument("--eval-lines", type=int, default=256, help="vision: held-out clean lines for the final CER")
    p.add_argument("--no-final-eval", action="store_true", help="skip the CPU engine measurements at the end")
    p.add_argument("--save-dtype", default="fp32", choices=("fp32", "bf16"))
    p.add_argument("--no-install-fonts", action="store_true",
                   help="do not apt-get install missing font packages (DejaVu, Liberation, URW base35, Latin Modern)")
    p.add_argument("--overfit", action="store_true",
                   help="a quick CPU proof on 4 lines instead of the recipe (default --out: a temporary folder)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from app.core.paths import user_models_dir

    if args.overfit:  # never into the user's builtin folder: this model reads only its 4 lines
        import tempfile

        from app.core.training.overfit import train_overfit

        out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="scriptorium-overfit-"))

        report = train_overfit(out, steps=args.steps or 150, seed=args.seed, log=print)
        print(f"overfit: CER {report['cer']:.4f} on {report['eval_lines']} lines; checkpoint in {out}")
        return 0 if report["cer"] == 0 else 1
    out = Path(args.out) if args.out else user_models_dir() / "builtin"
    if args.recipe == "reader":
        return run_reader(args, out)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    from app.core.training.synthetic import ensure_fonts, missing_font_families
    from app.core.training.trainer import TrainConfig, train

    if args.no_install_fonts:
        missing = missing_font_families()
        if missing:
            print(f"fonts missing: {', '.join(missing)} (training with the fonts present)")
    else:
        ensure_fonts(log=print)
    from app.core.training.synthetic import find_fonts

    print("fonts: " + ", ".join(f"{family} ({len(paths)})" for family, paths in find_fonts().items()))
    cfg = TrainConfig(
        out=str(out), device=args.device, minutes=args.minutes or 10.0, steps=args.steps, batch_size=args.batch_size,
        lr=args.lr or 5e-4, preset=args.preset, block_size=args.block_size, workers=args.workers, seed=args.seed,
        resume=args.resume, eval_lines=args.eval_lines, final_eval=not args.no_final_eval,
        save_dtype=args.save_dtype,
    )
    from app.core.loader import ModelError

    # a device that is not there, a state that does not match the options: a person's mistake (exit 2)
    report, code = _guarded(lambda: train(cfg, log=print), (ModelError, ValueError))
    if report is None:
        return code
    print(f"done: {report.get('steps')} steps, {report.get('lines_seen')} lines, held-out CER {report.get('cer')}, "
          f"model card: {out / 'MODEL_CARD.md'}")
    return 0


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
