"""`--engine llamacpp` against a REAL llama-server: the binary `python3 make.py llama-server` builds from the llama.cpp
source on the package index (cached outside the checkout), the project's tiny random GlmOcr checkpoint converted to
GGUF + mmproj with llama.cpp's own converter. Random weights read garbage, but every request must be answered, the
output written, and no server process left behind.

These tests SKIP when no llama-server build is cached (run `python3 make.py llama-server` once, about 10 minutes on
2 cores); `python3 make.py test` under CI=true builds it first and fails on such a skip. Nothing is mocked: servers are started and killed as processes.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.base import llama_build
from app.core.engines import EngineUnavailable, open_engine
from app.core.engines.remote import RemoteError
from app.core.tiny.glm_checkpoint import sample_images

ROOT = Path(__file__).resolve().parents[1]
BINARY = llama_build.find_binary()
pytestmark = pytest.mark.skipif(
    BINARY is None or llama_build.converter() is None,
    reason="missing part: no cached llama-server build: run `python3 make.py llama-server` (CI builds it first)")


@pytest.fixture(scope="module")
def gguf_dir(tmp_path_factory):
    """The tiny GlmOcr checkpoint (the stop row scaled up: answers end on their own) as GGUF + mmproj."""
    from app.core.tiny.gguf import convert
    from app.core.tiny.serving import servable_checkpoint

    checkpoint = servable_checkpoint(tmp_path_factory.mktemp("hf"), stop_boost=3.0)
    out = tmp_path_factory.mktemp("gguf")
    convert(checkpoint, out)
    return out


def _pids_using(path: Path) -> list[int]:
    """Live processes whose command line names `path` (zombies have none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(path).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _gone(path: Path, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while _pids_using(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _convert(capsys, *args):
    from app.cli import main

    capsys.readouterr()
    code = main(["convert", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def _schedule(engine, count: int, emit=lambda e: None):
    from app.core.base.aio import run_async
    from app.core.base.cancel import CancelToken
    from app.core.engines.scheduler import Job, RegionScheduler
    from app.core.document.regions import Region

    jobs = [Job((0, 0, k), Region(f"p1-r{k + 1:02d}", 0, (0, 0, 1, 1), "text", "text", k), im)
            for k, im in enumerate(sample_images(count, seed=5))]
    applied = []
    run_async(lambda: RegionScheduler(engine, emit, CancelToken()).run(jobs, applied.append))
    return applied


def test_convert_the_sample_through_llamacpp_reads_every_region_and_stops_the_server(gguf_dir, tmp_path, capsys):
    from app.core.engines.llama_server import live_servers
    from app.core.base.paths import sample_document

    out = tmp_path / "out"
    code, stdout, stderr = _convert(capsys, sample_document(), "-o", out, "--engine", "llamacpp", "--model", gguf_dir,
                                    "--text-layer", "ignore", "--llama-threads", "1", "--llama-parallel", "2",
                                    "--max-new-tokens", "48")
    assert code in (0, 4), stdout + stderr  # 4: random weights may run into the budget (truncated, a warning)
    assert "error" not in stderr.lower(), stderr
    doc = json.loads((out / "sample.json").read_text())
    blocks = [b for p in doc["pages"] for b in p["blocks"] if b["task"] == "text"]
    assert blocks and all(b["status"] in ("done", "truncated") for b in blocks)  # every request answered
    assert all(b["stats"]["server"].startswith("http://127.0.0.1:") and b["stats"]["timings"]["predicted_n"] >= 1
               for b in blocks)
    assert all(b["confidence"] is not None for b in blocks)  # llama-server's log-probabilities → confidence
    assert (out / "sample.md").read_text().strip()
    assert not live_servers() and _gone(gguf_dir, timeout=0)  # stopped when the run ended: nothing left


def test_the_engine_reports_the_server_reads_logprobs_and_timings_and_stops_on_close(gguf_dir):
    engine = open_engine("llamacpp", model_path=str(gguf_dir), parallel=3, threads=1, max_new_tokens=16)
    pid = engine.llama.pid
    try:
        assert engine.kind == "region" and engine.concurrency == 3 and engine.servers[0].flavour == "llamacpp"
        assert all(hasattr(engine, m) for m in ("name", "kind", "device", "input_dpi", "concurrency", "close"))
        assert "llama.cpp" in engine.device and "tiny-glmocr.gguf" in engine.device and engine.version
        assert engine.servers[0].info["modalities"]["vision"] is True
        result = engine.decode_region(sample_images(1)[0], "text", region_id="r1")
        stats = result.stats
        assert stats["tokens"] >= 1 and len(result.logprobs) >= 1 and all(lp <= 0 for lp in result.logprobs)
        assert stats["timings"]["predicted_n"] >= 1 and stats["timings"]["prompt_n"] >= 1
        assert stats["attempts"] == 1
        (server,) = engine.server_stats()
        assert server["flavour"] == "llamacpp" and server["slots"] == 3 and server["quantisation"]
        # its /metrics counters were read; nothing was drafted (no draft model): no figure, never a made-up zero
        assert "llamacpp:spec_decode_num_drafts" in engine.servers[0].metrics_before and server["spec"] is None
    finally:
        engine.close()
    assert engine.llama.process.returncode is not None
    assert not Path(f"/proc/{pid}/cmdline").exists() or not Path(f"/proc/{pid}/cmdline").read_bytes()


def test_a_server_without_vision_is_refused_at_open_and_its_500_is_final_not_retried(gguf_dir):
    from app.core.engines.llama_server import LlamaServer

    server = LlamaServer(BINARY, gguf_dir / "tiny-glmocr.gguf", None, threads=1, ctx_size=4096).start(120)
    try:
        with pytest.raises(EngineUnavailable, match="without image input.*--mmproj"):
            open_engine("remote", servers=[server.url])
        engine = open_engine("remote", servers=[server.url], check=False, remote_model="x", retries=3)
        with pytest.raises(RemoteError, match="without image input"):
            engine.decode_region(sample_images(1)[0], "text", region_id="r1")
        assert engine.servers[0].requests == 1  # final: asked once, not three more times
    finally:
        server.close()


def test_a_running_llama_server_given_by_url_is_recognised_and_asked_for_logprobs(gguf_dir):
    """`--engine remote --server URL` on a llama-server someone started: its kind read from /v1/models and /props,
    log-probabilities asked for (→ block confidence), its timings in the region stats."""
    from app.core.engines.llama_server import LlamaServer

    server = LlamaServer(BINARY, gguf_dir / "tiny-glmocr.gguf", gguf_dir / "mmproj-tiny-glmocr.gguf", threads=1,
                         ctx_size=8192, parallel=2).start(120)
    try:
        engine = open_engine("remote", servers=[server.url + "/v1"], max_new_tokens=12)
        assert engine.model == "tiny-glmocr" and engine.servers[0].flavour == "llamacpp"
        assert engine.servers[0].info["total_slots"] == 2 and engine.servers[0].info["slot_ctx"]
        result = engine.decode_region(sample_images(1)[0], "text", region_id="r1")
        assert result.logprobs and result.stats["timings"]["predicted_n"] >= 1
        engine.close()
    finally:
        server.close()
    assert server.process.returncode is not None


def test_context_exhausted_in_the_stream_is_final_and_says_how_to_size_the_server(gguf_dir):
    """Four slots share a context too small for four answers at once: llama-server ends some mid-stream with
    "Context size has been exceeded"; those regions fail at once (no retry) with what to change."""
    engine = open_engine("llamacpp", model_path=str(gguf_dir), parallel=4, threads=1, ctx_size=192,
                         max_new_tokens=1000, retries=3)
    try:
        outcomes = _schedule(engine, 8)
    finally:
        engine.close()
    failed = [o for o in outcomes if o.error is not None]
    if not failed:  # the tiny random model's answers ended (EOS) before the slots filled the context
        pytest.skip("the random tiny model stopped before its slots ran out of context: nothing to check this time")
    assert all("ran out of context" in str(o.error) and "--llama-ctx" in str(o.error) for o in failed)
    assert engine.servers[0].requests == len(outcomes)  # every region asked once: nothing retried


def test_a_server_killed_mid_run_fails_the_rest_at_once_and_keeps_what_was_read(gguf_dir):
    engine = open_engine("llamacpp", model_path=str(gguf_dir), parallel=2, threads=1, max_new_tokens=24,
                         retries=3, backoff_s=0.05)
    finished = []

    def emit(event):
        if event.type == "region_finished":
            finished.append(event.region_id)
            if len(finished) == 2:
                engine.llama.kill()

    try:
        outcomes = _schedule(engine, 8, emit)
    finally:
        engine.close()
    assert len(outcomes) == 8  # every region has its outcome, in order
    done = [o for o in outcomes if o.error is None]
    failed = [o for o in outcomes if o.error is not None]
    assert len(done) >= 2 and failed
    assert all("llama-server" in str(o.error) and "no longer running" in str(o.error) for o in failed)
    assert engine.servers[0].requests <= 8 + 2  # no retries against a dead server (at most those in flight)


def _start_convert(args, tmp_path: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app", "convert", *map(str, args)], cwd=ROOT,
                            env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=open(tmp_path / f"{name}.out", "w"),
                            stderr=subprocess.STDOUT)


def _wait_for(predicate, proc: subprocess.Popen, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"convert ended (exit {proc.returncode}) before the point the test waits for"
        if time.monotonic() > deadline:
            raise TimeoutError(f"convert did not reach the point the test waits for in {timeout:g} s")
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_the_app_ended_by_a_signal_leaves_no_server(gguf_dir, tmp_path, how):
    """SIGKILL: the server's death signal (PR_SET_PDEATHSIG) ends it; SIGTERM: the app's handler stops it."""
    from app.core.base.paths import sample_document

    proc = _start_convert([sample_document(), "-o", tmp_path / "out", "--engine", "llamacpp", "--model", gguf_dir,
                           "--text-layer", "ignore", "--llama-threads", "1", "--max-new-tokens", "400"], tmp_path, how)
    try:
        _wait_for(lambda: _pids_using(gguf_dir), proc)
        proc.send_signal(getattr(signal, how))
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _gone(gguf_dir), f"llama-server outlived the app ({how})"


def test_convert_dir_resume_after_the_app_and_its_server_were_killed_loses_no_page_and_repeats_none(gguf_dir,
                                                                                                   tmp_path, capsys):
    from app.core.document.sample_documents import make_small_report
    from app.core.record.trace import load_trace

    src = tmp_path / "in"
    for rel in ("a.pdf", "sub/c.pdf"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        make_small_report(src / rel)
    out = tmp_path / "out"
    args = [src, "-o", out, "--engine", "llamacpp", "--model", gguf_dir, "--layout", "pymupdf", "--text-layer",
            "ignore", "--llama-threads", "1", "--max-new-tokens", "200"]
    proc = _start_convert([*args, "--trace", tmp_path / "t1.jsonl"], tmp_path, "first")
    first = out / ".scriptorium-checkpoint" / "a.json"
    try:
        _wait_for(lambda: first.exists() and json.loads(first.read_text())["pages"], proc)
        proc.kill()  # the app crashes: its server goes with it
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _gone(gguf_dir)
    held = {}
    for f in (out / ".scriptorium-checkpoint").rglob("*.json"):
        data = json.loads(f.read_text())
        held[f.relative_to(out / ".scriptorium-checkpoint").with_suffix("").as_posix()] = (
            {p["index"] for p in data["pages"]}, data["done"])
    assert held["a"][0]
    code, stdout, stderr = _convert(capsys, *args, "--resume", "--trace", tmp_path / "t2.jsonl")
    assert code in (0, 4), stdout + stderr
    for rel, (pages, done) in held.items():
        trace = tmp_path / f"t2-{rel.replace('/', '-')}.jsonl"
        if done:
            assert not trace.exists() or not [e for e in load_trace(trace).events if e.type == "layout_done"]
            continue
        events = load_trace(trace).events
        assert not {e.page for e in events if e.type == "layout_done"} & pages  # no finished page read again
    for rel in ("a", "sub/c"):  # nothing lost: every page of every input, every text region answered
        doc = json.loads((out / f"{rel}.json").read_text())
        assert [p["index"] for p in doc["pages"]] == [0, 1]
        assert all(b["status"] in ("done", "truncated") for p in doc["pages"] for b in p["blocks"]
                   if b["task"] == "text")
    assert _gone(gguf_dir, timeout=0)


def test_bench_remote_on_llamacpp_prints_regions_per_second_sequential_and_concurrent(gguf_dir, capsys):
    from app.bench.remote import main

    code = main(["--engine", "llamacpp", "--model", str(gguf_dir), "--llama-parallel", "2", "--llama-threads", "1",
                 "--copies", "1", "--max-new-tokens", "16"])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line.split() and line.split()[0] in ("sequential", "concurrent")}
    assert set(rows) == {"sequential", "concurrent"} and all(float(r[2]) > 0 for r in rows.values())
    assert int(rows["concurrent"][4]) == 2 and "device: llama.cpp" in out  # two slots busy at once
    assert _gone(gguf_dir, timeout=0)


def test_a_server_killed_during_convert_dir_costs_only_its_regions_and_resume_reads_just_those_pages(gguf_dir,
                                                                                                    tmp_path, capsys):
    """`--server URL` on a llama-server that is killed mid-run: the regions it could not answer fail (exit 4), the
    pages read before are kept; restarted, `--resume` reads the failed pages only, and every region ends read."""
    from app.core.engines.llama_server import LlamaServer
    from app.core.document.sample_documents import make_small_report
    from app.core.record.trace import load_trace

    src = tmp_path / "in"
    for rel in ("a.pdf", "b.pdf"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        make_small_report(src / rel)
    files = dict(threads=1, ctx_size=8192, parallel=1)
    server = LlamaServer(BINARY, gguf_dir / "tiny-glmocr.gguf", gguf_dir / "mmproj-tiny-glmocr.gguf", **files).start()
    out = tmp_path / "out"
    args = [src, "-o", out, "--engine", "remote", "--server", server.url, "--concurrency", "1", "--layout", "pymupdf",
            "--text-layer", "ignore", "--max-new-tokens", "200"]
    proc = _start_convert([*args, "--trace", tmp_path / "t1.jsonl"], tmp_path, "first")
    first = out / ".scriptorium-checkpoint" / "a.json"
    try:
        _wait_for(lambda: first.exists() and json.loads(first.read_text())["pages"], proc)
        server.kill()
        assert proc.wait(240) == 4, (tmp_path / "first.out").read_text()  # converted, with failed regions
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()
    printed = (tmp_path / "first.out").read_text()
    assert "no longer" in printed or "cannot be reached" in printed or "Connect" in printed, printed
    held = {}
    for f in (out / ".scriptorium-checkpoint").glob("*.json"):
        data = json.loads(f.read_text())
        held[f.stem] = {p["index"] for p in data["pages"]}
        assert not data["done"]  # a document with failed regions is not finished
    assert held["a"]  # the page read before the server died is kept
    statuses = [b["status"] for name in ("a", "b") for p in json.loads((out / f"{name}.json").read_text())["pages"]
                for b in p["blocks"] if b["task"] == "text"]
    assert "failed" in statuses and "done" in statuses
    again = LlamaServer(BINARY, gguf_dir / "tiny-glmocr.gguf", gguf_dir / "mmproj-tiny-glmocr.gguf", port=server.port,
                        **files).start()
    try:
        code, stdout, stderr = _convert(capsys, *args, "--resume", "--trace", tmp_path / "t2.jsonl")
    finally:
        again.close()
    assert code in (0, 4), stdout + stderr  # 4: random weights may run a region to its token budget (truncated)
    for name, pages in held.items():
        read = {e.page for e in load_trace(tmp_path / f"t2-{name}.jsonl").events if e.type == "layout_done"}
        assert read and not read & pages  # only what is missing: no kept page read again
    for name in ("a", "b"):
        doc = json.loads((out / f"{name}.json").read_text())
        assert [p["index"] for p in doc["pages"]] == [0, 1]
        assert all(b["status"] in ("done", "truncated") for p in doc["pages"] for b in p["blocks"]
                   if b["task"] == "text")
    assert not (out / ".scriptorium-checkpoint").exists()


_BUSY_PARENT = """
import sys, time
import httpx2
from app.core.engines.llama_server import LlamaServer

server = LlamaServer(sys.argv[1], sys.argv[2], sys.argv[3], threads=1).start(300)
print(server.pid, server.url, flush=True)
while True:  # one long completion after another: the server is busy, as in the middle of a run
    try:
        httpx2.post(f"{server.url}/completion", timeout=600,
                    json={"prompt": "a b c", "n_predict": 100000, "ignore_eos": True})
    except httpx2.HTTPError:
        time.sleep(0.05)
"""


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (nobody may reap an orphan here: PID 1 need not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_busy_server_dies_with_its_parent_the_moment_the_parent_is_killed(gguf_dir, tmp_path):
    """PR_SET_PDEATHSIG = SIGKILL. A REAL parent process starts a REAL server and keeps it answering; the
    parent is SIGKILLed (a crash: no handler of ours runs) and the server must be gone within seconds. With
    SIGTERM as the death signal a busy server finished its request first and was alive a minute later."""
    import httpx2

    files = [str(gguf_dir / "tiny-glmocr.gguf"), str(gguf_dir / "mmproj-tiny-glmocr.gguf")]
    parent = subprocess.Popen([sys.executable, "-c", _BUSY_PARENT, str(BINARY), *files], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    server_pid = 0
    try:
        pid, url = parent.stdout.readline().split()
        server_pid = int(pid)
        assert _running(server_pid)

        def busy() -> bool:
            try:
                return any(s.get("is_processing") for s in httpx2.get(f"{url}/slots", timeout=5).json())
            except (httpx2.HTTPError, ValueError):
                return False

        _wait_for(busy, parent, timeout=120)
        parent.kill()
        parent.wait(30)
        deadline = time.monotonic() + 5.0  # SIGKILL is immediate; 5 s only absorbs a loaded machine
        while _running(server_pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _running(server_pid), "llama-server outlived its SIGKILLed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if server_pid and _running(server_pid):
            os.kill(server_pid, signal.SIGKILL)
