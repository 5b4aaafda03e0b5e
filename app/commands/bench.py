"""`scriptorium bench NAME [ARGS]`: run one benchmark from app/bench/ (each prints its own table)."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys


def _names() -> list[str]:
    import app.bench

    return sorted(m.name for m in pkgutil.iter_modules(app.bench.__path__))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help=f"benchmark to run: {', '.join(_names()) or '(none yet)'}")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the benchmark (e.g. --quick)")


def run(args: argparse.Namespace) -> int:
    names = _names()
    if not args.name or args.name not in names:
        unknown = f"there is no benchmark {args.name!r}; " if args.name else ""
        print(f"scriptorium bench: {unknown}choose one of: {', '.join(names)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"app.bench.{args.name}")
    return int(module.main(list(args.args)) or 0)
