"""The settings registry: every persisted preference declared once, typed, with its default and a title.

Settings live in an INI file under the user data folder (so tests, which isolate SCRIPTORIUM_HOME, never touch a
person's real settings). Code reads `settings.get("engine")`; the preferences page is generated from `OPTIONS`.
Each engine's options (app.core.engines.ENGINES, its spec's `options`) are declared here by the spec itself: one row
per option under the spec's group, keyed `<engine>_<option>`; `engine_options(name, settings)` turns them back into
the engine's keywords for a run. A secret option (an API key) is kept in memory for the session, never written.
A settings file that is not INI text (binary garbage, NUL bytes, not UTF-8, a format QSettings refuses) is set
aside under a timestamped name and the defaults are used (`set_aside`, `problem` say so for the window's banner);
a value of the wrong type falls back to its default (`Option.coerce`). Neither is ever fatal.
What must never live here: widgets, or state of the open work (that is the journal's).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Signal

from app.core.base.atomic import set_aside
from collections.abc import Mapping

from app.core.engines import ENGINES, EngineOption, EngineSpec
from app.core.engines.glm_engine import BATCH_SIZE
from app.core.base.paths import user_data_dir
from app.core.pipeline.options import DEFAULT_LAYOUT_TIMEOUT_S, EXPORT_FORMATS, TEXT_LAYER_MODES


def _unreadable(path: Path) -> str:
    """Why `path` is not an INI text file ("" when it is, or when there is none yet)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if b"\0" in raw:
        return "it holds binary data"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    return ""


@dataclass(frozen=True)
class Option:
    key: str
    default: Any
    title: str
    choices: tuple[str, ...] = ()  # for str options chosen from a list
    minimum: float | None = None
    maximum: float | None = None
    group: str = "General"
    folder: bool = False  # a folder path (Preferences offers Browse…)
    secret: bool = False  # kept in memory for the session, never written to the settings file (an API key)
    password: bool = False  # edited without showing it

    @property
    def kind(self) -> type:
        return type(self.default)

    def coerce(self, value: Any) -> Any:
        """QSettings' INI backend returns strings; turn them back into the declared type, falling back to the
        default when the stored value is unusable (a hand-edited or older file)."""
        if value is None or not isinstance(value, (str, int, float, bool, list)):
            return self.default  # e.g. a QByteArray or an unknown @Variant from a hand-edited or damaged file
        kind = self.kind
        try:
            if kind is bool:
                if isinstance(value, str):
                    return value.strip().lower() in ("1", "true", "yes", "on")
                return bool(value)
            if kind is int:
                value = int(float(value))
            elif kind is float:
                value = float(value)
            elif kind is list:
                if isinstance(value, str):
                    value = [value] if value else []
                if not all(isinstance(v, str) for v in value):
                    return self.default
                value = list(value)
            else:
                value = str(value)
        except (TypeError, ValueError):
            return self.default
        if self.choices and value not in self.choices:
            return self.default
        if self.minimum is not None and value < self.minimum:
            value = type(self.default)(self.minimum)
        if self.maximum is not None and value > self.maximum:
            value = type(self.default)(self.maximum)
        return value


_GENERAL = (
    Option("engine", "auto", "Decoding engine", group="Decoding"),
    Option("model_path", "", "Model folder (empty: found automatically)", group="Decoding", folder=True),
    Option("device", "auto", "Device", choices=("auto", "cpu", "cuda", "mps"), group="Decoding"),
    Option("dtype", "auto", "Precision", choices=("auto", "float32", "bfloat16", "float16"), group="Decoding"),
    Option("block_size", 0, "Draft block size (0: the checkpoint's)", minimum=0, maximum=128, group="Decoding"),
    Option("max_new_tokens", 0, "Token limit per region (0: per task, 512 text / 4096 table, formula)", minimum=0,
           maximum=32768, group="Decoding"),
    # one at a time by default: a batch's rounds interleave, and the Decoding views then jump between regions
    Option("batch", 1, "Regions read together by GLM-OCR engines (1: one at a time, easy to follow; 0: the "
           f"engine's batch of {BATCH_SIZE}, faster, their rounds interleaved)", minimum=0, maximum=64,
           group="Decoding"),
    Option("layout", "auto", "Layout model", choices=("auto", "ppdoclayout", "pymupdf", "page"), group="Decoding"),
    Option("layout_timeout", DEFAULT_LAYOUT_TIMEOUT_S,
           "Time budget of one page's layout, seconds (past it: the whole page; 0: none)", minimum=0.0,
           maximum=3600.0, group="Decoding"),
    Option("text_layer", "compare", "A PDF's own text layer: compare = OCR every block and measure it; prefer = "
           "take its text where it is trustworthy; ignore", choices=TEXT_LAYER_MODES, group="Decoding"),
    Option("auto_run", True, "Start reading a document as soon as it is opened", group="Decoding"),
    Option("render_dpi", 144, "Resolution pages are laid out at (DPI)", minimum=36, maximum=600, group="Decoding"),
)
_VIEW = (
    Option("theme", "system", "Colours", choices=("system", "light", "dark"), group="View"),
    Option("show_order", True, "Show reading-order numbers on regions", group="View"),
    Option("show_preview", True, "Show the rendered preview beside the editor", group="View"),
    Option("autosave_seconds", 2.0, "Journal autosave delay (seconds)", minimum=0.2, maximum=600.0, group="Journal"),
    Option("recent_files", [], "Recently opened files", group="Files"),
    Option("recent_limit", 10, "How many recent files to remember", minimum=0, maximum=50, group="Files"),
    Option("export_dir", "", "Last export folder", group="Files"),
    # what Export writes (the formats of `convert --formats`, app.core.pipeline.options.FORMATS)
    Option("export_formats", ",".join(EXPORT_FORMATS), "Export writes (any of md, json, html, pdf, docx, xlsx, "
           "alto, hocr, docling)", group="Files"),
    Option("alto_version", "4", "ALTO version of the alto export (4: ALTO 4.4; 2: ALTO 2.1)", choices=("4", "2"),
           group="Files"),
    Option("record_traces", False, "Record a trace of every run", group="Decoding"),
    Option("playback_regions", 200, "Regions of a document whose rounds the Decoding dock keeps for playback",
           minimum=1, maximum=100_000, group="Decoding"),
    Option("window_geometry", "", "Window geometry", group="State"),
    Option("window_state", "", "Toolbars, docks and panes", group="State"),
)


