"""What the remote-engine tests share (tests/test_remote*.py): the tiny random GlmOcr checkpoint served by a REAL
`transformers serve` on CPU (app.core.tiny.serving), one server for the whole test session (started by the first
test that asks for it, never killed: the crash test starts its own), and the helpers that queue regions and run
`convert` in this process."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-never-written-7f3a9c"


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    from app.core.tiny.serving import servable_checkpoint

    # the stop row scaled up: greedy decoding ends on its own after a few tokens, as a real model's does
    return servable_checkpoint(tmp_path_factory.mktemp("served"), stop_boost=3.0)


@pytest.fixture(scope="session")
def server(checkpoint, tmp_path_factory):
    """One server for the session, never killed (the crash test starts its own)."""
    from app.core.tiny.serving import TransformersServer

    srv = TransformersServer(checkpoint, log=tmp_path_factory.mktemp("log") / "serve.log").wait()
    yield srv
    srv.stop()


def jobs_of(count: int, pages: int = 3):
    from app.core.document.regions import Region
    from app.core.engines.scheduler import Job
    from app.core.tiny.glm_checkpoint import sample_images

    images = sample_images(count, seed=3)
    jobs = []
    for k, im in enumerate(images):
        page, order = k % pages, k // pages
        jobs.append(Job((0, page, order), Region(f"p{page + 1}-r{order + 1:02d}", page, (0, 0, 1, 1), "text", "text",
                                                 order), im))
    return jobs


def schedule(engine, jobs, emit=lambda e: None, cancel=None):
    from app.core.base.cancel import CancelToken
    from app.core.base.aio import run_async
    from app.core.engines.scheduler import RegionScheduler

    applied = []
    scheduler = RegionScheduler(engine, emit, cancel or CancelToken())
    try:
        run_async(lambda: scheduler.run(jobs, applied.append))
    finally:
        scheduler.applied = applied
    return scheduler


def convert_here(capsys, *args) -> tuple[int, str, str]:
    """`convert` in this process (the model-free remote engine needs no fresh interpreter): code, stdout, stderr."""
    from app.cli import main

    capsys.readouterr()
    code = main(["convert", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err

