"""Test-wide settings and the tiny-model kit fixtures.

Tiny checkpoints of the REAL transformers classes are built once per session (app.core.tiny), saved to a temp
folder and loaded back through the app's own loader. Nothing is mocked.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The Hugging Face cache of the person running the tests never changes an outcome (GravityOCR weights there would
# make "auto" choose another engine): an empty cache of the run's own, set before anything imports huggingface_hub
# (it reads these once), and inherited by the commands the tests start as processes.
_USER_ENV = {k: os.environ.get(k) for k in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")}
_EMPTY_HF = tempfile.mkdtemp(prefix="scriptorium-test-hf-")
atexit.register(shutil.rmtree, _EMPTY_HF, ignore_errors=True)
os.environ["HF_HOME"] = _EMPTY_HF
os.environ["HF_HUB_CACHE"] = os.path.join(_EMPTY_HF, "hub")
os.environ.pop("HUGGINGFACE_HUB_CACHE", None)

import pytest  # noqa: E402

# the remote tests' served tiny checkpoint and its real server, one for the session (tests/remote_kit.py)
from remote_kit import checkpoint, server  # noqa: E402,F401

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def pytest_configure(config):
    config.addinivalue_line("markers", "user_cache: the test reads the real Hugging Face cache and user data dir "
                                       "(opts out of the isolation below)")


@pytest.fixture(autouse=True)
def _isolated_user_data(request, tmp_path_factory, monkeypatch):
    """No test reads or writes the real user's journal, settings or model folders, nor sees their Hugging Face
    cache (each test gets an empty one of its own), unless it is marked `user_cache`."""
    import sys

    constants = sys.modules.get("huggingface_hub.constants")
    if request.node.get_closest_marker("user_cache"):  # the person's own cache and data, as the app sees them
        for key, value in _USER_ENV.items():
            if value is None:
                monkeypatch.delenv(key, raising=False)
            else:
                monkeypatch.setenv(key, value)
        if constants is not None:
            cache = _USER_ENV["HF_HUB_CACHE"] or _USER_ENV["HUGGINGFACE_HUB_CACHE"] or os.path.join(
                _USER_ENV["HF_HOME"] or os.path.join(os.path.expanduser("~"), ".cache", "huggingface"), "hub")
            monkeypatch.setattr(constants, "HF_HUB_CACHE", cache)
        return
    home = tmp_path_factory.mktemp("scriptorium-home")
    monkeypatch.setenv("SCRIPTORIUM_HOME", str(home))
    monkeypatch.setenv("SCRIPTORIUM_MODELS", str(home / "models"))
    hub = home / "hf-hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    if constants is not None:  # already imported (it read the variables then): point it there too
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))


@pytest.fixture(autouse=True)
def _qt_widgets_deleted_with_their_test(request):
    """pytest-qt closes a test's widgets and asks Qt to delete them later; Qt does that in the next event
    loop that runs, which was the NEXT test's first wait: a window was torn down in the middle of another test
    (the crash seen inside `test_gui_region_editing`'s window fixture). Deleted here instead, at the end of
    the test that made them (an explicit DeferredDelete flush: processEvents alone does not delete)."""
    yield
    if "qtbot" not in request.fixturenames:
        return
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def open_window(qtbot):
    """`open_window(pdf, engine="classic", read=None)`: the real MainWindow at 1280×800, shown, active,
    `pdf` open with its pages measured; `read` (a list of page indexes, or "all") is read and waited for.
    Registered with qtbot: closed (every thread it started ended: MainWindow.closeEvent) and deleted when
    the test ends."""

    def make(pdf=None, engine: str = "classic", read=None, timeout_ms: int = 90_000):
        from app.gui.main_window import MainWindow
        from window_kit import wait_window_run

        w = MainWindow()
        qtbot.addWidget(w)
        w.resize(1280, 800)
        if engine:
            w.engine_bar.set_engine(engine)
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()
        if pdf is not None:
            w.open_files([str(pdf)], run=False)
            qtbot.waitUntil(lambda: bool(w.work.page_sizes), timeout=20_000)
        if read is not None:
            w.run_document(None if read == "all" else list(read))
            wait_window_run(qtbot, w, timeout_ms)
        return w

    return make


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

    from app.core.base.paths import sample_document
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


from ci_parts import pytest_runtest_makereport  # noqa: E402,F401  (a missing part fails under CI)
