"""Test-wide settings and the tiny-model kit fixtures.

Tiny checkpoints of the REAL transformers classes are built once per session (app.core.tiny), saved to a temp
folder and loaded back through the app's own loader. Nothing is mocked.
"""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


@pytest.fixture(autouse=True)
def _isolated_user_data(tmp_path_factory, monkeypatch):
    """No test reads or writes the real user's journal, settings or model folders."""
    home = tmp_path_factory.mktemp("scriptorium-home")
    monkeypatch.setenv("SCRIPTORIUM_HOME", str(home))
    monkeypatch.setenv("SCRIPTORIUM_MODELS", str(home / "models"))


@pytest.fixture(scope="module")
def one_torch_thread():
    """Decoder tests on one thread: steadier on the shared 2-core machines, and the same numbers every run."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Screenshots and other files a person may want to look at after a test run."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def tiny_glmocr_dir(tmp_path_factory) -> Path:
    from app.core.tiny.glm_checkpoint import build

    return build(tmp_path_factory.mktemp("tiny-glmocr"), seed=0)


@pytest.fixture(scope="session")
def tiny_unlimited_dir(tmp_path_factory) -> Path:
    from app.core.tiny.unlimited import build

    return build(tmp_path_factory.mktemp("tiny-unlimited"), seed=0)


@pytest.fixture(scope="session")
def tiny_doclayout_dir(tmp_path_factory) -> Path:
    from app.core.tiny.doclayout import build

    return build(tmp_path_factory.mktemp("tiny-doclayout"), seed=0)


@pytest.fixture(scope="module")
def page_events(tmp_path_factory):
    """One real classic-OCR run of the sample's first page, as events (read once per test module): what the review
    tests replay through the window's one entry point, as a live run's events are."""
    import shutil

    from app.core.paths import sample_document
    from app.core.pipeline import Pipeline, PipelineOptions

    pdf = tmp_path_factory.mktemp("doc") / "report.pdf"
    shutil.copyfile(sample_document(), pdf)
    events: list = []
    pipe = Pipeline(PipelineOptions(engine="classic", pages="1"), emit=events.append)
    try:
        pipe.run(pdf)
    finally:
        pipe.close()
    return pdf, events
