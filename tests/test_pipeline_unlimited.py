"""The page pipeline with the whole-document engine (Unlimited-OCR, tiny real checkpoint): one owner per event.

Each page's layout reaches a listener in the page view's coordinates only (the pipeline's display DPI, never the
engine's 300 DPI render), grows as blocks complete, never repeats itself and ends equal to the output; the run ends
with exactly one RunFinished or RunCancelled; a refused document gives one fatal message, not two.
"""
from __future__ import annotations

import pytest

from app.core.record import events as ev
from app.core.base.cancel import CancelToken
from app.core.pipeline import Pipeline, PipelineError, PipelineOptions
from app.core.engines.unlimited_output import clean_raw

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def two_pages(tmp_path_factory):
    from app.core.document.sample_documents import make_sample_pdf

    return make_sample_pdf(tmp_path_factory.mktemp("doc") / "two.pdf", pages=2)


def run(path, model, *, cancel_at: int | None = None, **engine_options):
    events: list[ev.Event] = []
    token = CancelToken()

    def emit(event):
        events.append(event)
        if cancel_at is not None and isinstance(event, ev.WindowStepped) and event.step == cancel_at:
            token.cancel()

    options = PipelineOptions(engine="unlimited", model_path=str(model), device="cpu", dtype="fp32",
                              engine_options={"max_new_tokens": 90, **engine_options})
    pipe = Pipeline(options, emit=emit, cancel=token)
    try:
        out = pipe.run(path)
    finally:
        pipe.close()
    return out, events


def check_layouts(out, events) -> None:
    """One coordinate system, growing layouts, the last one = the output; blocks finish after they are laid out."""
    layouts: dict[int, list[list[dict]]] = {}
    laid: set[str] = set()
    finished: list[str] = []
    for e in events:
        if isinstance(e, ev.LayoutDone):
            assert e.source == "unlimited"
            for r in e.regions:
                assert r["page"] == e.page and r["dpi"] == 144.0  # the page view's coordinates
                assert r["box"] == pytest.approx([v * 2 for v in r["box_pt"]], abs=0.05)
            history = layouts.setdefault(e.page, [])
            if history:
                before = history[-1]
                assert e.regions != before  # never the same layout twice
                assert e.regions[:len(before)] == before  # a layout only grows (blocks complete in order)
            history.append(e.regions)
            laid |= {r["id"] for r in e.regions}
        elif isinstance(e, ev.RegionFinished) and e.region_id != "doc":
            assert e.region_id in laid  # the block exists when its text arrives
            finished.append(e.region_id)
        elif isinstance(e, ev.PageFinished):
            assert e.page in layouts
    for page in out.pages:  # (the text-layer comparison adds its figures afterwards, in TextLayerCompared)
        final = [r.to_dict() for r in page.regions]
        for d in final:
            d["extra"] = {k: v for k, v in d["extra"].items() if k not in ("cer", "reference_chars")}
        assert layouts[page.index][-1] == final
    assert sorted(finished) == sorted(r.id for r in out.regions()) and len(set(finished)) == len(finished)


def test_unlimited_run_has_one_owner_per_event(tiny_unlimited_dir, two_pages):
    out, events = run(two_pages, tiny_unlimited_dir)
    names = [type(e).__name__ for e in events]
    assert names[0] == "RunStarted" and names[-1] == "RunFinished"
    assert names.count("RunStarted") == names.count("RunFinished") == 1 and "RunCancelled" not in names
    assert names.count("DocumentOpened") == 1 and names.count("PageFinished") == 2
    assert not any(isinstance(e, ev.ErrorRaised) and e.fatal for e in events)
    check_layouts(out, events)
    # the generation's own record; each block knows where its text is in that raw output
    (doc,) = [e for e in events if isinstance(e, ev.RegionFinished) and e.region_id == "doc"]
    steps = "".join(e.text for e in events if isinstance(e, ev.WindowStepped))
    assert steps.replace("\ufffd", "") == doc.text.replace("\ufffd", "")
    assert out.regions()
    for r in out.regions():
        a, b = r.extra["raw_text_span"]
        shown = clean_raw(doc.text[a:b])
        for mark in ("<PAGE>", "<|/det|>", "<|ref|>", "<|/ref|>"):  # markers and strays are not block text
            shown = shown.replace(mark, "")
        assert shown.strip() == r.text


def test_cancelled_unlimited_run_ends_once_with_the_layout_so_far(tiny_unlimited_dir, two_pages):
    out, events = run(two_pages, tiny_unlimited_dir, cancel_at=30)
    names = [type(e).__name__ for e in events]
    assert out.cancelled and names[-1] == "RunCancelled"
    assert names.count("RunCancelled") == 1 and "RunFinished" not in names
    steps = [e.step for e in events if isinstance(e, ev.WindowStepped)]
    assert steps[-1] == 30
    check_layouts(out, events)


def test_a_refused_document_is_reported_once(tiny_unlimited_dir, two_pages):
    events: list[ev.Event] = []
    options = PipelineOptions(engine="unlimited", model_path=str(tiny_unlimited_dir), device="cpu",
                              engine_options={"max_total_tokens": 40, "min_output_tokens": 30})
    pipe = Pipeline(options, emit=events.append)
    with pytest.raises(PipelineError):
        pipe.run(two_pages)
    pipe.close()
    fatal = [e for e in events if isinstance(e, ev.ErrorRaised) and e.fatal]
    assert len(fatal) == 1 and "does not fit" in fatal[0].message
    assert not any(isinstance(e, (ev.RunFinished, ev.RunCancelled, ev.LayoutDone)) for e in events)
