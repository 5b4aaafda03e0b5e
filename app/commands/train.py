"""`scriptorium train`: train the built-in line reader with GravityOCR's joint AR + block-diffusion objective.

    python -m app train --device cuda --minutes 10 --out models/builtin      # the GPU recipe (README: Training)
    python -m app train --resume --out models/builtin --minutes 5            # continue a run
    python -m app train --overfit --out /tmp/overfit                         # 30-s CPU proof: 4 lines, B = 4

Writes a checkpoint folder that `load_model("builtin", DIR)` and the `builtin` engine read, plus a model card with
the measured figures. Nothing heavy is imported until the command runs.
"""
from __future__ import annotations

import argparse
import os
import sys

from app.commands.arguments import positive


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None,
                   help="checkpoint folder (default: <user data>/models/builtin, where the builtin engine looks)")
    p.add_argument("--device", default="auto", help="auto | cuda | cuda:N | cpu (default: auto)")
    p.add_argument("--minutes", type=positive(float), default=10.0, help="wall-time budget incl. evaluation (default 10)")
    p.add_argument("--steps", type=positive(int), default=None, help="stop after this many steps (default: time only)")
    p.add_argument("--resume", action="store_true", help="continue from DIR/.train/state.safetensors")
    p.add_argument("--batch-size", type=positive(int), default=None, help="lines per step (default: 256 on CUDA, 16 on CPU)")
    p.add_argument("--lr", type=positive(float), default=5e-4, help="peak learning rate (default 5e-4; >= 1e-3 tends to "
                                                         "make the decoder ignore the image)")
    p.add_argument("--preset", default="small", choices=("small", "test"), help="model size (small: ~5M params)")
    p.add_argument("--block-size", type=positive(int), default=16, help="diffusion block size B (default 16)")
    p.add_argument("--workers", type=int, default=None, help="line-rendering processes (default: cores - 2 on CUDA)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=positive(int), default=None,
                   help="torch CPU threads (CPU training: 1 is often fastest on a busy machine)")
    p.add_argument("--eval-lines", type=int, default=256, help="held-out clean lines for the final CER")
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
        out=str(out), device=args.device, minutes=args.minutes, steps=args.steps, batch_size=args.batch_size,
        lr=args.lr, preset=args.preset, block_size=args.block_size, workers=args.workers, seed=args.seed,
        resume=args.resume, eval_lines=args.eval_lines, final_eval=not args.no_final_eval,
        save_dtype=args.save_dtype,
    )
    from app.core.loader import ModelError

    try:
        report = train(cfg, log=print)
    except (ModelError, ValueError) as exc:  # a device that is not there, a state that does not match the options
        print(f"scriptorium train: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug must still end in a message, not a traceback
        if os.environ.get("SCRIPTORIUM_DEBUG"):
            raise
        print(f"scriptorium train: unexpected {type(exc).__name__}: {exc} (set SCRIPTORIUM_DEBUG=1 for the "
              "traceback, and please report it)", file=sys.stderr)
        return 1
    print(f"done: {report.get('steps')} steps, {report.get('lines_seen')} lines, held-out CER {report.get('cer')}, "
          f"model card: {out / 'MODEL_CARD.md'}")
    return 0
