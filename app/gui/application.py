"""Start-up: the QApplication, the theme, the event loop (qasync, so asyncio code can run on the GUI loop) and the
main window. Nothing heavy is imported here, so the window appears in about a second; torch and transformers are
imported later, on the worker thread, when a model is needed."""
from __future__ import annotations

import argparse
import sys


def create_application(argv: list[str] | None = None):
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from app import __version__
    from app.core.base.paths import resources_dir

    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("Scriptorium")
    app.setOrganizationName("Scriptorium")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("scriptorium")
    logo = resources_dir() / "icons" / "scriptorium.svg"
    if logo.exists():
        app.setWindowIcon(QIcon(str(logo)))
    return app


def build_window(args: argparse.Namespace):
    """The window, opened on the files/sample the arguments name (also used by tests of the command line)."""
    from app.gui.main_window import MainWindow

    window = MainWindow()
    from app.gui.theme import apply_settings_theme

    apply_settings_theme(create_application(), window.settings)
    engine = getattr(args, "engine", None)
    if engine:
        window.engine_bar.set_engine(engine)
    if getattr(args, "model", None):
        window.engine_bar.set_model_path(args.model)
    return window


def open_requested(window, args: argparse.Namespace) -> None:
    files = list(getattr(args, "files", []) or [])
    if getattr(args, "sample", False):
        from app.core.base.paths import degraded_sample, sample_document

        samples = [sample_document(), degraded_sample()]  # clean print, then a faded scan (drafts rejected often)
        files[:0] = [str(p) for p in samples if p.is_file()]
    if files:
        window.open_files(files, run=True if getattr(args, "run", False) else None)


def install_event_loop(qt_app):
    """The app's asyncio loop: qasync on Qt's event loop, installed as the host loop (app.core.base.aio) on which the
    region queue's requests run; models stay on the worker lane. It runs once `run_until_complete` drives it."""
    import asyncio

    import qasync

    from app.core.base.aio import set_host_loop

    loop = qasync.QEventLoop(qt_app)
    asyncio.set_event_loop(loop)
    set_host_loop(loop)
    return loop


def close_event_loop(loop) -> None:
    """Close the app's qasync loop (not running) and delete its timer object here, on the GUI thread. qasync leaves
    a Qt timer registered for every `call_later` until it fires, cancelled or not (a request's timeout), and its
    timer object is freed only with the loop: by the garbage collector, on whichever thread it runs. Freed on a
    worker thread, Qt cannot stop the object's timers ("Timers cannot be stopped from another thread"), and the
    next one to fire reaches a deleted object: a segmentation fault in the GUI thread's event processing, seconds
    or minutes later."""
    import shiboken6

    from app.core.base.aio import set_host_loop

    loop.close()
    timer = getattr(loop, "_timer", None)
    if timer is not None and shiboken6.isValid(timer):
        shiboken6.delete(timer)
    set_host_loop(None)


def run_app(args: argparse.Namespace) -> int:
    qt_app = create_application()
    window = build_window(args)
    window.show()
    window.offer_restore()
    open_requested(window, args)
    import asyncio

    loop = install_event_loop(qt_app)
    closed = asyncio.Event()
    qt_app.aboutToQuit.connect(closed.set)
    try:
        loop.run_until_complete(closed.wait())
    finally:
        close_event_loop(loop)
    return 0
