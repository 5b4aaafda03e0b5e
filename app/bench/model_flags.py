"""The flags a decoder benchmark takes to choose its model (a checkpoint folder or a freshly built tiny one),
the device, the dtype and torch's CPU threads, declared once for every bench that decodes with a model.

What must never live here: measuring, building or loading models (the benches and app.core.tiny do that)."""
from __future__ import annotations

import argparse


def add_model_flags(p: argparse.ArgumentParser, *, model_help: str, dtype_help: str) -> None:
    """--model, --manifest, --device, --dtype and --threads on `p`."""
    p.add_argument("--model", help=model_help)
    p.add_argument("--manifest", default="gravityocr", help="manifest of --model (default gravityocr)")
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | mps")
    p.add_argument("--dtype", default="auto", help=dtype_help)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: stable numbers)")
