"""`python -m app bench hostile [--quick] [--layout page|auto] [--budget S] [--keep DIR]`: the hostile corpus
(app.bench.hostile_corpus) through both faces, with counts.

- `convert`: every document in its own process (`--engine classic`), so each gets its own exit code; its output
  is searched for a traceback, its wall time held against the budget, and the output folder for half-written or
  temporary files.
- the window (offscreen, in this process, with a throw-away SCRIPTORIUM_HOME): every document opened as a person
  would (File → Open) until it shows its pages or says why not; every wrong-shape journal and damaged settings
  file at a window's start (it must open and say the file was set aside); every wrong-shape trace opened for
  replay (it must be refused with a message).

The rule for every file: no traceback, no hang past the budget, a message a person can act on, nothing already
written lost. Prints the counts; exits 1 when any traceback or over-budget run was seen.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def _convert(path: Path, out: Path, layout: str, budget: float) -> tuple[int | None, str, float]:
    cmd = [sys.executable, "-m", "app", "convert", str(path), "-o", str(out), "--engine", "classic", "--layout",
           layout, "--ocr-dpi", "100", "-q"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=budget, errors="replace",
                              env=dict(os.environ, HF_HUB_OFFLINE="1"))
        return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - t0
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return None, text, time.perf_counter() - t0


def leftovers(folder: Path) -> list[str]:
    """Temporary or half-written files a convert left in `folder` (none may remain)."""
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


def run_convert(files: list[tuple[Path, str]], out_root: Path, layout: str, budget: float) -> dict:
    codes: Counter = Counter()
    tracebacks, over, temps, silent = [], [], [], []
    for n, (path, what) in enumerate(files):
        out = out_root / f"{n:03d}"
        code, text, seconds = _convert(path, out, layout, budget)
        codes[code if code is not None else "timeout"] += 1
        if "Traceback" in text:
            tracebacks.append(f"{path.name} ({what})")
        if code is None or seconds > budget:
            over.append(f"{path.name}: {seconds:.1f} s")
        if out.exists() and leftovers(out):
            temps.append(path.name)
        if code not in (0, None) and not text.strip():
            silent.append(path.name)  # failed without saying why
    return {"files": len(files), "codes": dict(sorted(codes.items(), key=str)), "tracebacks": tracebacks,
            "over_budget": over, "temporaries_left": temps, "silent_failures": silent}


class _Catcher:
    """Exceptions that reach Qt's event loop or a thread (each would print a traceback)."""

    def __init__(self) -> None:
        self.caught: list[str] = []

    def __enter__(self) -> "_Catcher":
        import threading

        self._old = sys.excepthook, threading.excepthook
        sys.excepthook = lambda t, v, tb: self.caught.append(f"{t.__name__}: {v}")
        threading.excepthook = lambda a: self.caught.append(f"{a.exc_type.__name__}: {a.exc_value}")
        return self

    def __exit__(self, *exc) -> None:
        import threading

        sys.excepthook, threading.excepthook = self._old


