"""`convert --jobs N` (app.commands.convert_jobs): worker processes read the inputs and the pages of a long
input side by side, and the files written are the ones one process writes (Markdown byte for byte, JSON but
for its timings); Ctrl+C stops every worker and keeps what was written. Real scans of the development set, the
default engine, a real `python -m app convert` each time."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.bench.jobs import differences, scanned_pdf

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "corpora" / "realdocs" / "pages"
# quick to read, real scans that read the same run after run (s11, a 371-pixel table image upscaled, read one
# line more in one of three identical runs: a reading that moves from run to run is not this test's subject)
SMALL_SCANS = ("s07-phototest.png", "s06-eurotext.png", "s07-phototest.png")

pytestmark = pytest.mark.slow


def _env() -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1")


def _convert(inputs: Path, out: Path, jobs: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", "convert", str(inputs), "-o", str(out), "--jobs",
                           str(jobs), "-q"], capture_output=True, text=True, cwd=ROOT, env=_env(),
                          timeout=1800)


@pytest.fixture(scope="module")
def scans(tmp_path_factory) -> Path:
    """A folder: a three-page scanned PDF built from real scans, and one scan as an image."""
    folder = tmp_path_factory.mktemp("jobs") / "in"
    scanned_pdf(folder / "three.pdf", 3, [PAGES / name for name in SMALL_SCANS])
    (folder / "photo.png").write_bytes((PAGES / SMALL_SCANS[0]).read_bytes())
    return folder


def test_two_workers_write_the_same_files_as_one_process(scans, tmp_path):
    one, two = _convert(scans, tmp_path / "j1", 1), _convert(scans, tmp_path / "j2", 2)
    assert one.returncode in (0, 4), one.stderr
    assert two.returncode == one.returncode, two.stderr
    assert differences(tmp_path / "j1", tmp_path / "j2") == []
    doc = json.loads((tmp_path / "j2" / "three.json").read_text(encoding="utf-8"))
    assert [p["index"] for p in doc["pages"]] == [0, 1, 2]  # the pages of both workers, in order
    assert all(p["blocks"] for p in doc["pages"]) and "stages" in doc["stats"]
    assert (tmp_path / "j2" / "three.md").read_text(encoding="utf-8").strip()
    # the lines are printed in input order, as one process prints them
    assert [ln.split(":")[0] for ln in two.stdout.splitlines() if ": " in ln and "page" in ln][:2] == [
        "photo.png", "three.pdf"]


def test_a_long_input_is_cut_into_runs_of_pages_for_the_workers(scans):
    from app.commands.convert_inputs import Input
    from app.commands.convert_jobs import PAGES_PER_UNIT, _Input, _units
    from app.core.pipeline import PipelineOptions

    def runs(jobs: int, pages: str | None = None) -> list:
        st = _Input(Input(scans / "three.pdf", Path("three")), checkpoint=None)
        units = _units(0, st, PipelineOptions(pages=pages), jobs, whole=False)
        assert st.units_left == len(units)
        return [u.pages for u in units]

    assert runs(2) == [(0, 1), (2,)]  # both workers get pages
    assert runs(8) == [(0,), (1,), (2,)]
    assert runs(2, "2-3") == [(1,), (2,)]
    assert PAGES_PER_UNIT >= 1 and runs(1) == [(0, 1, 2)]


def test_trace_and_jobs_together_are_refused_before_anything_loads(scans, tmp_path):
    r = subprocess.run([sys.executable, "-m", "app", "convert", str(scans), "-o", str(tmp_path / "o"),
                        "--jobs", "2", "--trace", str(tmp_path / "t.jsonl"), "-q"], capture_output=True,
                       text=True, cwd=ROOT, env=_env(), timeout=300)
    assert r.returncode == 2 and "--jobs 1" in r.stderr


def test_ctrl_c_stops_every_worker_and_keeps_the_outputs_already_written(scans, tmp_path):
    import psutil

    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "app", "convert", str(scans), "-o", str(out), "--jobs",
                             "2", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=_env(), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 1500
    while not (out / "photo.md").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)  # the first input (one page) is written while the PDF's pages are still being read
    assert (out / "photo.md").exists(), proc.communicate()[1]
    if proc.poll() is not None:
        pytest.skip("the whole run ended before Ctrl+C could be sent (an unusually fast machine)")
    workers = psutil.Process(proc.pid).children(recursive=True)
    written = (out / "photo.md").read_bytes()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "three.pdf: interrupted" in stderr
    assert (out / "photo.md").read_bytes() == written and not (out / "three.md").exists()
    gone = psutil.wait_procs(workers, timeout=30)[1]
    assert not gone, f"still running after Ctrl+C: {[p.pid for p in gone]}"
    # a run started again with --resume finds what was done
    assert (out / ".scriptorium-checkpoint" / "photo.json").exists()


def test_a_workers_share_of_the_cores_reaches_the_sessions_it_opens():
    code = ("from app.core.base.threads import limit_threads, cpu_threads; limit_threads(1); "
            "from app.core.engines.builtin.page_lines import detector; import os; "
            "print(cpu_threads(), detector().cfg.EngineConfig.onnxruntime.intra_op_num_threads, "
            "os.environ['OMP_NUM_THREADS'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env(),
                       timeout=300)
    assert r.stdout.split() == ["1", "1", "1"], r.stderr
