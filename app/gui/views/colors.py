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
WINDOW = QColor("#3b82c4")
NEWEST = QColor("#1d4f91")
EVICTED = QColor("#9aa0a6")
PREFIX = {"bos": QColor("#c9a227"), "image": QColor("#8e6cc0"), "prompt": QColor("#c0708e")}
FULL = QColor("#9aa0a6")
BAN = QColor("#d23c3c")

# soft tints for "which round confirmed this character", cycled round by round
_TINTS_LIGHT = ["#d8f0dd", "#d6e6fa", "#fbe7c6", "#eadcf5", "#d3f0ef", "#f7dada"]
_TINTS_DARK = ["#24452e", "#233a57", "#4d3b1d", "#3b2d4d", "#1f4644", "#4d2727"]


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
