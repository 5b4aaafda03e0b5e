"""What keeps a long run's memory flat (`bench memory` measures it; docs/benchmarks.md): the recogniser's ONNX
session keeps no arena (one grows to the widest batch of lines ever read and never shrinks), and the pipeline hands
the heap's freed pages back to the system after every region and page (app.core.base.heap), and the run and
the window's renderer keep a few renderings (app.core.document.RUN_RENDERS, VIEW_RENDERS). No RSS or timing
asserts here."""
from __future__ import annotations

import sys

import pytest

from app.core.base import heap
from app.core.pipeline import Pipeline, PipelineOptions
from app.core.document.sample_documents import make_long_pdf, make_small_report


def test_the_recogniser_session_keeps_no_arena():
    from app.core.rapid.recogniser import Recogniser

    try:
        rec = Recogniser(threads=1)
    except FileNotFoundError as exc:
        pytest.skip(f"missing part: the recogniser's model ({exc})")
    assert rec.session.get_session_options().enable_cpu_mem_arena is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux's")
def test_release_free_memory_trims_the_heap_on_glibc():
    before = heap.releases
    assert heap.release_free_memory() is True
    assert heap.releases == before + 1


def test_a_run_gives_the_freed_heap_back_after_every_page(tmp_path, monkeypatch):
    from app.core.pipeline import run as run_module

    events, trims = [], []

    def release(took: float | None = None) -> bool:
        trims.append((sum(e.type == "page_finished" for e in events), took))  # pages announced when it was called
        return True

    monkeypatch.setattr(run_module, "release_free_memory", release)
    pdf = make_small_report(tmp_path / "report.pdf")
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf"), emit=events.append)
    try:
        out = pipe.run(pdf)
    finally:
        pipe.close()
    assert len(out.pages) == 2
    read = sum(e.type == "region_finished" for e in events)
    pages = [n for n, took in trims if took is None]
    assert pages[-1] == 2 and 1 in pages  # right after each page's PageFinished, always
    # and after each region read one at a time (its crops and tensors freed), saying how long it took
    regions = [took for _, took in trims if took is not None]
    assert len(regions) >= read and all(took >= 0 for took in regions)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim is Linux's")
def test_the_heap_is_trimmed_after_a_long_region_only():
    before = heap.releases
    assert heap.release_free_memory(took=0.01) is False and heap.releases == before
    assert heap.release_free_memory(took=heap.REGION_TRIM) is True and heap.releases == before + 1


def test_a_run_keeps_the_renderings_of_the_pages_in_flight_only(tmp_path):
    """The run's document keeps RUN_RENDERS renderings (the page laid out and the page read, at two DPIs), not
    the default 8: a long run's memory no longer climbs over its first pages."""
    from app.core.document import RUN_RENDERS

    pdf = make_long_pdf(tmp_path / "long.pdf", pages=6)
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf"), emit=lambda e: None)
    try:
        pipe.run(pdf)
        assert pipe.document.cache.max_entries == RUN_RENDERS <= 4
        assert len(pipe.document.cache) <= RUN_RENDERS
    finally:
        pipe.close()


def test_the_window_renderer_keeps_few_renderings(qapp, tmp_path):
    from app.core.document import VIEW_RENDERS
    from app.gui.render_service import PageRenderer

    pdf = make_long_pdf(tmp_path / "long.pdf", pages=6)
    renderer = PageRenderer()
    try:
        for page in range(6):
            renderer.request(str(pdf), page, 72.0, "thumbnail")
        assert renderer.wait(30_000)
        doc = renderer._documents[str(pdf)]
        assert doc.cache.max_entries == VIEW_RENDERS <= 3
        assert len(doc.cache) <= VIEW_RENDERS
    finally:
        renderer.close()
