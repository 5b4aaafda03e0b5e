"""A page's layout under a time budget, interruptible: PyMuPDF's layout analysis (pymupdf4llm, its ONNX model and
its OCR hook) runs in native code where Python's signal handlers cannot run — a page of thousands of vector lines
or a dense grid can keep it busy for minutes, deaf to Ctrl+C and Cancel. So it runs in one child process
(`LayoutProcess`, `python -m app.core.layout.budget`): the parent sends a one-page PDF over a pipe, waits in short
slices, and at every slice checks the cancel token and the deadline. Ctrl+C (KeyboardInterrupt in the parent),
Cancel (`Cancelled`) or the budget running out (`LayoutTimeout`) end the child at once (it is started again for
the next page), so each acts within ~0.1 s.

One child serves the whole process (every PyMuPDFLayout shares it); it runs in its own session with no terminal
output (Ctrl+C reaches the parent only, which decides), and dies with the parent.

What must never live here: the mapping of PyMuPDF's boxes to regions (app.core.layout.pymupdf_layout).
"""
from __future__ import annotations

import atexit
import contextlib
import io
import json
import pickle
import select
import struct
import subprocess
import threading
import time
from typing import Any, Callable

from app.core.layout.base import LayoutError

START_TIMEOUT_S = 120.0  # importing pymupdf4llm + onnxruntime on a busy machine; Ctrl+C and Cancel still act
POLL_S = 0.05
# pymupdf.layout's models whose input is one page image of a fixed size: made with ONNX Runtime's memory arena
ARENA_MODELS = ("feature_imf",)


class LayoutTimeout(LayoutError):
    """The page's layout ran past its budget (the child was ended)."""


@contextlib.contextmanager
def _quiet():
    """pymupdf4llm prints progress lines to stdout (some through pymupdf.message, whose stream is bound at import
    time); a headless convert must keep stdout for its own output."""
    import pymupdf

    sink = io.StringIO()
    saved = getattr(pymupdf, "_g_out_message", None)
    if saved is not None:
        pymupdf._g_out_message = sink
    try:
        with contextlib.redirect_stdout(sink):
            yield
    finally:
        if saved is not None:
            pymupdf._g_out_message = saved


def parse_page(mupdf_doc, index: int, use_ocr: bool, given: list | None = None) -> dict:
    """pymupdf4llm's JSON of one page (runs in app.core.layout.budget's child process), with `finder_tables`
    ([bbox, HTML] of PyMuPDF's table finder) when the layout saw a table. `given`: the page's lines already read
    ([x0, y0, x1, y1, text], points), written into the page instead of OCR'ing it (app.core.layout.given_ocr)."""
    with _quiet():
        import pymupdf4llm

        from app.core.layout.given_ocr import inserting, lines_written, scan_image_unlisted

        hook = {}
        if given is not None and use_ocr:
            hook["ocr_function"] = inserting(given)
        lines = given if hook else None
        with lines_written(lines), scan_image_unlisted(lines, mupdf_doc, index):
            data = pymupdf4llm.to_json(mupdf_doc, pages=[index], use_ocr=use_ocr, write_images=False,
                                       embed_images=False, show_progress=False, **hook)
    pages = json.loads(data).get("pages") or []
    page = pages[0] if pages else {"boxes": []}
    if use_ocr and given is None:  # who read each line the OCR hook wrote (app.core.layout.ocr_scripts)
        from app.core.layout.ocr_scripts import read_lines

        page["ocr_read"] = read_lines()
    if any(b.get("boxclass") == "table" for b in page.get("boxes") or []):
        # the table finder's own cells and extent (the layout's table box follows the text and can miss a ruled
        # column): here, under the page's budget, not in the parent where nothing could stop it
        from app.core.layout.page_boxes import find_tables

        tables = [(b["x0"], b["y0"], b["x1"], b["y1"]) for b in page.get("boxes") or [] if b.get("boxclass") == "table"]
        page["finder_tables"] = [[list(bbox), html] for bbox, html in find_tables(mupdf_doc.load_page(index), tables)]
    from app.core.layout.page_boxes import word_tables

    word_tables(mupdf_doc.load_page(index), page.get("boxes") or [])  # borderless tables from word alignment
    return page


