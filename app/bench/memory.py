"""`python -m app bench memory [--pages N] [--every K] [--engine E]`: window memory while reading a long PDF.

A report of N pages (default 300; app.core.document.sample_documents.make_long_pdf) is opened in the real
main window on the offscreen platform and read with the default engine (the settings' "auto": the built-in
reader when no GravityOCR weights are installed), as a person who drops the file and presses Read would.
Printed: the resident memory (RSS) once the document is open and its first page is read ("load"), then
every K pages (default 50), and the growth from load to the last sample. The target is flat after load:
growth within 10 %. `--pages 20 --every 5` is a quick run (each page is a real read: about 15-20 s a page
on 2 busy cores).

The user data folder is a temporary one (the person's settings, journal and recent files are not touched);
the models folders are the usual ones. What must never live here: asserts (this prints figures).
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from app.bench.paging import rss_mb


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app bench memory", description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=300, help="pages in the generated report (default 300)")
    p.add_argument("--every", type=int, default=50, help="print RSS every this many pages (default 50)")
    p.add_argument("--engine", default="", help="engine (default: the settings' default, auto)")
    p.add_argument("--timeout", type=float, default=6 * 3600, help="give up after this many seconds")
    args = p.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="scriptorium-bench-memory-") as tmp:
        os.environ["SCRIPTORIUM_HOME"] = str(Path(tmp) / "home")
        return _run(args, Path(tmp))


def _run(args, tmp: Path) -> int:
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from app.core.document.sample_documents import make_long_pdf
    from app.core.record import events as ev

    pdf = make_long_pdf(tmp / f"report-{args.pages}.pdf", pages=args.pages)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    from app.gui.main_window import MainWindow

    w = MainWindow()
    if args.engine:
        w.engine_bar.set_engine(args.engine)
    w.resize(1440, 900)
    w.show()
    finished: set[int] = set()
    state = {"fatal": "", "ended": False}

    def watch(events: list) -> None:
        for e in events:
            if isinstance(e, ev.PageFinished):
                finished.add(e.page)
            elif isinstance(e, ev.ErrorRaised) and e.fatal:
                state["fatal"] = e.message
            elif isinstance(e, (ev.RunFinished, ev.RunCancelled)):
                state["ended"] = True

    w.decoder.events.connect(watch)

    def pump(until, deadline: float) -> bool:
        while not until():
            if time.monotonic() > deadline or state["fatal"]:
                return False
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
            time.sleep(0.01)
        return True

    t0 = time.monotonic()
    deadline = t0 + args.timeout
    w.open_files([str(pdf)], run=False)
    pump(lambda: w.work is not None and bool(w.work.page_sizes), deadline)
    engine = w.engine_bar.engine_name or "auto"
    print(f"bench memory: {args.pages}-page report, engine {engine}, window offscreen;"
          f" RSS before reading {rss_mb():.0f} MB", flush=True)
    w.run_document(list(range(args.pages)))
    rows: list[tuple[str, int, float, float]] = []
    marks = sorted({1, *range(args.every, args.pages + 1, args.every), args.pages})
    for mark in marks:
        if not pump(lambda: len(finished) >= mark or state["ended"], deadline):
            break
        gc.collect()
        app.processEvents()
        label = "load" if mark == 1 else str(mark)
        rows.append((label, len(finished), rss_mb(), time.monotonic() - t0))
        _, read, rss, at = rows[-1]
        print(f"  {label:>5}  pages read {read:4d}  RSS {rss:7.0f} MB  at {at:6.0f} s", flush=True)
        if state["ended"] and len(finished) < mark:
            break
    if state["fatal"]:
        print(f"bench memory: the run failed: {state['fatal']}", file=sys.stderr)
    w.cancel_run(discard=True)
    w.close()
    if len(rows) < 2:
        return 1
    base, last = rows[0][2], rows[-1][2]
    growth = (last - base) / base * 100
    verdict = "flat" if growth <= 10 else "GROWS"
    print(f"growth from load to {rows[-1][0]} pages: {last - base:+.0f} MB ({growth:+.1f} %), {verdict}"
          f" (target: within 10 %)", flush=True)
    return 0
