"""The decoding views' colours: one meaning per colour in every view (SpeculatoViz's scheme: accepted green,
rejected red, corrected orange, bonus blue), adjusted to the system palette's light or dark background."""
from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QWidget

ACCEPTED = QColor("#2e9d52")
REJECTED = QColor("#d23c3c")
CORRECTED = QColor("#e8891d")
BONUS = QColor("#2f7de1")
DRAFT = QColor("#8a94a6")
VERIFY = QColor("#7b5ea7")  # verify time (blue means bonus, and the R-SWA window in its own view)
WINDOW = QColor("#3b82c4")
NEWEST = QColor("#1d4f91")
EVICTED = QColor("#9aa0a6")
PREFIX = {"bos": QColor("#c9a227"), "image": QColor("#8e6cc0"), "prompt": QColor("#c0708e")}
FULL = QColor("#9aa0a6")
BAN = QColor("#d23c3c")

# soft tints for "which round confirmed this character", cycled round by round: light tints of the Okabe-Ito
# colour-blind-safe set, without its red and green (those mean rejected and accepted here)
_TINTS_LIGHT = ["#cfe8f7", "#fde3b3", "#f6f0b0", "#ecd3e3", "#dedede", "#c9d6ea"]
_TINTS_DARK = ["#1f3f55", "#5a4214", "#4d4819", "#4a2f44", "#3a3a3a", "#22324c"]


def is_dark(widget: QWidget) -> bool:
    return widget.palette().color(QPalette.ColorRole.Window).lightness() < 128


def round_tint(index: int, dark: bool) -> QColor:
    tints = _TINTS_DARK if dark else _TINTS_LIGHT
    return QColor(tints[index % len(tints)])


def faded(color: QColor, alpha: float) -> QColor:
    c = QColor(color)
    c.setAlphaF(max(0.0, min(1.0, alpha)))
    return c


def text_on(color: QColor) -> QColor:
    return QColor("#ffffff") if color.lightness() < 150 else QColor("#111111")


def prob_tint(p: float, dark: bool) -> QColor:
    """A character's background by the verifier's probability of the token that wrote it: none when sure, a
    stronger red the less sure it was (p 0.5 reads as clearly tinted)."""
    doubt = max(0.0, min(1.0, 1.0 - float(p)))
    return faded(REJECTED, min(0.85, doubt * (1.2 if dark else 1.0)) if doubt > 0.02 else 0.0)
