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
from typing import Any

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
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(annotation):
            try:
                check_value(value, option, where)
                return
            except SchemaError as exc:
                errors.append(exc)
        raise errors[-1] if len(errors) == 1 else SchemaError(f"{where}: unexpected {_describe(value)}")
    if annotation is type(None):
        if value is not None:
            raise SchemaError(f"{where}: expected null, found {_describe(value)}")
        return
    if annotation is bool:
        if not isinstance(value, bool):
            raise SchemaError(f"{where}: expected true or false, found {_describe(value)}")
        return
    if annotation in (int, float):
        ok = isinstance(value, int) if annotation is int else isinstance(value, (int, float))
        if not ok or isinstance(value, bool):
            raise SchemaError(f"{where}: expected {'an integer' if annotation is int else 'a number'}, found "
                              f"{_describe(value)}")
        if not math.isfinite(value) or abs(value) > MAX_NUMBER:
            raise SchemaError(f"{where}: {_describe(value)} is not a usable number")
        return
    if annotation is str:
        if not isinstance(value, str):
            raise SchemaError(f"{where}: expected text, found {_describe(value)}")
        return
    if dataclasses.is_dataclass(annotation):
        check_fields(annotation, value, where)
        return
    args = typing.get_args(annotation)
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected a list, found {_describe(value)}")
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                raise SchemaError(f"{where}: expected {len(args)} items, found {len(value)}")
            for i, (item, arg) in enumerate(zip(value, args)):
                check_value(item, arg, f"{where}[{i}]")
            return
        item_type = args[0] if args else Any
        for i, item in enumerate(value):
            check_value(item, item_type, f"{where}[{i}]")
        return
    if origin is dict or annotation is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: expected an object, found {_describe(value)}")
        value_type = args[1] if len(args) == 2 else Any
        for key, item in value.items():
            check_value(item, value_type, f"{where}.{key}")
        return
    raise TypeError(f"{where}: no schema rule for {annotation!r}")  # a field type this module does not know yet


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
