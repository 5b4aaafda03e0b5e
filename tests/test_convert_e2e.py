"""End to end: a generated two-page born-digital PDF (heading, text, ruled table, embedded image) → `convert`
with a tiny GlmOcr checkpoint (GravityOCR self-speculative engine) → .md + .json with one block per region,
region ids stable across two runs, the picture saved; then the same with a tiny PP-DocLayoutV3 checkpoint."""
from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.document.sample_documents import make_small_report
from app.core.record.trace import load_trace


@pytest.fixture(scope="module")
def report_pdf(tmp_path_factory):
    return make_small_report(tmp_path_factory.mktemp("e2e") / "report.pdf")


def _convert(out, pdf, model, *extra):
    return main(["convert", str(pdf), "-o", str(out), "--engine", "gravity", "--model", str(model),
                 "--max-new-tokens", "3", "--ocr-dpi", "36", "--text-layer", "compare", "-q", *map(str, extra)])


def _check_outputs(out, trace_file):
    doc = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    trace = load_trace(trace_file)
    layout_events = [e for e in trace.events if e.type == "layout_done"]
    assert [e.page for e in layout_events] == [0, 1]
    assert doc["schema"] == "scriptorium.document/1" and doc["engine"] == "gravity"
    assert [p["index"] for p in doc["pages"]] == [0, 1]
    for page, ev in zip(doc["pages"], layout_events):
        # one block per region, same ids and boxes as the layout announced
        assert [b["id"] for b in page["blocks"]] == [r["id"] for r in ev.regions]
        assert [b["box"] for b in page["blocks"]] == [pytest.approx(r["box"], abs=0.01) for r in ev.regions]
        for b in page["blocks"]:
            assert {"id", "label", "task", "box", "box_pt", "text", "engine", "stats"} <= set(b)
            if b["task"] in ("text", "table", "formula"):
                assert b["engine"] == "gravity" and b["stats"]["tokens"] >= 1
    finished = {e.region_id for e in trace.events if e.type == "region_finished"}
    decoded = {b["id"] for p in doc["pages"] for b in p["blocks"] if b["task"] in ("text", "table", "formula")}
    assert finished == decoded and decoded
    assert any(e.type == "round_verified" for e in trace.events)
    compared = [e for e in trace.events if e.type == "text_layer_compared"]  # CER per page, from the pipeline
    assert [e.page for e in compared] == [0, 1]
    assert trace.events[0].type == "run_started" and trace.events[-1].type == "run_finished"
    assert '<a id="page-1"></a>' in md and '<a id="page-2"></a>' in md
    return doc, md


def test_convert_pymupdf_layout_tiny_glmocr(tmp_path, report_pdf, tiny_glmocr_dir):
    runs = []
    for n in range(2):
        out = tmp_path / f"run{n}"
        cache = ["--cache", "static"] if n else []  # the second run on the static KV cache: same text
        assert _convert(out, report_pdf, tiny_glmocr_dir, "--layout", "pymupdf", "--trace", out / "t.jsonl",
                        *cache) == 0
        runs.append(_check_outputs(out, out / "t.jsonl"))
    (doc, md), (doc2, md2) = runs
    blocks = [b for p in doc2["pages"] for b in p["blocks"] if b["task"] in ("text", "table", "formula")]
    assert blocks and all(b["stats"]["cache"] == "static" for b in blocks)
    assert [b["text"] for p in doc["pages"] for b in p["blocks"]] == [b["text"] for p in doc2["pages"]
                                                                       for b in p["blocks"]]
    ids = [[(b["id"], b["label"], b["task"], b["box"]) for b in p["blocks"]] for p in doc["pages"]]
    assert ids == [[(b["id"], b["label"], b["task"], b["box"]) for b in p["blocks"]] for p in doc2["pages"]]
    p1 = [(b["id"], b["label"], b["task"]) for b in doc["pages"][0]["blocks"]]
    assert p1 == [("p1-r01", "doc_title", "text"), ("p1-r02", "text", "text"), ("p1-r03", "table", "table"),
                  ("p1-r04", "image", "picture")]
    pic = doc["pages"][0]["blocks"][3]
    assert pic["image"] == "report_images/p1-r04.png"
    assert (tmp_path / "run0" / pic["image"]).stat().st_size > 100
    assert "![Figure p1-r04](report_images/p1-r04.png)" in md
    assert md == md2  # greedy decoding of the same weights: the same document twice
    compared = [e for e in load_trace(tmp_path / "run0" / "t.jsonl").events if e.type == "text_layer_compared"]
    cer = {b["region_id"]: b["cer"] for e in compared for b in e.blocks}
    assert set(cer) == {"p1-r01", "p1-r02", "p1-r03", "p2-r01", "p2-r02"}
    assert cer == pytest.approx({b["id"]: b["cer"] for p in doc["pages"] for b in p["blocks"] if b["cer"] is not None},
                                abs=1e-4)


def test_convert_tiny_ppdoclayout(tmp_path, report_pdf, tiny_glmocr_dir, tiny_doclayout_dir):
    out = tmp_path / "pp"
    rc = _convert(out, report_pdf, tiny_glmocr_dir, "--layout", "ppdoclayout", "--layout-model", tiny_doclayout_dir,
                  "--trace", out / "t.jsonl")
    assert rc == 0
    doc, _ = _check_outputs(out, out / "t.jsonl")
    assert doc["layout"] == "ppdoclayout"
    blocks = [b for p in doc["pages"] for b in p["blocks"]]
    assert blocks and all(b["source"] == "ppdoclayout" and b["score"] >= 0.3 for b in blocks)
    for p in doc["pages"]:
        assert [b["order"] for b in p["blocks"]] == list(range(len(p["blocks"])))
        assert [b["id"] for b in p["blocks"]] == [f"p{p['index'] + 1}-r{k + 1:02d}" for k in range(len(p["blocks"]))]