def run_window(files: list[tuple[Path, str]], home: Path, budget: float) -> dict:
    """Open each document, start a window on each wrong-shape journal and settings file, replay each bad trace."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["SCRIPTORIUM_HOME"] = str(home)
    from PySide6.QtWidgets import QApplication

    from app.bench.hostile_corpus import SETTINGS_SHAPES, journal_shapes, trace_shapes
    from app.core.record.trace import TraceError
    from app.gui.application import create_application
    from app.gui.main_window import MainWindow
    from app.gui.prompts import Prompter

    create_application()
    outcome: Counter = Counter()
    over: list[str] = []
    unexplained: list[str] = []
    with _Catcher() as catcher:
        window = MainWindow(prompter=Prompter(interactive=False))
        window.settings.set("auto_run", False)
        for path, what in files:
            done: list[str] = []

            def opened_(*_a, done=done) -> None:
                done.append("opened")

            def refused_(*_a, done=done) -> None:
                done.append("refused")

            window.renderer.info_ready.connect(opened_)
            window.renderer.failed.connect(refused_)
            t0 = time.perf_counter()
            opened = window.open_files([str(path)], run=False)
            while opened and not done and time.perf_counter() - t0 < budget:
                QApplication.processEvents()
                time.sleep(0.01)
            if opened and not done:
                over.append(path.name)
            kind = done[0] if done else ("not opened" if not opened else "over budget")
            outcome[kind] += 1
            QApplication.processEvents()  # the window's own slots for the same signal
            status = window.documents.item(0).text() if window.documents.count() else ""
            if kind == "refused" and not (window.banner.text and "failed" in status):
                unexplained.append(f"{path.name}: banner {window.banner.text!r}, list {status!r}")
            window.renderer.info_ready.disconnect(opened_)
            window.renderer.failed.disconnect(refused_)
            while window.session.documents:
                window.close_document(0)
            window.banner.hide()
        window.renderer.wait(5000)
        window.close()
        journal_told = settings_told = traces_refused = 0
        journals, settings_files, traces = journal_shapes(), SETTINGS_SHAPES, trace_shapes()
        for name, text in journals:
            jpath = home / "journal" / "work.json"
            jpath.parent.mkdir(parents=True, exist_ok=True)
            jpath.write_text(text, encoding="utf-8", errors="surrogateescape")
            w = MainWindow(prompter=Prompter(interactive=False))
            w.offer_restore()
            journal_told += "set aside" in w.banner.text
            w.close()
        for name, data in settings_files:
            (home / "settings.ini").write_bytes(data)
            w = MainWindow(prompter=Prompter(interactive=False))
            w.offer_restore()
            settings_told += "set aside" in w.banner.text or name == "wrong-types"
            w.close()
        for name, text in traces:
            tpath = home / f"{name}.jsonl"
            tpath.write_text(text, encoding="utf-8", errors="surrogateescape")
            w = MainWindow(prompter=Prompter(interactive=False))
            try:  # what File → Open trace does: a TraceError becomes the banner's message
                w.open_trace(tpath)
            except TraceError as exc:
                traces_refused += bool(str(exc))
            except Exception as exc:  # noqa: BLE001 - counted: anything else would be a crash
                catcher.caught.append(f"{type(exc).__name__}: {exc}")
            w.close()
    return {"documents": len(files), "outcomes": dict(outcome), "over_budget": over, "unexplained": unexplained,
            "journals": f"{journal_told}/{len(journals)} set aside and told",
            "settings": f"{settings_told}/{len(settings_files)} handled", "traces": f"{traces_refused}/{len(traces)} "
            "refused with a message", "tracebacks": catcher.caught}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench hostile", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="the CI subset")
    p.add_argument("--layout", default="page", choices=("page", "auto", "pymupdf"),
                   help="layout for the convert runs (default page: the corpus is about opening files)")
    p.add_argument("--budget", type=float, default=90.0, help="seconds one file may take (default 90)")
    p.add_argument("--keep", default=None, metavar="DIR", help="build the corpus and outputs here and keep them")
    p.add_argument("--no-window", action="store_true", help="convert only")
    args = p.parse_args(argv)
    from app.bench.hostile_corpus import build_documents, graph_paper_pdf

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="scriptorium-hostile-"))
    files = build_documents(root / "corpus", quick=args.quick)
    t0 = time.perf_counter()
    conv = run_convert(files, root / "out", args.layout, args.budget)
    graph = graph_paper_pdf(root / "graph-layout.pdf")
    gcode, gtext, gsec = _convert(graph, root / "out-graph", "auto", args.budget)
    conv_s = time.perf_counter() - t0
    print(f"convert: {conv['files']} files, exit codes {conv['codes']}, tracebacks {len(conv['tracebacks'])}, "
          f"over budget {len(conv['over_budget'])}, temporaries left {len(conv['temporaries_left'])}, "
          f"silent failures {len(conv['silent_failures'])} ({conv_s:.0f} s)")
    print(f"convert: graph paper with the PyMuPDF layout: exit {gcode} in {gsec:.1f} s, "
          f"tracebacks {int('Traceback' in gtext)}")
    for key in ("tracebacks", "over_budget", "temporaries_left", "silent_failures"):
        for item in conv[key]:
            print(f"  {key}: {item}")
    bad = len(conv["tracebacks"]) + len(conv["over_budget"]) + ("Traceback" in gtext) + (gcode is None)
    if not args.no_window:
        t0 = time.perf_counter()
        win = run_window(files, root / "home", args.budget)
        print(f"window: {win['documents']} documents {win['outcomes']}, over budget {len(win['over_budget'])}, "
              f"unexplained {len(win['unexplained'])}; journals {win['journals']}; settings {win['settings']}; "
              f"traces {win['traces']}; tracebacks {len(win['tracebacks'])} ({time.perf_counter() - t0:.0f} s)")
        for item in win["tracebacks"] + win["unexplained"]:
            print(f"  window: {item}")
        bad += len(win["tracebacks"]) + len(win["over_budget"])
    window_tb, window_over = (0, 0) if args.no_window else (len(win["tracebacks"]), len(win["over_budget"]))
    print(f"tracebacks {len(conv['tracebacks']) + ('Traceback' in gtext) + window_tb}, "
          f"over-budget {len(conv['over_budget']) + window_over}")
    return 1 if bad else 0
