#!/usr/bin/env python3
"""Regenerate the application icon set from resources/icons/scriptorium.svg:

    .venv/bin/python installer/icons.py

writes resources/icons/scriptorium-<N>.png (hicolor sizes, for the Linux install script and the window icon),
scriptorium.ico (Windows executable and installer) and scriptorium.icns (macOS app bundle). The outputs are
committed, so a build never needs this script; run it after editing the SVG. Uses Qt's SVG renderer and Pillow.
"""
from __future__ import annotations

import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
SVG = ICONS / "scriptorium.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)  # the hicolor theme's usual apps/ sizes


def render(size: int) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(str(SVG)).render(painter)
    painter.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    return bytes(data)


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PIL import Image
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (Qt needs it alive)
    images = {}
    for size in PNG_SIZES:
        png = render(size)
        (ICONS / f"scriptorium-{size}.png").write_bytes(png)
        images[size] = Image.open(io.BytesIO(png)).convert("RGBA")
    images[256].save(ICONS / "scriptorium.ico", sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)],
                     append_images=[images[s] for s in (16, 24, 32, 48, 64, 128)])
    images[512].save(ICONS / "scriptorium.icns")
    print(f"wrote {len(PNG_SIZES)} PNGs, scriptorium.ico and scriptorium.icns to {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
