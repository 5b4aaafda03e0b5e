"""The remote engine and the region scheduler against a REAL OpenAI-compatible server: `transformers serve` with the
tiny random GlmOcr checkpoint on CPU (app.core.tiny.serving), started once for this module on a free port.

Nothing is mocked: greedy output equals the local AR engine's on the same checkpoint and crop; concurrent regions
are applied in reading order while several requests are in flight; Cancel stops dispatch and ends the requests in
flight; a server killed mid-run costs only the regions it held (retried, then flagged); finish_reason "length" marks
a region truncated; the API key reaches no trace or output file; `convert DIR --resume` after SIGINT reads no page
the checkpoint holds.
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

from app.core.engines import EngineUnavailable, open_engine
from app.core.base.cancel import CancelToken, Cancelled
from app.core.tiny.glm_checkpoint import sample_images

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-never-written-7f3a9c"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from app.core.tiny.serving import servable_checkpoint

    # the stop row scaled up: greedy decoding ends on its own after a few tokens, as a real model's does
    return servable_checkpoint(tmp_path_factory.mktemp("served"), stop_boost=3.0)


@pytest.fixture(scope="module")
def server(checkpoint, tmp_path_factory):
    """One server for the module, never killed (the crash test starts its own)."""
    from app.core.tiny.serving import TransformersServer

    srv = TransformersServer(checkpoint, log=tmp_path_factory.mktemp("log") / "serve.log").wait()
    yield srv
    srv.stop()


def _jobs(count: int, pages: int = 3):
    from app.core.engines.scheduler import Job
    from app.core.document.regions import Region

    images = sample_images(count, seed=3)
    jobs = []
    for k, im in enumerate(images):
        page, order = k % pages, k // pages
        jobs.append(Job((0, page, order), Region(f"p{page + 1}-r{order + 1:02d}", page, (0, 0, 1, 1), "text", "text",
                                                 order), im))
    return jobs


def _schedule(engine, jobs, emit=lambda e: None, cancel=None):
    from app.core.base.aio import run_async
    from app.core.engines.scheduler import RegionScheduler

    applied = []
    scheduler = RegionScheduler(engine, emit, cancel or CancelToken())
    try:
        run_async(lambda: scheduler.run(jobs, applied.append))
    finally:
        scheduler.applied = applied
    return scheduler


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
    jobs = _jobs(12)
    scheduler = _schedule(engine, list(reversed(jobs)), events.append)  # handed in any order
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
    one = _schedule(engine, jobs)
    assert one.max_in_flight == 1 and [o.job.priority for o in one.applied] == sorted(j.priority for j in jobs)
    assert all(o.error is None for o in one.applied)


def test_cancel_stops_dispatch_and_ends_the_requests_in_flight(server):
    engine = open_engine("remote", servers=[server.url], concurrency=3, max_new_tokens=400)
    cancel = CancelToken()
    events = []

    def emit(event):
        events.append(event)
        if event.type == "tokens_committed" and len(events) > 5:
            cancel.cancel()

    jobs = _jobs(12)
    with pytest.raises(Cancelled):  # a request that ignored Cancel would hang here (the suite's timeout ends it)
        _schedule(engine, jobs, emit, cancel)
    started = [e.region_id for e in events if e.type == "region_started"]
    finished = {e.region_id: e for e in events if e.type == "region_finished"}
    assert 1 <= len(started) <= 3  # nothing dispatched after Cancel
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


def _convert(capsys, *args) -> tuple[int, str, str]:
    """`convert` in this process (the model-free remote engine needs no fresh interpreter): code, stdout, stderr."""
    from app.cli import main

    capsys.readouterr()
    code = main(["convert", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_convert_sample_against_the_server_reads_every_text_region_and_never_writes_the_key(server, checkpoint,
                                                                                            tmp_path, capsys,
                                                                                            monkeypatch):
    from app.core.base.paths import sample_document

    monkeypatch.setenv("SCRIPTORIUM_API_KEY", SECRET)
    out = tmp_path / "out"
    code, stdout, stderr = _convert(capsys, sample_document(), "-o", out, "--engine", "remote", "--server",
                                    server.url, "--remote-model", checkpoint, "--trace", tmp_path / "t.jsonl",
                                    "--text-layer", "ignore")  # every text region on the server
    assert code == 0, stdout + stderr
    doc = json.loads((out / "sample.json").read_text())
    text_blocks = [b for p in doc["pages"] for b in p["blocks"] if b["task"] == "text"]
    assert text_blocks and all(b["status"] == "done" and b["stats"]["server"] for b in text_blocks)
    for f in [tmp_path / "t.jsonl", *out.rglob("*.*")]:
        if f.suffix in (".jsonl", ".json", ".md"):
            assert SECRET not in f.read_text(), f
    assert SECRET not in stdout + stderr
    assert not (out / ".scriptorium-checkpoint").exists()  # a finished run leaves the output sets only
    # a budget of 2 tokens: regions are cut, shown as truncated, counted, and the run ends with warnings
    code, stdout, stderr = _convert(capsys, sample_document(), "-o", tmp_path / "cut", "--engine", "remote",
                                    "--server", server.url, "--max-new-tokens", "2", "--pages", "1",
                                    "--text-layer", "ignore")
    assert code == 4 and "truncated" in stdout and "truncated" in stderr
    blocks = [b for p in json.loads((tmp_path / "cut" / "sample.json").read_text())["pages"] for b in p["blocks"]]
    cut_blocks = [b for b in blocks if b["stats"].get("truncated")]
    assert cut_blocks and {b["status"] for b in cut_blocks} == {"truncated"}  # never "done"


def test_convert_against_an_unreachable_server_says_so_and_exits_3(tmp_path, capsys):
    from app.core.base.paths import sample_document
    from app.core.tiny.serving import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    code, _, stderr = _convert(capsys, sample_document(), "-o", tmp_path / "out", "--engine", "remote", "--server", url)
    assert code == 3 and "cannot be reached" in stderr and url.removesuffix("/v1") in stderr
    with pytest.raises(EngineUnavailable, match="must start with http"):
        open_engine("remote", servers=["ftp://x"])
    assert _convert(capsys, sample_document(), "-o", tmp_path / "o2", "--engine", "remote")[0] == 2


def test_convert_dir_resume_after_sigint_reads_no_finished_page(server, tmp_path, capsys):
    from app.core.document.sample_documents import make_small_report
    from app.core.record.trace import load_trace

    src = tmp_path / "in"
    for rel in ("a.pdf", "sub/deeper/c.pdf"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        make_small_report(src / rel)
    out = tmp_path / "out"
    args = [src, "-o", out, "--engine", "remote", "--server", server.url, "--concurrency", "2", "--layout",
            "pymupdf", "--max-new-tokens", "200"]
    proc = subprocess.Popen([sys.executable, "-m", "app", "convert", *map(str, args), "--trace", tmp_path / "t1.jsonl"],
                            cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = out / ".scriptorium-checkpoint" / "a.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if first.exists() and json.loads(first.read_text())["pages"]:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    held = {}
    for f in (out / ".scriptorium-checkpoint").rglob("*.json"):
        data = json.loads(f.read_text())
        held[f.relative_to(out / ".scriptorium-checkpoint").with_suffix("").as_posix()] = (
            {p["index"] for p in data["pages"]}, data["done"])
    assert held["a"][0]  # the interrupted run kept its finished pages
    code, stdout, stderr = _convert(capsys, *args, "--resume", "--trace", tmp_path / "t2.jsonl")
    assert code == 0, stdout + stderr
    for rel, (pages, done) in held.items():
        trace = tmp_path / f"t2-{rel.replace('/', '-')}.jsonl"
        if done:
            assert not trace.exists() or not [e for e in load_trace(trace).events if e.type == "layout_done"]
            continue
        events = load_trace(trace).events
        read = {e.page for e in events if e.type == "layout_done"}
        assert not read & pages, (rel, read, pages)  # no finished page laid out or read again
        started = {e.region_id for e in events if e.type == "region_started"}
        assert not {r for r in started if int(r[1:].split("-")[0]) - 1 in pages}
    for rel in ("a", "sub/deeper/c"):  # every input's full output set, the tree mirrored
        doc = json.loads((out / f"{rel}.json").read_text())
        assert [p["index"] for p in doc["pages"]] == [0, 1]
        assert all(b["status"] == "done" for p in doc["pages"] for b in p["blocks"] if b["task"] == "text")
    assert "summary" in stdout and "sub/deeper/c" in stdout


def test_convert_dir_keeps_the_server_busy_across_documents_with_the_same_output_as_one_by_one(server, tmp_path,
                                                                                                capsys):
    """Two documents on one region queue: the second is laid out and its regions sent while the first one's last
    regions are in flight; each is written in order with its own summary row, and reads exactly as alone."""
    from app.core.document.sample_documents import make_small_report

    src = tmp_path / "in"
    src.mkdir()
    for name in ("a", "b"):
        make_small_report(src / f"{name}.pdf")
    # the whole page as one region, small crops: the next document's layout costs milliseconds, not the seconds of a
    # layout model on a busy CPU; each request crosses a link that holds it 1.5 s, so the previous document's last
    # ones are still in flight when the next one's are sent, however busy the machine is
    from slow_link import SlowLink

    link = SlowLink(server.port, delay=1.5)
    common = ["--engine", "remote", "--server", link.url, "--concurrency", "6", "--layout", "page", "--ocr-dpi",
              "72", "--text-layer", "ignore", "--max-new-tokens", "60"]
    try:
        code, stdout, stderr = _convert(capsys, src, "-o", tmp_path / "both", *common, "--trace",
                                        tmp_path / "t.jsonl")
    finally:
        link.close()
    common[common.index(link.url)] = server.url  # each document alone, straight to the server
    assert code == 0, stdout + stderr
    lines = [ln for ln in stdout.splitlines() if ln.startswith(("a.pdf:", "b.pdf:"))]
    assert [ln[:5] for ln in lines] == ["a.pdf", "b.pdf"]  # written and reported in input order
    assert "summary" in stdout and "2/2 clean" in stdout
    first = json.loads((tmp_path / "both" / "a.json").read_text())
    second = json.loads((tmp_path / "both" / "b.json").read_text())
    last_page = [b for b in first["pages"][-1]["blocks"] if b["stats"].get("server")]
    # requests of both documents were in flight together, more than the first one's last page could hold alone
    shared = second["stats"]["engine_stats"]["shared_in_flight"]
    assert shared > len(last_page) >= 1, (shared, len(last_page))
    assert first["stats"]["engine_stats"]["shared_in_flight"] >= 2
    for name in ("a", "b"):  # the same output as each document converted alone (no queue shared)
        alone = tmp_path / f"alone-{name}"
        assert _convert(capsys, src / f"{name}.pdf", "-o", alone, *common)[0] == 0
        assert (alone / f"{name}.md").read_text() == (tmp_path / "both" / f"{name}.md").read_text()
        blocks = [(b["id"], b["text"], b["status"]) for p in json.loads((alone / f"{name}.json").read_text())["pages"]
                  for b in p["blocks"]]
        together = first if name == "a" else second
        assert blocks == [(b["id"], b["text"], b["status"]) for p in together["pages"] for b in p["blocks"]]
        assert "shared_in_flight" not in json.loads((alone / f"{name}.json").read_text())["stats"]["engine_stats"]
    trace = [json.loads(ln) for ln in (tmp_path / "t-a.jsonl").read_text().splitlines()]
    assert sum(e.get("type") == "page_finished" for e in trace) == 2  # each document its own trace


def test_the_unlimited_profile_reads_whole_pages_on_the_server_and_parses_the_answer_into_blocks(server, tmp_path):
    """One request per page (concurrently), each answer parsed into blocks by the Unlimited parser. The served tiny
    GlmOcr writes no `<|det|>` header, so each page is one block over the whole page, its text kept and flagged
    malformed (the parser never drops text) and truncated (cut at its budget); tests/test_remote_pages.py streams a
    real `<|det|>` answer through the same reader."""
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.output import region_status
    from app.core.document.sample_documents import make_small_report

    events = []
    options = PipelineOptions(engine="remote", compare_text_layer=False, engine_options={
        "servers": [server.url], "profile": "unlimited", "concurrency": 2, "max_new_tokens": 12})
    pipe = Pipeline(options, emit=events.append)
    try:
        out = pipe.run(make_small_report(tmp_path / "report.pdf"))
    finally:
        pipe.close()
    assert pipe.engine.kind == "document" and out.layout == "remote"  # the engine's blocks are the layout
    es = out.stats["engine_stats"]
    assert es["requests"] == 2 and es["max_in_flight"] == 2 and es["truncated_pages"] == 2
    for page in out.pages:
        (block,) = page.regions
        assert block.id == f"p{page.index + 1}-r01" and block.text
        assert [round(v) for v in block.box] == [0, 0, page.width_px, page.height_px]  # the whole page
        assert {"malformed", "truncated"} <= set(block.flags) and region_status(block) == "truncated"
    started = [e.region_id for e in events if e.type == "region_started"]
    assert started == ["doc-p1", "doc-p2"]  # one request per page, earliest first
    assert [e.page for e in events if e.type == "page_finished"] == [0, 1]
    assert [e.page for e in events if e.type == "layout_done"] == [0, 1]  # each page's blocks, as they completed


def test_the_window_reads_queued_documents_on_the_server_and_shows_the_queue(qtbot, server, checkpoint, tmp_path,
                                                                              artifacts_dir):
    from app.core.document.sample_documents import make_small_report
    from app.gui.main_window import MainWindow
    from app.gui.settings import Settings

    s = Settings()
    for key, value in (("engine", "remote"), ("remote_servers", server.url), ("remote_model", str(checkpoint)),
                       ("remote_concurrency", 4), ("layout", "pymupdf")):
        s.set(key, value)
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    assert w.engine_bar.engine.currentText().startswith("Remote server")
    paths = [make_small_report(tmp_path / f"{name}.pdf") for name in ("first", "second", "third")]
    w.open_files([str(p) for p in paths], run=False)
    w.runs.enqueue([str(p.resolve()) for p in paths])
    view = w.document_queue
    assert not w.queue_dock.isVisible()  # nothing queued yet: the queue takes no room
    view.refresh()
    assert w.queue_dock.isVisible()  # three documents queued: it shows itself, at the right
    assert [(r.name, r.state, r.position) for r in view.rows] == [
        ("first.pdf", "queued", 1), ("second.pdf", "queued", 2), ("third.pdf", "queued", 3)]
    view.list.setCurrentRow(2)  # third: move it to the front, then take second out of the queue
    view.up.click()
    view.up.click()
    view.list.setCurrentRow([r.name for r in view.rows].index("second.pdf"))
    view.remove.click()
    assert [(r.name, r.position) for r in view.rows if r.state == "queued"] == [("third.pdf", 1), ("first.pdf", 2)]
    w.run_presenter.next_in_queue()
    qtbot.waitUntil(lambda: view.rows and view.rows[0].state == "running", timeout=10000)
    assert view.rows[0].name == "third.pdf"
    qtbot.waitUntil(lambda: not w.decoder.running and not w.runs.queue, timeout=90000)
    view.refresh()
    states = {r.name: r.state for r in view.rows}
    assert states["first.pdf"] == "done" and states["third.pdf"] == "done" and states["second.pdf"] == "idle"
    assert view.overall.value() == view.overall.maximum() == 2
    first = next(d for d in w.session.documents if d.name == "first.pdf")
    text = [b for b in first.blocks.values() if b.region.task == "text"]
    assert text and all(b.region.extra["stats"]["server"] == server.url.removesuffix("/v1") for b in text)
    w.views.rounds_view.refresh()  # the rounds view's statistics: what the server said (here: nothing)
    hint = w.views.rounds_view.hint.text()
    assert "read on OCR servers" in hint and "reports no speculative-decoding statistics" in hint
    w.queue_dock.raise_()
    w.grab().save(str(artifacts_dir / "remote_queue.png"))


def test_the_windows_remote_run_sends_its_requests_on_the_apps_qasync_loop(qtbot, server, checkpoint, tmp_path,
                                                                         monkeypatch):
    """The app's real loop: the window's run (on its worker thread) hands its requests to the qasync loop the
    application installs (app.gui.application.install_event_loop), on the GUI thread, while Qt keeps running."""
    import asyncio
    import threading

    from PySide6.QtWidgets import QApplication

    from app.core.base import aio
    from app.core.engines.remote import RemoteEngine
    from app.core.document.sample_documents import make_small_report
    from app.gui.application import install_event_loop
    from app.gui.main_window import MainWindow
    from app.gui.settings import Settings

    seen = []
    read = RemoteEngine.decode_region_async

    async def watched(self, *args, **kwargs):  # the real request, with where it ran noted
        seen.append((asyncio.get_running_loop(), threading.get_ident()))
        return await read(self, *args, **kwargs)

    monkeypatch.setattr(RemoteEngine, "decode_region_async", watched)
    s = Settings()
    for key, value in (("engine", "remote"), ("remote_servers", server.url), ("remote_model", str(checkpoint)),
                       ("remote_concurrency", 3), ("layout", "pymupdf")):
        s.set(key, value)
    loop = install_event_loop(QApplication.instance())
    try:
        w = MainWindow(s)
        qtbot.addWidget(w)
        w.show()
        path = make_small_report(tmp_path / "report.pdf")
        w.open_files([str(path)], run=True)

        async def until_read() -> None:
            while not seen or w.decoder.running:
                await asyncio.sleep(0.05)

        loop.run_until_complete(asyncio.wait_for(until_read(), 90))
    finally:
        aio.set_host_loop(None)
        asyncio.set_event_loop(None)
        loop.close()
    assert seen and all(where is loop for where, _ in seen)  # the application's loop, no loop of its own
    assert {thread for _, thread in seen} == {threading.main_thread().ident}  # on the GUI thread
    doc = w.session.documents[0]
    read_blocks = [b for b in doc.blocks.values() if "server" in b.region.extra.get("stats", {})]
    assert len(read_blocks) == len(seen)  # every request's result reached the window


def test_preferences_servers_test_connection_says_what_answers(qtbot, server, checkpoint):
    from app.core.tiny.serving import free_port
    from app.gui.preferences import PreferencesDialog
    from app.gui.settings import Settings

    s = Settings()
    dialog = PreferencesDialog(s)
    qtbot.addWidget(dialog)
    dialog.editors["remote_servers"].setText(server.url)
    dialog.connection_test.button.click()
    qtbot.waitUntil(lambda: dialog.connection_test.ok is not None, timeout=20000)
    assert dialog.connection_test.ok and str(checkpoint) in dialog.connection_test.result.text()
    dead = f"http://127.0.0.1:{free_port()}/v1"
    dialog.editors["remote_servers"].setText(dead)
    dialog.connection_test.ok = None
    dialog.connection_test.button.click()
    qtbot.waitUntil(lambda: dialog.connection_test.ok is not None, timeout=20000)
    assert not dialog.connection_test.ok and "cannot be reached" in dialog.connection_test.result.text()
    dialog.editors["remote_api_key_env"].setText("MY_OCR_KEY")
    dialog.accept()
    assert s.get("remote_servers") == dead and s.get("remote_api_key_env") == "MY_OCR_KEY"


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
    again = _schedule(both, _jobs(6))
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

    outcomes = _schedule(engine, _jobs(8), emit).applied
    assert len(outcomes) == 8  # nothing lost: every region has its outcome, in order
    done = [o for o in outcomes if o.error is None]
    failed = [o for o in outcomes if o.error is not None]
    assert len(done) >= 2 and failed
    assert all(o.result.text is not None and not o.result.cancelled for o in done)
    assert all(any(w in str(o.error) for w in ("ConnectError", "closed", "Read", "Remote")) for o in failed)
    assert engine.servers[0].failures >= 3 * len(failed)  # every failed region was tried 1 + 2 times
