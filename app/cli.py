"""Command line: `python -m app` (or `scriptorium`) opens the window; subcommands run headless.

Each subcommand lives in app/commands/<name>.py with `add_arguments(parser)` and `run(args) -> int`; they are
imported only when chosen, so `--help` and `--version` stay instant and never import torch.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from app import __version__

SUBCOMMANDS = {
    "gui": "open the main window (the default), optionally on files",
    "convert": "convert PDFs/images to Markdown + JSON headless",
    "replay": "replay a trace file (JSON lines) in the window, without loading any model",
    "bench": "run a benchmark and print a table of ratios",
    "models": "list supported models and where their weights were found",
    "train": "train the built-in line reader (AR + block diffusion)",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scriptorium",
        description="Scriptorium: a workbench for OCR vision-language models. Without a subcommand it opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"scriptorium {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        _command_module(name).add_arguments(p)
    return parser


def _command_module(name: str):
    return importlib.import_module(f"app.commands.{name}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["gui", *argv]  # `scriptorium file.pdf` opens the window on the file
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(_command_module(args.command).run(args) or 0)
