"""Checking data we read back (the journal, trace files) against the dataclasses it is loaded into, before any of
it is used: `check_fields(cls, data, where)` compares every key of a JSON object with the type its dataclass field
declares (str, int, float, bool, None, list[...], tuple[...], dict[...], unions, nested dataclasses) and raises
`SchemaError` naming the place (`state.documents[0].blocks[3].region.box`) and what was wrong. Numbers must be
finite and of sane size, so a journal or trace that is valid JSON of the wrong shape is refused as a whole instead
of failing later, somewhere in the window.

What must never live here: knowledge of any one file format (the journal's envelope is app.gui.journal's, a
trace's lines are app.core.record.trace's).
"""
from __future__ import annotations

import dataclasses
import math
import types
import typing
from functools import lru_cache
from typing import Any, Callable

MAX_NUMBER = 1e12  # far beyond any page, box, count or time we write; a bigger number is damage


class SchemaError(ValueError):
    """Data of the wrong shape; the message names where (a dotted path) and what was expected."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def required_fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]


def check_fields(cls: type, data: Any, where: str, *, required: bool = True) -> None:
    """`data` must be a JSON object whose keys that name fields of dataclass `cls` hold values of the declared
    types (unknown keys are allowed: newer files open in older apps); with `required`, fields without a default
    must be present."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected an object, found {_describe(data)}")
    hints = _hints(cls)
    if required:
        missing = [name for name in required_fields(cls) if name not in data]
        if missing:
            raise SchemaError(f"{where}: {missing[0]!r} is missing")
    for f in dataclasses.fields(cls):
        if f.name in data:
            check_value(data[f.name], hints[f.name], f"{where}.{f.name}")


def check_value(value: Any, annotation: Any, where: str) -> None:
    """`value` (parsed JSON) must fit `annotation`; raises SchemaError otherwise."""
    if annotation is Any:
        _check_json(value, where)
        return
    scalar = _SCALARS.get(annotation)
    if scalar is not None:
        fits, expected = scalar
        if not fits(value):
            raise SchemaError(f"{where}: expected {expected}, found {_describe(value)}")
        if annotation in (int, float) and (not math.isfinite(value) or abs(value) > MAX_NUMBER):
            raise SchemaError(f"{where}: {_describe(value)} is not a usable number")
        return
    if dataclasses.is_dataclass(annotation):
        check_fields(annotation, value, where)
        return
    check = _SHAPES.get(typing.get_origin(annotation) or annotation)
    if check is None:
        raise TypeError(f"{where}: no schema rule for {annotation!r}")  # a field type not known here yet
    check(value, typing.get_args(annotation), where)


def _number(value: Any, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not isinstance(value, bool)


# annotation → (does the value fit, what was expected)
_SCALARS: dict[Any, tuple[Callable[[Any], bool], str]] = {
    type(None): (lambda v: v is None, "null"),
    bool: (lambda v: isinstance(v, bool), "true or false"),
    int: (lambda v: _number(v, (int,)), "an integer"),
    float: (lambda v: _number(v, (int, float)), "a number"),
    str: (lambda v: isinstance(v, str), "text"),
}


def _check_union(value: Any, options: tuple, where: str) -> None:
    errors = []
    for option in options:
        try:
            check_value(value, option, where)
            return
        except SchemaError as exc:
            errors.append(exc)
    raise errors[-1] if len(errors) == 1 else SchemaError(f"{where}: unexpected {_describe(value)}")


def _check_list(value: Any, args: tuple, where: str) -> None:
    if not isinstance(value, list):
        raise SchemaError(f"{where}: expected a list, found {_describe(value)}")
    item_type = args[0] if args else Any
    for i, item in enumerate(value):
        check_value(item, item_type, f"{where}[{i}]")


def _check_tuple(value: Any, args: tuple, where: str) -> None:
    if not args or args[-1] is Ellipsis:  # tuple[X, ...] (or a bare tuple) is read as a list
        _check_list(value, args, where)
        return
    if not isinstance(value, list):
        raise SchemaError(f"{where}: expected a list, found {_describe(value)}")
    if len(value) != len(args):
        raise SchemaError(f"{where}: expected {len(args)} items, found {len(value)}")
    for i, (item, arg) in enumerate(zip(value, args)):
        check_value(item, arg, f"{where}[{i}]")


def _check_dict(value: Any, args: tuple, where: str) -> None:
    if not isinstance(value, dict):
        raise SchemaError(f"{where}: expected an object, found {_describe(value)}")
    value_type = args[1] if len(args) == 2 else Any
    for key, item in value.items():
        check_value(item, value_type, f"{where}.{key}")


# a generic's origin (or a bare container type) → the check of its shape and items
_SHAPES: dict[Any, Callable[[Any, tuple, str], None]] = {
    typing.Union: _check_union, types.UnionType: _check_union,
    list: _check_list, set: _check_list, frozenset: _check_list, tuple: _check_tuple, dict: _check_dict,
}


def _check_json(value: Any, where: str) -> None:
    """Free-form data (`Any`) may hold anything JSON holds, but no unusable numbers."""
    if isinstance(value, float) and (not math.isfinite(value) or abs(value) > MAX_NUMBER):
        raise SchemaError(f"{where}: {_describe(value)} is not a usable number")
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json(item, f"{where}.{key}")