def engine_option(spec: EngineSpec, o: EngineOption) -> Option:
    """The setting an engine option is declared as (a list is kept as a space-separated line)."""
    default = " ".join(o.default or ()) if o.type is list else o.default
    return Option(spec.setting_key(o), default, o.title, choices=o.choices, minimum=o.minimum, maximum=o.maximum,
                  group=spec.options_group, folder=o.widget_kind == "folder", secret=o.secret,
                  password=o.widget_kind == "password")


class _Options(Mapping):
    """Key → Option: the general settings, then every registered engine's options, as the registry is now (an
    engine registered after this module was imported is there too)."""

    def __init__(self) -> None:
        self._key: tuple = ()
        self._all: dict[str, Option] = {}

    def _current(self) -> dict[str, Option]:
        key = tuple(map(id, ENGINES.values()))
        if key != self._key:
            engines = [engine_option(spec, o) for spec in ENGINES.values() for o in spec.options]
            self._all = {o.key: o for o in (*_GENERAL, *engines, *_VIEW)}
            self._key = key
        return self._all

    def __getitem__(self, key: str) -> Option:
        return self._current()[key]

    def __iter__(self):
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())


OPTIONS: Mapping[str, Option] = _Options()


def engine_options(name: str, settings: "Settings") -> dict[str, Any]:
    """Engine `name`'s options from the settings (its factory's keywords; {} for an engine without options)."""
    spec = ENGINES.get(name)
    if spec is None:
        return {}
    out = {}
    for o in spec.options:
        value = settings.get(spec.setting_key(o))
        if o.secret and not value:
            continue
        try:
            out[o.name] = o.check(value)
        except ValueError:
            out[o.name] = o.default
    return out


class Settings(QObject):
    """Typed access to `OPTIONS` over QSettings. `changed(key, value)` fires after every successful `set`."""

    changed = Signal(str, object)

    def __init__(self, path: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        if path is None:
            folder = user_data_dir()
            folder.mkdir(parents=True, exist_ok=True)
            path = str(folder / "settings.ini")
        self.set_aside: Path | None = None  # where a damaged settings file was moved, for the window to say
        self.problem = _unreadable(Path(path))
        if not self.problem and QSettings(path, QSettings.Format.IniFormat).status() != QSettings.Status.NoError:
            self.problem = "it is not an INI file Qt can read"
        if self.problem:
            try:
                self.set_aside = set_aside(path, "broken")
            except OSError:  # cannot even move it: the defaults are used all the same
                self.set_aside = Path(path)
        self._qs = QSettings(path, QSettings.Format.IniFormat)
        self._secrets: dict[str, Any] = {}  # secret options: this session only

    @property
    def path(self) -> str:
        return self._qs.fileName()

    def get(self, key: str) -> Any:
        option = OPTIONS[key]
        if option.secret:
            return self._secrets.get(key, option.default)
        return option.coerce(self._qs.value(key, option.default))

    def set(self, key: str, value: Any) -> None:
        option = OPTIONS[key]
        value = option.coerce(value)
        if option.secret:  # never written
            if self._secrets.get(key, option.default) != value:
                self._secrets[key] = value
                self.changed.emit(key, value)
            return
        if value == self.get(key) and self._qs.contains(key):
            return
        self._qs.setValue(key, value)
        self._qs.sync()
        self.changed.emit(key, value)

    def reset(self, key: str) -> None:
        self._secrets.pop(key, None)
        self._qs.remove(key)
        self.changed.emit(key, OPTIONS[key].default)

    def add_recent(self, path: str) -> list[str]:
        recent = [p for p in self.get("recent_files") if p != path]
        recent.insert(0, path)
        recent = recent[: self.get("recent_limit")]
        self.set("recent_files", recent)
        return recent
