"""Command line: `python -m app` (or `scriptorium`) opens the window; subcommands run headless.

Each subcommand lives in app/commands/<name>.py with `add_arguments(parser)` and `run(args) -> int`; they are
imported only when chosen, so `--help` and `--version` stay instant and never import torch.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import threading

from app import __version__

SUBCOMMANDS = {
    "gui": "open the main window (the default), optionally on files",
    "convert": "convert PDFs/images to Markdown + JSON headless",
    "replay": "replay a trace file (JSON lines) in the window, without loading any model",
    "diff": "compare two trace files: first differing token, TPF and time per region, text diff",
    "report": "where drafting paid and failed in a trace: TPF per region, acceptance by kind, token class, position",
    "bench": "run a benchmark and print a table of ratios",
    "models": "list supported models and where their weights were found",
    "train": "train the built-in line reader (AR + block diffusion)",
}


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line naming the mistake (and where help is), exit 2, never the whole usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
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


EXIT_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Ctrl+C at any moment ends in exit code 130 and no traceback: while the command is being set up the process
    leaves at once (app.leave_quietly_on_interrupt); once it runs, its own handling (e.g. convert's: close files,
    keep what was written) acts, and anything that reaches here is reported in one line."""
    import signal

    from app import leave_quietly_on_interrupt

    # the process's own command line (not a test calling main([...]) in-process): signals are ours to set
    main_thread = argv is None and threading.current_thread() is threading.main_thread()
    if main_thread:
        leave_quietly_on_interrupt()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--layout-worker"]:  # the installed bundle's layout child (app.core.layout.budget)
        from app.core.layout.budget import serve

        serve()
        return 0
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        from app.commands.unknown_word import refuse_word

        refusal = refuse_word(argv[0], SUBCOMMANDS)  # before any window, model or Qt import
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["gui", *argv]  # `scriptorium file.pdf` opens the window on the file
    parser = build_parser()
    args = parser.parse_args(argv)
    module = _command_module(args.command)
    try:
        if main_thread:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        code = int(module.run(args) or 0)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
        print("interrupted", file=sys.stderr)
    except BrokenPipeError:  # `convert … | head -1`: the reader left; nothing more to say to it
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        code = 1
    finally:
        if main_thread:
            leave_quietly_on_interrupt()  # and while the interpreter shuts down
    return code
