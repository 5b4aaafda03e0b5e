"""`scriptorium [gui] [FILES]`: open the main window, optionally on files or the bundled sample, and start reading."""
from __future__ import annotations

import argparse

from app.core.engines import ENGINES  # names only: no torch


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", help="PDFs or images to open")
    p.add_argument("--sample", action="store_true", help="open the bundled sample document")
    p.add_argument("--engine", default=None, choices=("auto", *ENGINES), help="decoding engine to preselect")
    p.add_argument("--model", default=None, metavar="FOLDER", help="model folder for the engine (otherwise found automatically)")
    p.add_argument("--run", action="store_true", help="start reading the opened documents at once")


def run(args: argparse.Namespace) -> int:
    import sys

    from app.commands.unknown_word import missing_files

    missing = missing_files(args.files)
    if missing:  # said before any window opens
        print(f"scriptorium: {missing}", file=sys.stderr)
        return 2
    from app.gui.application import run_app

    return run_app(args)
