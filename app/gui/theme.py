"""Looks: light/dark palettes that follow the system, the style-sheet template filled from the palette, monochrome
SVG icons recoloured at load, and the colours of region tasks.

What must never live here: layout of widgets or any behaviour.
"""
from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QObject, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

from app.core.base.paths import resources_dir

# Region colours by task: readable on a white page and on a dark canvas alike.
TASK_COLORS = {
    "text": "#2f7de1",
    "table": "#1f9d55",
    "formula": "#9b51e0",
    "picture": "#e07b00",
    "skipped": "#8a8a8a",
}
LIVE_COLOR = "#e8384f"  # the region being decoded right now
FOUND_COLOR = "#ffc400"  # a region holding a hit of the find bar (the editor marks hits in the same yellow)
REVIEW_COLOR = "#b26a00"  # hatches a block that needs a person's review (low confidence, high CER, truncated…)


def task_color(task: str) -> QColor:
    return QColor(TASK_COLORS.get(task, TASK_COLORS["text"]))


def _dark_palette() -> QPalette:
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#25262a",
        QPalette.ColorRole.ToolTipBase: "#2b2c30",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2b2c30",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#3d7bd9",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#8ab4f8",
        QPalette.ColorRole.PlaceholderText: "#8a8d91",
        QPalette.ColorRole.Mid: "#3a3b3f",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f7276"))
    return p


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
    if scheme is not None and scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return is_dark(QGuiApplication.palette())


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def stylesheet(palette: QPalette) -> str:
    """Fill resources/styles/base.qss from the palette."""
    dark = is_dark(palette)
    window = palette.color(QPalette.ColorRole.Window)
    text = palette.color(QPalette.ColorRole.Text)
    highlight = palette.color(QPalette.ColorRole.Highlight)
    soft = QColor(highlight)
    soft.setAlpha(70)
    tokens = {
        "text": text.name(),
        "muted": (QColor("#9aa0a6") if dark else QColor("#5f6368")).name(),
        "border": (window.lighter(140) if dark else window.darker(115)).name(),
        "hover": (window.lighter(130) if dark else window.darker(108)).name(),
        "panel": (window.darker(110) if dark else window.lighter(103)).name(),
        "canvas": ("#121314" if dark else "#e7e8ea"),
        "selection_soft": f"rgba({soft.red()},{soft.green()},{soft.blue()},{soft.alpha()})",
        "badge": "#5f6368",
        "banner": ("#4a3b16" if dark else "#fff4ce"),
        "mono": "monospace",
    }
    template = (resources_dir() / "styles" / "base.qss").read_text(encoding="utf-8")
    for key, value in tokens.items():
        template = template.replace("{{ " + key + " }}", value)
    return template


def apply_theme(app, mode: str = "system") -> bool:
    """Set palette and style sheet for `mode` (system | light | dark); returns whether the result is dark."""
    dark = system_prefers_dark() if mode == "system" else mode == "dark"
    if mode != "system" or dark:
        app.setStyle("Fusion")
    palette = _dark_palette() if dark else app.style().standardPalette()
    app.setPalette(palette)
    app.setStyleSheet(stylesheet(palette))
    icon.cache_clear()
    return dark


class ThemeFollower(QObject):
    """Re-applies the theme when the system switches between light and dark (mode "system" only)."""

    def __init__(self, app, mode: str = "system") -> None:
        super().__init__(app)
        self._app = app
        self.mode = mode
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._system_changed)
        self.dark = apply_theme(app, mode)

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self.dark = apply_theme(self._app, mode)

    def _system_changed(self, *_args) -> None:
        if self.mode == "system":
            self.dark = apply_theme(self._app, "system")


@lru_cache(maxsize=128)
def icon(name: str, color: str | None = None) -> QIcon:
    """A monochrome SVG from resources/icons with `currentColor` replaced by `color` (default: the text colour of
    the active palette), so one icon set serves light and dark."""
    path = resources_dir() / "icons" / f"{name}.svg"
    if not path.exists():
        return QIcon()
    if color is None:
        color = QGuiApplication.palette().color(QPalette.ColorRole.WindowText).name()
    data = path.read_text(encoding="utf-8").replace("currentColor", color)
    renderer = QSvgRenderer(QByteArray(data.encode("utf-8")))
    result = QIcon()
    for size in (16, 24, 32, 48):
        pixmap = QPixmap(QSize(size, size))
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        result.addPixmap(pixmap)
    return result


def apply_settings_theme(app, settings) -> None:
    """Follow the system palette (or the colours the settings force), once per application."""
    if getattr(app, "theme_follower", None) is None:
        app.theme_follower = ThemeFollower(app, settings.get("theme"))
