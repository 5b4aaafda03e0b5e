"""Start-up: the QApplication, the event loop and the main window. Nothing heavy is imported here, so the window
appears in about a second; torch and transformers are imported later, on the worker thread."""
from __future__ import annotations

import argparse
import sys


def create_application(argv: list[str] | None = None):
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("Scriptorium")
    app.setOrganizationName("Scriptorium")
    from app import __version__

    app.setApplicationVersion(__version__)
    return app


def run_app(args: argparse.Namespace) -> int:
    qt_app = create_application()
    from app.gui.main_window import MainWindow

    window = MainWindow()
    window.show()
    files = list(getattr(args, "files", []) or [])
    if getattr(args, "sample", False):
        from app.core.paths import sample_document

        files.insert(0, str(sample_document()))
    if files:
        window.open_files(files)
    return qt_app.exec()