def _die_with_parent() -> None:  # pragma: no cover - runs in the child process
    """A parent that left without ending us (killed, os._exit) must not leave a page being laid out for minutes."""
    import os

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.2)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack(">Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # noqa: S301 - our own child and parent, over a private pipe


def serve() -> None:  # pragma: no cover - runs in the child process
    """The child's loop: one-page PDFs in on stdin, pymupdf4llm's JSON page out on stdout."""
    import os
    import signal
    import sys

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    stdin = sys.stdin.buffer
    stdout = os.fdopen(os.dup(1), "wb")  # the answers get their own descriptor; fd 1 (where native code and
    os.dup2(2, 1)  # libraries print) goes where stderr goes, so nothing printed can corrupt them
    sys.stdout = sys.stderr
    try:
        _answer(stdin, stdout)
    except BaseException:  # noqa: BLE001 - the parent went away mid-message: nothing to say, no one to say it to
        os._exit(0)


def _answer(stdin, stdout) -> None:  # pragma: no cover - runs in the child process
    from app.core.base.noise import quiet_third_party
    from app.core.base.stages import StageClock, measuring

    quiet_third_party(verbose=False)
    with arena_for_page_models() as kept, _quiet():  # (pymupdf.layout's sessions are made as `_quiet` imports pymupdf)
        import pymupdf
        import pymupdf4llm  # noqa: F401 - loaded before "ready", so a page's budget never pays for it
    with _quiet():
        mask = _mask_layout_ocr()
        from app.core.layout.ocr_scripts import route_layout_ocr

        route_layout_ocr()  # lines in scripts RapidOCR cannot read: the script router's (app.core.scripts)
    _send(stdout, ("ready", {"arena": [[i.shape for i in s.get_inputs()] for s in kept]}))
    while True:
        try:
            message = _receive(stdin)
        except EOFError:
            return
        if message is None:
            return
        pdf_bytes, use_ocr, given = message
        if mask is not None:
            mask.reset()  # a new page: its script is judged afresh
        try:
            clock = StageClock()  # the page's stages in here go back with it (the parent absorbs them)
            with pymupdf.open(stream=pdf_bytes, filetype="pdf") as doc, measuring(clock):
                result = ("ok", {**parse_page(doc, 0, use_ocr, given), "stage_ms": clock.ms})
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which falls back to the whole page
            result = ("error", f"{type(exc).__name__}: {exc}")
        _send(stdout, result)


@contextlib.contextmanager
def arena_for_page_models():
    """ONNX Runtime's memory arena for the sessions made meanwhile of pymupdf.layout's page-image feature model
    (ARENA_MODELS); yields the list of those sessions. pymupdf.layout makes its sessions when it is imported (by
    `import pymupdf` itself where it is installed), all with the arena off so that memory never grows with an
    input's size. That model's input is one 300 x 300 grey page, the same size every call, so its arena holds one
    call's memory and never grows: the child keeps about 160 MB more between pages, its peak is 40-80 MB higher,
    and the model's forward, most of the layout child's time on a scanned page, takes about a third less time.
    Every other session is made as its maker asks."""
    import onnxruntime as ort
    from pathlib import Path

    made, kept = ort.InferenceSession, []

    class Session(made):  # a class, not a function: pymupdf4llm annotates with `ort.InferenceSession | None`
        def __init__(self, path_or_bytes, sess_options=None, *args, **kwargs):
            arena = sess_options is not None and isinstance(path_or_bytes, (str, Path)) \
                and Path(path_or_bytes).name.startswith(ARENA_MODELS)
            if arena:
                sess_options.enable_cpu_mem_arena = True
            super().__init__(path_or_bytes, sess_options, *args, **kwargs)
            if arena:
                kept.append(self)

    ort.InferenceSession = Session
    try:
        yield kept
    finally:
        ort.InferenceSession = made


def _mask_layout_ocr():  # pragma: no cover - runs in the child process
    """Latin pages read as Latin by the layout's OCR hook too (app.core.rapid.script_mask): its RapidOCR
    instance gets the CJK mask. None when pymupdf4llm uses another OCR backend."""
    try:
        from pymupdf4llm.ocr.detect_rapidocr import detect_rapidocr_backend

        if detect_rapidocr_backend() != "rapidocr":
            return None
        from pymupdf4llm.ocr import rapidocr_391_backend

        from app.core.rapid.script_mask import ScriptMask, install, time_detector

        engine = rapidocr_391_backend.init_engine()
        time_detector(engine)
        return install(engine, ScriptMask())
    except Exception:  # noqa: BLE001 - no RapidOCR: the layout reads born-digital pages only
        return None


def _command() -> list[str]:
    import sys

    if getattr(sys, "frozen", False):  # the installed bundle: its executable is the app (app.cli knows the flag)
        return [sys.executable, "--layout-worker"]
    return [sys.executable, "-m", "app.core.layout.budget"]


class LayoutProcess:
    """The child that runs PyMuPDF's layout on one-page PDFs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self.starts = 0
        self.arena_inputs: list = []  # the input shapes of the child's sessions that keep the arena (ARENA_MODELS)

    def _wait(self, deadline: float | None, cancel, what: str) -> Any:
        from app.core.base.cancel import Cancelled

        proc = self._proc
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], POLL_S)
            if ready:
                try:
                    return _receive(proc.stdout)
                except (EOFError, OSError, pickle.UnpicklingError):
                    self.stop()
                    raise LayoutError(f"the layout process ended while {what}") from None
            if cancel is not None and cancel.cancelled:
                self.stop()
                raise Cancelled()
            if deadline is not None and time.monotonic() > deadline:
                self.stop()
                raise LayoutTimeout(what)
            if proc.poll() is not None:
                self.stop()
                raise LayoutError(f"the layout process ended while {what}")

    def _ensure(self, cancel) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self.stop()
        # its own session: a terminal's Ctrl+C goes to us, and we decide; no stdout/stderr of ours, so a pipe
        # reading our output never waits for it
        self._proc = subprocess.Popen(_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        self.starts += 1
        kind, facts = self._wait(time.monotonic() + START_TIMEOUT_S, cancel, "starting")
        self.arena_inputs = (facts or {}).get("arena", []) if kind == "ready" else []
        if kind != "ready":
            self.stop()
            raise LayoutError("the layout process did not start")

    def parse(self, pdf_bytes: bytes, use_ocr: bool, *, timeout: float | None = None, cancel=None,
              given: list | None = None, meanwhile: Callable[[], object] | None = None) -> dict:
        """pymupdf4llm's JSON page of the one-page PDF `pdf_bytes` (`given`: its lines already read, in place of
        the layout's OCR). Raises LayoutTimeout past `timeout` seconds, Cancelled when `cancel` fires, LayoutError
        when the child fails; KeyboardInterrupt ends the child too. `meanwhile`: work of the caller's done here
        while the child lays the page out (on another core); its errors are left to the caller's own call of it
        later, where they are reported."""
        with self._lock:
            try:
                self._ensure(cancel)
                try:
                    _send(self._proc.stdin, (pdf_bytes, use_ocr, given))
                except OSError:
                    self.stop()
                    raise LayoutError("the layout process ended before the page was sent") from None
                if meanwhile is not None:
                    try:
                        meanwhile()
                    except Exception:  # noqa: BLE001 - done again (and reported) where the caller needs it
                        pass
                # (the budget counts from here: the caller's work may have taken longer than the page)
                deadline = time.monotonic() + timeout if timeout else None
                kind, value = self._wait(deadline, cancel, "laying out the page")
            except BaseException:  # Ctrl+C, Cancel, the budget: the child may be mid-page; end it
                self.stop()
                raise
        if kind == "ok":
            from app.core.base.stages import absorb

            absorb(value.pop("stage_ms", None))  # the child's detector and recogniser, out of the parent's layout
            return value
        raise LayoutError(value)

    def stop(self) -> None:
        """End the child now (it is started again when needed)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:
            pass


_SHARED = LayoutProcess()
atexit.register(_SHARED.stop)


def shared_process() -> LayoutProcess:
    return _SHARED


if __name__ == "__main__":  # the child: python -m app.core.layout.budget
    serve()
