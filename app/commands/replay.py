"""`scriptorium replay FILE [--document PDF]`: open the window and play a recorded trace into it, without loading
any model. The trace is read (and checked) before any window opens, so a bad file gives a one-line error."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

SPEEDS = {"fast": 0.0, "1": 1.0, "2": 2.0, "5": 5.0, "10": 10.0, "20": 20.0}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="trace file (JSON lines) written by a run with recording on")
    p.add_argument("--document", default=None, help="the PDF/image the run read, to show its pages beside the replay")
    p.add_argument(
        "--speed", choices=list(SPEEDS), default="1",
        help="fast (as fast as the window draws), 1 (as recorded), or 2/5/10/20 times slower (default: 1)",
    )
    p.add_argument("--paused", action="store_true", help="open paused at the start (use the playback bar)")
    p.add_argument("--exit-when-done", action="store_true", help=argparse.SUPPRESS)  # scripts and tests


def with_document(trace, document: str):
    """The trace with its document path(s) pointing at `document` (the same file, on this machine), so the window
    shows the real pages. Returns (trace, whether any event named a document)."""
    import dataclasses

    from app.core.record.events import DocumentOpened, RunStarted

    named = {e.path for e in trace.events if isinstance(e, DocumentOpened)}
    named |= {e.document for e in trace.events if isinstance(e, RunStarted) and e.document}
    if not named:
        return trace, False
    if len(named) == 1:
        targets = named
    else:  # a run over several documents: only the one with the same file name is this one
        targets = {p for p in named if Path(p).name == Path(document).name}
    events = []
    for e in trace.events:
        if isinstance(e, DocumentOpened) and e.path in targets:
            e = dataclasses.replace(e, path=str(document))
        elif isinstance(e, RunStarted) and e.document in targets:
            e = dataclasses.replace(e, document=str(document))
        events.append(e)
    return dataclasses.replace(trace, events=events), bool(targets)


def open_replay(path: str, *, document: str | None = None, speed: float = 1.0, paused: bool = False, trace=None):
    """Create the main window, show it and start the replay. Returns (window, player). Needs a QApplication.
    With `document`, the trace's document path is pointed at that file so its pages are shown. `trace`: the file,
    already read by `load_trace` (else it is read here)."""
    import tempfile

    from app.core.record.trace import load_trace, write_trace
    from app.gui.main_window import MainWindow
    from app.gui.views import DecodingViews

    if trace is None:
        trace = load_trace(path)
    window = MainWindow()
    window.show()
    if document:
        document = str(Path(document).resolve())
        trace, named = with_document(trace, document)
        if named:  # replay a copy whose DocumentOpened names the local file; the window adopts it
            path = str(write_trace(Path(tempfile.mkdtemp(prefix="scriptorium-replay-")) / Path(path).name, trace.events, trace.times))
        elif hasattr(window, "open_files"):
            try:
                window.open_files([document], run=False)
            except TypeError:  # an older window without the `run` switch
                window.open_files([document])
    views = window.findChild(DecodingViews)
    if views is None:  # a window without the decoding views docked: show them on their own
        from PySide6.QtCore import Qt

        views = DecodingViews()
        views.setParent(window, Qt.WindowType.Window)  # a window of its own, kept alive (and found) with the window
        views.setWindowTitle(f"Scriptorium — replay of {path}")
        views.resize(1100, 700)
        views.show()
        sink = None
    else:
        sink = window.handle_event
    if sink is not None and hasattr(window, "open_trace"):
        window.open_trace(path)  # the window's own replay (it resets its session when the scrub goes back)
        player = views.player
        player.pause()
        player.seek(0)
    else:
        player = views.load_trace(trace.events, trace.times, sink=sink, play=False)
    player.set_speed(speed)
    if not paused:
        player.play()
    return window, player


def run(args: argparse.Namespace) -> int:
    from app.core.record.trace import TraceError, load_trace

    try:
        trace = load_trace(args.file)
    except TraceError as exc:
        print(f"scriptorium replay: {exc}", file=sys.stderr)
        return 2
    if not trace.events:
        print(f"scriptorium replay: {args.file} holds no events", file=sys.stderr)
        return 2
    if args.document and not Path(args.document).is_file():
        print(f"scriptorium replay: {args.document}: no such document (--document names the PDF or image the run "
              "read)", file=sys.stderr)
        return 2
    from app.gui.application import create_application

    app = create_application()
    window, player = open_replay(args.file, document=args.document, speed=SPEEDS[args.speed], paused=args.paused,
                                 trace=trace)
    if args.exit_when_done:
        player.state_changed.connect(lambda state: app.quit() if state == "finished" else None)
    return app.exec()
