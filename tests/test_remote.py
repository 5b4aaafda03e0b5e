"""The remote engine and the region scheduler against a REAL OpenAI-compatible server: `transformers serve` with the
tiny random GlmOcr checkpoint on CPU (tests/remote_kit.py: one server for the session).

Nothing is mocked: greedy output equals the local AR engine's on the same checkpoint and crop; concurrent regions
are applied in reading order while several requests are in flight; Cancel stops dispatch and ends the requests in
flight; a server killed mid-run costs only the regions it held (retried, then flagged); finish_reason "length" marks
a region truncated. `convert` against the server: tests/test_remote_convert.py; the window: test_remote_window.py.
"""
from __future__ import annotations

import sys
import time

import pytest

from app.core.engines import open_engine
from app.core.base.cancel import CancelToken, Cancelled
from app.core.tiny.glm_checkpoint import sample_images
from remote_kit import jobs_of, schedule


def test_remote_greedy_output_equals_the_local_ar_engine_on_the_same_checkpoint_and_crop(server, checkpoint,
                                                                                          one_torch_thread):
    remote = open_engine("remote", servers=[server.url], max_new_tokens=40)
    local = open_engine("glm", model_path=str(checkpoint), device="cpu", max_new_tokens=40)
    for k, im in enumerate(sample_images(3)):
        for task in ("text", "table"):
            r = remote.decode_region(im, task, region_id=f"r{k}")
            want = local.decode_region(im, task, region_id=f"r{k}")
            assert r.text == want.text, (k, task)
            assert r.stats["stopped"] == want.stats["stopped"]  # both stop at the same token, or both at the budget
    assert remote.model == str(checkpoint) and remote.servers[0].requests == 6


def test_concurrent_regions_overlap_and_are_applied_in_reading_order(server):
    engine = open_engine("remote", servers=[server.url], concurrency=6, max_new_tokens=24)
    events = []
    jobs = jobs_of(12)
    scheduler = schedule(engine, list(reversed(jobs)), events.append)  # handed in any order
    assert [o.job.priority for o in scheduler.applied] == sorted(j.priority for j in jobs)
    assert all(o.error is None and o.result.text == o.result.text.strip() for o in scheduler.applied)
    assert scheduler.max_in_flight >= 4 and engine.max_in_flight >= 4
    assert all(getattr(e, "region_id", "") for e in events)  # one stream; every event names its region
    starts = [e.region_id for e in events if e.type == "region_started"]
    first_done = next(i for i, e in enumerate(events) if e.type == "region_finished")
    assert len({e.region_id for e in events[:first_done] if e.type == "region_started"}) >= 4  # really concurrent
    assert starts[:3] == [j.region.id for j in sorted(jobs)[:3]]  # earliest pages dispatched first
    # one lane reads the same regions one at a time, in the same order; what concurrency gains (or costs) in
    # time is `python -m app bench remote --reps N`, not asserted here
    engine.concurrency = 1
    one = schedule(engine, jobs)
    assert one.max_in_flight == 1 and [o.job.priority for o in one.applied] == sorted(j.priority for j in jobs)
    assert all(o.error is None for o in one.applied)


def test_cancel_stops_dispatch_and_ends_the_requests_in_flight(server):
    engine = open_engine("remote", servers=[server.url], concurrency=3, max_new_tokens=400)
    cancel = CancelToken()
    events = []
    cut = []  # how many events there were when Cancel came

    def emit(event):
        events.append(event)
        if event.type == "tokens_committed" and len(events) > 5 and not cut:
            cut.append(len(events))
            cancel.cancel()

    jobs = jobs_of(12)
    with pytest.raises(Cancelled):  # a request that ignored Cancel would hang here (the suite's timeout ends it)
        schedule(engine, jobs, emit, cancel)
    started = [e.region_id for e in events if e.type == "region_started"]
    finished = {e.region_id: e for e in events if e.type == "region_finished"}
    # nothing dispatched after Cancel (a region the random model ended early may have made room for one before)
    assert cut and not [e for e in events[cut[0]:] if e.type == "region_started"]
    assert 1 <= len(started) < len(jobs)
    assert set(started) == set(finished) and any(e.cancelled for e in finished.values())
    assert engine.in_flight == 0 and all(s.in_flight == 0 for s in engine.servers)


