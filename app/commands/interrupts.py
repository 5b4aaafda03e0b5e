"""Ctrl+C during `convert` (`Interrupts` says what it does), armed by the run's phases (PhaseChanged events), and
the imports done before it can land inside a C extension's.

What must never live here: conversion (app.commands.convert), the pipeline.
"""
from __future__ import annotations


class Interrupts:
    """Ctrl+C while a document is being read or written cancels the run (the trace closed, "interrupted", exit 130,
    nothing half-written); while opening a document or loading a model — nothing is being written, and the time goes
    into imports and native loaders — the process leaves at once, quietly (app.quiet_exit).

    The run's cancel token is set first, so a KeyboardInterrupt that native code swallows (PyMuPDF turns one raised
    inside its write callback into a "Director error") still ends the run. During the layout no KeyboardInterrupt
    is raised at all: the wait on the layout child polls the token, and raising inside PyMuPDF's callbacks is what
    turned Ctrl+C into a failed layout and a finished run."""

    armed = False
    phase = ""
    cancel = None  # the CancelToken of the run in progress
    ARMED_PHASES = frozenset({"rendering", "layout", "decoding", "encoding", "assembling"})
    COOPERATIVE_PHASES = frozenset({"layout"})

    overlap = False  # several inputs on threads (app.commands.convert_inputs.Overlap): Ctrl+C reaches the waiting main thread

    @classmethod
    def handler(cls, signum, frame) -> None:
        if cls.armed or cls.overlap:
            first = cls.cancel is not None and not cls.cancel.cancelled
            if cls.cancel is not None:
                cls.cancel.cancel()
            if first and cls.phase in cls.COOPERATIVE_PHASES and not cls.overlap:
                return  # the layout wait sees the token within a poll; a second Ctrl+C raises
            raise KeyboardInterrupt
        from app import quiet_exit

        quiet_exit()


def take_over_interrupts():
    """Install `Interrupts.handler`; returns the handler it replaced (None off the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, Interrupts.handler)


def warm_imports() -> None:
    """Import what every run needs (C extensions among them) before Ctrl+C can raise inside an import."""
    import numpy  # noqa: F401
    import PIL.Image  # noqa: F401
    import pymupdf  # noqa: F401
    import rapidfuzz  # noqa: F401

    import app.core.layout.budget  # noqa: F401
    import app.core.pipeline.html_render  # noqa: F401
    import app.core.pipeline.run  # noqa: F401
    import app.core.text.textlayer  # noqa: F401
