"""Argument types shared by the subcommands (not a subcommand itself: app.cli lists those by name).

A bad number is a usage error naming the option and what it must be (exit 2), never a traceback later on."""
from __future__ import annotations

import argparse


def positive(kind: type, upper: float | None = None):
    """An argparse type: a number of `kind` above 0 (and at most `upper`), else a usage error that says so."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not value > 0 or (upper is not None and value > upper):
            bound = f" and at most {upper:g}" if upper is not None else ""
            raise argparse.ArgumentTypeError(f"{text!r} must be above 0{bound}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def add_llamacpp_arguments(p: argparse.ArgumentParser) -> None:
    """--engine llamacpp's options, from its spec in the registry (also `bench remote`'s)."""
    from app.core.engines.flags import add_engine_arguments

    add_engine_arguments(p, ["llamacpp"])


def llamacpp_options(args: argparse.Namespace) -> dict:
    from app.core.engines.flags import engine_options

    return engine_options(args, "llamacpp")
