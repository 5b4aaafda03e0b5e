"""What the registry knows of an engine without loading it: its `EngineSpec` (title, factory, the kind it will really
be, what the pipeline and the window may take from it) and its `EngineOption`s (the keywords its factory takes, and
how `convert` and Preferences offer them). `convert`'s engine flags and the Preferences rows are generated from
these; nothing else lists an engine's options.

What must never live here: engine code, argparse or Qt (the faces generate their flags and widgets from this).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

KINDS = ("region", "document")
TYPES = (str, int, float, bool, list)
WIDGETS = ("line", "choice", "number", "check", "words", "folder", "password")


@dataclass(frozen=True)
class EngineOption:
    """One option of an engine: the keyword its factory takes, its type, default and help, how it is checked, and
    how the faces offer it.

    - `flag`: convert's flag (default `--<name with dashes>`; a bool that defaults to True: `--no-<name>`); a list
      option's flag may be given several times.
    - `label`: the Preferences row (default: the help); `widget`: how the row edits it (default from the type:
      choice for choices, check for bool, number for int/float, words — a space-separated line — for a list, line
      for text).
    - `secret`: a value such as an API key: never saved in settings, never written to a checkpoint or a trace.
    - `required`: the engine cannot open without it (convert says so before reading anything).
    - `changes_text`: False for options that change how fast, not what, the engine reads (a resumed run with other
      values keeps the pages it has).
    """

    name: str
    type: type = str
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    flag: str = ""
    metavar: str = ""
    label: str = ""
    widget: str = ""
    secret: bool = False
    required: bool = False
    changes_text: bool = True
    setting: str = ""  # the settings key (default: `<engine>_<name>`, or the name when it starts with the engine's)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"option {self.name!r}: type {self.type!r} is not one of {TYPES}")
        if self.widget and self.widget not in WIDGETS:
            raise ValueError(f"option {self.name!r}: widget {self.widget!r} is not one of {WIDGETS}")
        if self.choices and self.default not in self.choices:
            raise ValueError(f"option {self.name!r}: default {self.default!r} is not among its choices")

    @property
    def cli_flag(self) -> str:
        if self.flag:
            return self.flag
        dashed = self.name.replace("_", "-")
        return f"--no-{dashed}" if self.type is bool and self.default is True else f"--{dashed}"

    @property
    def widget_kind(self) -> str:
        if self.widget:
            return self.widget
        if self.secret:
            return "password"
        if self.choices:
            return "choice"
        return {bool: "check", int: "number", float: "number", list: "words"}.get(self.type, "line")

    @property
    def title(self) -> str:
        return self.label or self.help

    def check(self, value: Any) -> Any:
        """`value` as this option's type, or ValueError saying why it is not one (the faces' validation)."""
        if self.type is list:
            if isinstance(value, str):
                value = value.replace(",", " ").split()
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{self.name}: a list of words, not {value!r}")
            value = list(value)
        elif self.type is bool:
            if isinstance(value, str):
                value = value.strip().lower() in ("1", "true", "yes", "on")
            value = bool(value)
        else:
            try:
                value = self.type(value)
            except (TypeError, ValueError):
                raise ValueError(f"{self.name}: {value!r} is not {_A[self.type]}") from None
        if self.choices and value not in self.choices:
            raise ValueError(f"{self.name}: {value!r} is not one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{self.name}: {value!r} is below {self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{self.name}: {value!r} is above {self.maximum:g}")
        return value


_A = {str: "text", int: "a whole number", float: "a number", bool: "yes or no", list: "a list"}


@dataclass(frozen=True)
class EngineSpec:
    """One engine of the registry.

    `kind` is what the engine will really be: "region" or "document", or a function of its options when they decide
    it (the remote engine under a whole-page profile reads pages: a document engine). Ask `kind_for(options)`.
    `fallback`: what "auto" settles for when no model weights are found (it needs none); `reads_layout_lines`: its
    reading of a scanned region is the layout's own OCR lines (the same recogniser), so the pipeline takes those
    instead of reading the region again; `reads_formulas`: it writes formulas as LaTeX (when it does not, the text
    layer may serve formulas too)."""

    name: str
    title: str
    kind: str | Callable[[Mapping[str, Any]], str]
    factory: str  # "module:function"; function(**options) -> engine
    manifest: str = ""  # models/<manifest>.json whose weights it needs ("" = none)
    shows: str = ""  # rounds | window | "" (what the live views can show for it)
    options: tuple[EngineOption, ...] = ()
    group: str = ""  # the Preferences group of its options (default: the title)
    fallback: bool = False
    reads_layout_lines: bool = False
    reads_formulas: bool = True

    def __post_init__(self) -> None:
        if not callable(self.kind) and self.kind not in KINDS:
            raise ValueError(f"engine {self.name!r}: kind {self.kind!r} is not one of {KINDS}")
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"engine {self.name!r}: an option is declared twice ({names})")

    def kind_for(self, options: Mapping[str, Any] | None = None) -> str:
        """The kind the engine opened with `options` will be."""
        if callable(self.kind):
            return self.kind({**self.defaults(), **(options or {})})
        return self.kind

    def defaults(self) -> dict[str, Any]:
        return {o.name: o.default for o in self.options}

    def setting_key(self, option: EngineOption) -> str:
        if option.setting:
            return option.setting
        return option.name if option.name.startswith(self.name + "_") else f"{self.name}_{option.name}"

    @property
    def options_group(self) -> str:
        return self.group or self.title

    @property
    def short_title(self) -> str:
        """The title without its remarks ("GravityOCR" of "GravityOCR, self-speculative")."""
        return self.title.split(",")[0].split(" (")[0]
