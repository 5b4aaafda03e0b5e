"""The About box: versions of everything that matters, the device in use, and every shortcut."""
from __future__ import annotations

import html
import platform
import sys
from importlib import metadata

from PySide6.QtWidgets import (
    QMessageBox,
    QWidget,
)

from app import __version__

PACKAGES = ("PySide6-Essentials", "torch", "transformers", "pymupdf", "latex2mathml", "Markdown")


def versions() -> dict[str, str]:
    out = {"Scriptorium": __version__, "Python": sys.version.split()[0], "Platform": platform.platform(terse=True)}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def about_html(device: str, shortcuts: list[tuple[str, str]] = ()) -> str:
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in versions().items())
    keys = "".join(f"<tr><td>{html.escape(t)}</td><td><code>{html.escape(s)}</code></td></tr>" for t, s in shortcuts)
    return (
        f"<h3>Scriptorium {__version__}</h3><p>A workbench for OCR vision-language models: pages beside editable "
        f"Markdown, with the decoder's rounds and window shown live.</p><p><b>Device in use:</b> "
        f"{html.escape(device or 'none yet (no model loaded)')}</p><table>{rows}</table>"
        + (f"<h4>Shortcuts</h4><table>{keys}</table>" if keys else "")
    )


def show_about(parent: QWidget, device: str, shortcuts: list[tuple[str, str]] = ()) -> None:
    QMessageBox.about(parent, "About Scriptorium", about_html(device, shortcuts))
