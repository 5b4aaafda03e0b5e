"""The pipeline reads a page's regions in batches (app.core.pipeline.batching) with a local GLM-OCR engine's
`decode_batch`: the same document as one region at a time (tiny random GravityOCR checkpoint, fp32), each region
still framed by one RegionStarted and one RegionFinished so the events rebuild it, an engine error flags its group
and the rest is read, and a Cancel mid-batch ends the run as cancelled."""
from __future__ import annotations

import json

import pytest

from app.core.record import events as ev

pytest.importorskip("torch")
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.usefixtures("one_torch_thread")]

# what a batched decode legitimately reports otherwise: its batch, its (static) cache and its forward count
DECODER_STATS = {"batch", "cache", "forwards", "tpf"}
TOKENS = 6


@pytest.fixture(scope="module")
def report_pdf(tmp_path_factory):
    from app.core.document.sample_documents import make_small_report

    return make_small_report(tmp_path_factory.mktemp("batch") / "report.pdf")


@pytest.fixture(scope="module")
def engine(tiny_glmocr_dir):
    from app.core.engines.glm_engine import open_selfspec

    return open_selfspec(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", max_new_tokens=TOKENS)


def _run(engine, pdf, batch, emit=None, out_dir=None):
    from app.core.pipeline import Pipeline, PipelineOptions

    events: list[ev.Event] = []
    options = PipelineOptions(engine="gravity", layout="pymupdf", ocr_dpi=36, text_layer="compare", batch=batch)
    pipe = Pipeline(options, emit=emit or events.append, engine=engine)
    try:
        out = pipe.run(pdf)
        read = out.to_markdown(), out.to_dict()  # as read, before `write` adds the pictures' paths
        if out_dir is not None:
            pipe.write(out_dir)
    finally:
        pipe.close()
    return out, events, read


def _comparable(doc: dict) -> dict:
    from tests.test_parity import without_timings

    doc = without_timings(doc)
    for page in doc["pages"]:
        for block in page["blocks"]:
            for key in DECODER_STATS:
                (block.get("stats") or {}).pop(key, None)
            block.pop("tpf", None)  # forwards differ between a batch and one region at a time
    return doc


def test_a_batched_page_reads_as_one_region_at_a_time(engine, report_pdf, tiny_glmocr_dir, tmp_path):
    """convert (its default: the engine's batch) writes what Pipeline.run one region at a time writes, and its
    events (the trace) frame every region once and rebuild the same document in the review session."""
    from app.cli import main
    from app.core.review.session import Session
    from app.core.record.trace import load_trace

    _, _, read = _run(engine, report_pdf, 1, out_dir=tmp_path / "one")
    assert main(["convert", str(report_pdf), "-o", str(tmp_path / "auto"), "--engine", "gravity", "--model",
                 str(tiny_glmocr_dir), "--max-new-tokens", str(TOKENS), "--ocr-dpi", "36", "--layout", "pymupdf",
                 "--text-layer", "compare", "-q", "--trace", str(tmp_path / "t.jsonl")]) == 0
    one, auto = (tmp_path / d / "report.md" for d in ("one", "auto"))
    assert auto.read_bytes() == one.read_bytes()
    docs = [json.loads((tmp_path / d / "report.json").read_text()) for d in ("one", "auto")]
    assert _comparable(docs[1]) == _comparable(docs[0])
    blocks = [b for p in docs[1]["pages"] for b in p["blocks"] if b["task"] in ("text", "table", "formula")]
    assert [b["stats"]["batch"] for b in blocks] == [3, 3, 3, 2, 2]  # page 1: three regions together, page 2: two
    assert all(b["text"] and b["stats"]["tokens"] >= 1 for b in blocks)
    assert all("batch" not in b["stats"] for p in docs[0]["pages"] for b in p["blocks"])

    # every decoded region framed once, the frames interleaved, and the events rebuild the document
    events = load_trace(tmp_path / "t.jsonl").events
    framing = [(e.type, e.region_id) for e in events if e.type in ("region_started", "region_finished")]
    for rid in [b["id"] for b in blocks]:
        assert [t for t, r in framing if r == rid] == ["region_started", "region_finished"]
    assert [t for t, _ in framing][:4] == ["region_started"] * 3 + ["region_finished"]
    session = Session()
    work = session.add_document(str(report_pdf))
    session.current = 0
    for e in events:
        session.apply(e, work)
    rebuilt = work.to_output()
    assert rebuilt.to_markdown() == read[0]
    assert _comparable(rebuilt.to_dict()) == _comparable(read[1])


def test_the_batch_option(engine):
    from app.core.pipeline import PipelineOptions
    from app.core.pipeline.batching import batch_size

    sizes = {asked: batch_size(engine, PipelineOptions(batch=asked).batch) for asked in (0, 1, 2, 64)}
    assert sizes == {0: engine.batch_size, 1: 1, 2: 2, 64: engine.batch_size}
    assert PipelineOptions().batch == 1  # the library's and the app's default: one at a time


def test_an_engine_error_flags_its_batch_and_the_rest_is_read(engine, report_pdf, monkeypatch):
    real = engine.decode_batch

    def failing(crops, **kw):
        if any(c.page == 0 for c in crops):
            raise RuntimeError("out of memory in the batch")
        return real(crops, **kw)

    monkeypatch.setattr(engine, "decode_batch", failing)
    out, events, _ = _run(engine, report_pdf, 0)
    first, second = out.pages
    failed = [r for r in first.regions if r.task in ("text", "table")]
    assert len(failed) == 3 and all(r.flags == ["error"] and r.text == "" for r in failed)
    assert all(r.extra["stats"]["error"] == "out of memory in the batch" for r in failed)
    errors = [e for e in events if isinstance(e, ev.ErrorRaised) and e.region_id]
    assert {e.region_id for e in errors} == {r.id for r in failed}
    assert "could not be read (RuntimeError: out of memory in the batch)" in errors[0].message
    read = [r for r in second.regions if r.task == "text"]
    assert len(read) == 2 and all(r.text and "error" not in r.flags and r.extra["stats"]["batch"] == 2 for r in read)
    assert not out.cancelled and out.stats["errors"] == 3 and events[-1].type == "run_finished"


def test_cancel_in_the_middle_of_a_batch_ends_the_run_cancelled(engine, report_pdf):
    from app.core.base.cancel import CancelToken
    from app.core.pipeline import Pipeline, PipelineOptions

    cancel, events = CancelToken(), []

    def emit(e):
        events.append(e)
        if sum(isinstance(x, ev.RoundVerified) for x in events) == 2:  # two rows have done their first round
            cancel.cancel()

    options = PipelineOptions(engine="gravity", layout="pymupdf", ocr_dpi=36, text_layer="compare", batch=0)
    pipe = Pipeline(options, emit=emit, cancel=cancel, engine=engine)
    try:
        out = pipe.run(report_pdf)
    finally:
        pipe.close()
    assert out.cancelled and events[-1].type == "run_cancelled"
    cut = [r for r in out.pages[0].regions if r.task in ("text", "table")]
    assert len(cut) == 3 and all("cancelled" in r.flags for r in cut)
    assert all(r.extra["stats"]["stopped"] == "cancelled" for r in cut)
    assert len(out.pages) == 1  # page 2 was never laid out
    finished = [e for e in events if isinstance(e, ev.RegionFinished)]
    assert sorted(e.region_id for e in finished) == sorted(r.id for r in cut) and all(e.cancelled for e in finished)
