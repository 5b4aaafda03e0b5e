"""Issue 17's defects (3) and (6), held by tests: a page whose layout ignored Ctrl+C and Cancel (a time budget, a
cancel token the layout wait polls, an interrupt native code swallows), and Ctrl+C in the first moments of convert."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.bench.hostile_corpus import graph_paper_pdf
from app.core.document.sample_documents import make_sample_pdf

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return make_sample_pdf(tmp_path_factory.mktemp("interrupts") / "sample.pdf", pages=1)


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return graph_paper_pdf(tmp_path_factory.mktemp("graph") / "graph.pdf")


# --- 3: a pathological page under a time budget ----------------------------------------------------------------------

def test_3_a_layout_past_its_budget_falls_back_to_the_whole_page_with_a_warning(graph):
    from app.core.record import events as ev
    from app.core.pipeline import Pipeline, PipelineOptions

    events: list = []
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf", layout_timeout=0.05, ocr_dpi=40),
                    emit=events.append)
    try:
        out = pipe.run(graph)
    finally:
        pipe.close()
    warnings = [e.message for e in events if isinstance(e, ev.ErrorRaised) and not e.fatal]
    assert any("took longer than 0.05 s" in m and "whole page" in m for m in warnings), warnings
    assert out.pages[0].layout == "page" and len(out.pages[0].regions) == 1


def test_3_cancel_stops_a_layout_in_progress(graph, monkeypatch):
    """Cancel while the layout child works on the page: the wait for it ends the run as cancelled, the layout never
    finishes nor falls back to the whole page. Synchronised on the page reaching the child, not on a sleep; no
    figure of this machine's speed in the asserts (the 1-second target is measured by `bench hostile`)."""
    from app.core.record import events as ev
    from app.core.base.cancel import CancelToken
    from app.core.layout import budget
    from app.core.pipeline import Pipeline, PipelineOptions

    cancel = CancelToken()
    sent = threading.Event()
    send = budget._send

    def send_and_say(stream, message) -> None:  # the page is on its way to the child: the layout is under way
        send(stream, message)
        sent.set()

    monkeypatch.setattr(budget, "_send", send_and_say)
    events: list = []
    # a budget far beyond any wait below: only the cancel can end this layout early
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf", layout_timeout=3600), emit=events.append,
                    cancel=cancel)
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(pipe.run(graph)))
    thread.start()
    try:
        assert sent.wait(180), "the page never reached the layout process"
        cancel.cancel()
        thread.join(180)
        assert not thread.is_alive(), "the cancel did not end the layout"
    finally:
        cancel.cancel()
        thread.join(60)
        pipe.close()
    names = [type(e).__name__ for e in events]
    assert outcome and outcome[0].cancelled and "RunCancelled" in names, names
    assert "LayoutDone" not in names and "RunFinished" not in names, names
    assert not any(isinstance(e, ev.ErrorRaised) and "whole page" in e.message for e in events)


def test_3_ctrl_c_during_a_layout_ends_convert_within_a_second(graph, tmp_path):
    trace = tmp_path / "run.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "app", "convert", str(graph), "-o", str(tmp_path / "out"),
                             "--engine", "classic", "--layout", "pymupdf", "--trace", str(trace), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=_env(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 90
    while time.time() < deadline and not (trace.exists() and '"phase":"layout"' in trace.read_text()):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    # the 1-second target is measured by `bench hostile` (timed unit tests flake on a shared machine); here: Ctrl+C
    # is honoured long before the 149 s it took, even when the layout child already failed and the whole page is
    # being read by native OCR code that defers the signal until it returns
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"Ctrl+C was not honoured within 10 s: {trace.read_text()[-600:]}")
    assert proc.returncode == 130 and "Traceback" not in out + err, err


def test_3_an_interrupt_native_code_turns_into_another_error_still_cancels_the_run(sample):
    """PyMuPDF turns a KeyboardInterrupt raised inside its write callback into a "Director error": once the run's
    token is set, that error is a cancel, not a failed layout read as a whole page and a finished run."""
    from app.core.base.cancel import CancelToken
    from app.core.layout import PageLayout
    from app.core.pipeline import Pipeline, PipelineOptions

    cancel = CancelToken()

    class SwallowingLayout(PageLayout):
        def analyse(self, *args, **kwargs):
            cancel.cancel()  # what the Ctrl+C handler does first
            raise RuntimeError("Director error: <class 'KeyboardInterrupt'>")

    events = []
    pipe = Pipeline(PipelineOptions(engine="classic"), emit=events.append, cancel=cancel, layout=SwallowingLayout())
    out = pipe.run(sample)
    pipe.close()
    names = [type(e).__name__ for e in events]
    assert out.cancelled and "RunCancelled" in names and "RunFinished" not in names
    assert not any(type(e).__name__ == "ErrorRaised" and "layout failed" in e.message for e in events)


def test_3_ctrl_c_during_the_layout_sets_the_token_and_a_second_one_raises():
    from app.commands.convert import _Interrupts
    from app.core.base.cancel import CancelToken

    _Interrupts.cancel, _Interrupts.armed, _Interrupts.phase = CancelToken(), True, "layout"
    try:
        _Interrupts.handler(signal.SIGINT, None)  # no exception inside PyMuPDF's callbacks: the layout wait polls
        assert _Interrupts.cancel.cancelled
        with pytest.raises(KeyboardInterrupt):
            _Interrupts.handler(signal.SIGINT, None)
        _Interrupts.cancel, _Interrupts.phase = CancelToken(), "decoding"
        with pytest.raises(KeyboardInterrupt):
            _Interrupts.handler(signal.SIGINT, None)
        assert _Interrupts.cancel.cancelled
    finally:
        _Interrupts.cancel, _Interrupts.armed, _Interrupts.phase = None, False, ""


# --- 6: Ctrl+C at startup --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("delay", [0.0, 0.1, 0.15, 0.2, 0.4])
def test_6_ctrl_c_in_the_first_moments_of_convert_is_exit_130_without_a_traceback(sample, tmp_path, delay):
    """The delay counts from the moment the interpreter has run this package's first lines (`-X importtime` says
    when `app` is imported): before that no line of ours has run, and on a busy machine Python's own start-up alone
    can take longer than the 0.1 s a fixed delay from launch meant."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "app", "convert", str(sample), "-o",
                             str(tmp_path / "out"), "--engine", "classic", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=_env(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines, ours = [], threading.Event()

    def read_stderr() -> None:
        for line in proc.stderr:
            if line.startswith("import time:"):
                ours.set() if line.rstrip().endswith("| app") else None
            else:
                lines.append(line)
        ours.set()  # the process ended before: nothing to wait for

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    assert ours.wait(60)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out = proc.stdout.read()
    proc.wait(timeout=60)
    reader.join(10)
    err = "".join(lines)
    assert "Traceback" not in out + err and "KeyboardInterrupt" not in err, err
    assert proc.returncode in (130, 0), err  # 0 only when it finished before the signal came
    assert not list((tmp_path / "out").glob("*.tmp")) if (tmp_path / "out").exists() else True
