"""`convert` against a REAL `transformers serve` (tests/remote_kit.py): every text region read and the API key in no
output or trace; an unreachable server said so (exit 3); `convert DIR --resume` after SIGINT reads no page the
checkpoint holds; a folder keeps the server busy across documents with the same output as one by one; the unlimited
profile's whole-page answers parsed into blocks.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from app.core.engines import EngineUnavailable, open_engine
from remote_kit import ROOT, SECRET, convert_here


def test_convert_sample_against_the_server_reads_every_text_region_and_never_writes_the_key(server, checkpoint,
                                                                                            tmp_path, capsys,
                                                                                            monkeypatch):
    from app.core.base.paths import sample_document

    monkeypatch.setenv("SCRIPTORIUM_API_KEY", SECRET)
    out = tmp_path / "out"
    code, stdout, stderr = convert_here(capsys, sample_document(), "-o", out, "--engine", "remote", "--server",
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
    code, stdout, stderr = convert_here(capsys, sample_document(), "-o", tmp_path / "cut", "--engine", "remote",
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
    code, _, stderr = convert_here(capsys, sample_document(), "-o", tmp_path / "out", "--engine", "remote", "--server", url)
    assert code == 3 and "cannot be reached" in stderr and url.removesuffix("/v1") in stderr
    with pytest.raises(EngineUnavailable, match="must start with http"):
        open_engine("remote", servers=["ftp://x"])
    assert convert_here(capsys, sample_document(), "-o", tmp_path / "o2", "--engine", "remote")[0] == 2


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
    code, stdout, stderr = convert_here(capsys, *args, "--resume", "--trace", tmp_path / "t2.jsonl")
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
        code, stdout, stderr = convert_here(capsys, src, "-o", tmp_path / "both", *common, "--trace",
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
        assert convert_here(capsys, src / f"{name}.pdf", "-o", alone, *common)[0] == 0
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
