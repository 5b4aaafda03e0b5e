"""What keeps a long run's memory flat (`bench memory` measures it; docs/benchmarks.md): the recogniser's ONNX
session keeps no arena (one grows to the widest batch of lines ever read and never shrinks), and the pipeline hands
the heap's freed pages back to the system after every page (app.core.base.heap). No RSS or timing asserts here."""
from __future__ import annotations

import sys

import pytest

from app.core.base import heap
from app.core.pipeline import Pipeline, PipelineOptions
from app.core.document.sample_documents import make_small_report


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

    def release() -> bool:
        trims.append(sum(e.type == "page_finished" for e in events))  # pages announced when it was called
        return True

    monkeypatch.setattr(run_module, "release_free_memory", release)
    pdf = make_small_report(tmp_path / "report.pdf")
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf"), emit=events.append)
    try:
        out = pipe.run(pdf)
    finally:
        pipe.close()
    assert len(out.pages) == 2
    assert trims == [1, 2]  # once a page, each right after that page's PageFinished
