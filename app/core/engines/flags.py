"""`convert`'s engine flags, generated from the engine registry (app.core.engines.ENGINES): one argument group per
engine that has options, one flag per option, with the option's type, default, choices, bounds and help. Nothing
here names an engine; a new engine's options reach `convert --help` by its spec alone.

A secret option (an API key) is never a flag — a command line is visible to every process on the machine — but is
read from the environment variable `SCRIPTORIUM_<ENGINE>_<OPTION>` (`secret_variable`).

What must never live here: the engines themselves, conversion.
"""
from __future__ import annotations

import argparse
import os
from typing import Any, Iterable

from app.core.engines import ENGINES, EngineOption, EngineSpec


def _dest(spec: EngineSpec, option: EngineOption) -> str:
    return f"engine_{spec.name.replace('-', '_')}__{option.name}"


def secret_variable(spec: EngineSpec, option: EngineOption) -> str:
    return f"SCRIPTORIUM_{spec.name}_{option.name}".upper().replace("-", "_")


def _checked(option: EngineOption):
    def parse(text: str) -> Any:
        try:
            return option.check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None
    parse.__name__ = option.type.__name__  # argparse names the type in its messages
    return parse


def add_engine_arguments(p: argparse.ArgumentParser, names: Iterable[str] | None = None) -> None:
    """One group of flags per engine of `names` (default: every registered engine with options)."""
    wanted = list(names) if names is not None else list(ENGINES)
    for spec in (ENGINES[n] for n in wanted):
        shown = [o for o in spec.options if not o.secret]
        if not spec.options:
            continue
        secrets = [f"${secret_variable(spec, o)} ({o.help})" for o in spec.options if o.secret]
        group = p.add_argument_group(f"--engine {spec.name} ({spec.title})",
                                     ("secrets from the environment: " + "; ".join(secrets)) if secrets else None)
        for option in shown:
            kw: dict[str, Any] = {"dest": _dest(spec, option), "help": option.help}
            if option.type is bool:
                kw["action"] = "store_false" if option.default is True else "store_true"
                kw["default"] = bool(option.default)
            else:
                kw["default"] = list(option.default or []) if option.type is list else option.default
                kw["type"] = str if option.type is list else _checked(option)
                if option.type is list:
                    kw["action"] = "append"
                    kw["default"] = []
                if option.choices:
                    kw["choices"] = option.choices
                if option.metavar:
                    kw["metavar"] = option.metavar
            group.add_argument(option.cli_flag, **kw)


def engine_options(args: argparse.Namespace, name: str) -> dict[str, Any]:
    """The options of engine `name` from parsed flags (and its secrets from the environment), as its factory takes
    them; an engine without options gets {}."""
    spec = ENGINES.get(name)
    if spec is None:
        return {}
    out: dict[str, Any] = {}
    for option in spec.options:
        if option.secret:
            value = os.environ.get(secret_variable(spec, option))
            if value is not None:
                out[option.name] = value
            continue
        value = getattr(args, _dest(spec, option), option.default)
        out[option.name] = list(value) if option.type is list else value
    return out


def missing(spec: EngineSpec, options: dict[str, Any]) -> list[str]:
    """The flags (or variables) of `spec`'s required options that `options` lacks."""
    out = []
    for option in spec.options:
        if option.required and not options.get(option.name):
            out.append(f"${secret_variable(spec, option)}" if option.secret else option.cli_flag)
    return out