def test_a_document_is_read_page_by_page_as_it_is_laid_out_earliest_first(server):
    from app.core.base.paths import sample_document
    from app.core.pipeline import Pipeline, PipelineOptions

    events = []
    options = PipelineOptions(engine="remote", layout="pymupdf", compare_text_layer=False, engine_options={
        "servers": [server.url], "concurrency": 2, "max_new_tokens": 8})
    pipe = Pipeline(options, emit=events.append)
    try:
        out = pipe.run(sample_document())
    finally:
        pipe.close()
    order = [(e.type, e.page) for e in events if e.type in ("layout_done", "page_finished")]
    assert [p for t, p in order if t == "page_finished"] == [0, 1]  # pages finish in order
    # page 2 is laid out while page 1's regions are in flight (its requests do not wait for the layout)
    assert order.index(("layout_done", 1)) < order.index(("page_finished", 0))
    finished = [e.region_id for e in events if e.type == "region_finished"]
    assert max(finished[:3]) < min(r for r in finished if r.startswith("p2"))  # page 1's regions first
    assert out.stats["engine_stats"]["max_in_flight"] == 2 and out.stats["decoded"] == len(finished)
    assert out.stats["engine_stats"]["servers"][0]["spec"] is None  # transformers serve reports no drafting


def test_finish_reason_length_marks_the_region_truncated_never_done(server):
    from app.core.pipeline.output import region_status
    from app.core.document.regions import Region, record_result

    engine = open_engine("remote", servers=[server.url], max_new_tokens=2)
    result = engine.decode_region(sample_images(3)[2], "text", region_id="p1-r01")  # 27 tokens unbounded
    assert result.stats["truncated"] and result.stats["stopped"] == "max_new_tokens" and result.stats["tokens"] == 2
    region = Region("p1-r01", 0, (0, 0, 1, 1), "text", "text", 0)
    record_result(region, result.text, result.stats, cancelled=False, engine="remote")
    assert region_status(region) == "truncated" and "truncated" in region.flags


@pytest.fixture
def doomed_server(checkpoint, tmp_path):
    """A server of this test's own, which it kills mid-run (the module's server stays up for the others)."""
    from app.core.tiny.serving import TransformersServer

    srv = TransformersServer(checkpoint, log=tmp_path / "serve.log").wait()
    yield srv
    srv.stop()


def test_a_server_killed_mid_run_costs_only_its_regions_retried_then_flagged(doomed_server, checkpoint):
    from app.core.tiny.serving import free_port

    server = doomed_server

    # a dead address beside the live server: the regions sent there are retried on the live one, all are read
    dead = f"http://127.0.0.1:{free_port()}/v1"
    both = open_engine("remote", servers=[dead, server.url], remote_model=str(checkpoint), concurrency=2,
                       max_new_tokens=16, retries=2, backoff_s=0.05, check=False)
    again = schedule(both, jobs_of(6))
    assert all(o.error is None for o in again.applied)
    assert both.servers[0].failures >= 1 and any(o.result.stats["attempts"] >= 2 for o in again.applied)
    assert {o.result.stats["server"] for o in again.applied} == {both.servers[1].url}  # all answered by the live one
    # the only server killed mid-run: what it finished stays, the rest is retried, then flagged with the reason
    engine = open_engine("remote", servers=[server.url], concurrency=2, max_new_tokens=24, retries=2,
                         backoff_s=0.05)
    finished = []

    def emit(event):
        if event.type == "region_finished":
            finished.append(event.region_id)
            if len(finished) == 2:
                server.kill()

    outcomes = schedule(engine, jobs_of(8), emit).applied
    assert len(outcomes) == 8  # nothing lost: every region has its outcome, in order
    done = [o for o in outcomes if o.error is None]
    failed = [o for o in outcomes if o.error is not None]
    assert len(done) >= 2 and failed
    assert all(o.result.text is not None and not o.result.cancelled for o in done)
    assert all(any(w in str(o.error) for w in ("ConnectError", "closed", "Read", "Remote")) for o in failed)
    assert engine.servers[0].failures >= 3 * len(failed)  # every failed region was tried 1 + 2 times


_SERVING_PARENT = """
import sys
from app.core.tiny.serving import TransformersServer
srv = TransformersServer(sys.argv[1]).wait()
print(srv.process.pid, flush=True)
sys.stdin.read()  # until killed
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_transformers_server_dies_with_the_process_that_started_it(checkpoint):
    """A REAL parent process starts a REAL `transformers serve` and is SIGKILLed (a test run's segfault: no
    fixture tears anything down); the server goes with it instead of holding a gigabyte until the machine
    restarts."""
    import os
    import signal
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    parent = subprocess.Popen([sys.executable, "-c", _SERVING_PARENT, str(checkpoint)], cwd=root, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    pid = 0
    try:
        pid = int(parent.stdout.readline())
        parent.kill()
        parent.wait(30)
        deadline = time.monotonic() + 10.0
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "transformers serve outlived its SIGKILLed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Is `pid` running (not gone, not a zombie)?"""
    from pathlib import Path

    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False
