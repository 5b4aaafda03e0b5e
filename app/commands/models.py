"""`scriptorium models`: what is supported and where its weights were (or were not) found."""
from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verbose", "-v", action="store_true", help="show why a model was not found")


def run(args: argparse.Namespace) -> int:
    from app.core.checkpoints.loader import ModelError, manifests, resolve_model_dir

    for m in manifests().values():
        try:
            where = str(resolve_model_dir(m))
        except ModelError as exc:
            where = f"not found{': ' + str(exc) if args.verbose else ''}"
        print(f"{m.name:16} {m.architecture:40} {where}")
    return 0
