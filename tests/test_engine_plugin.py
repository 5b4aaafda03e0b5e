"""An engine package installed beside Scriptorium is an engine of Scriptorium: a tiny distribution (its own
pyproject, one module holding the engine, its spec and options, one `scriptorium.engines` entry point) is
pip-installed into this environment, found through importlib.metadata's entry points by a fresh `convert
--help` and a fresh window's engine box, and uninstalled again; a broken entry point beside it is refused
without taking the others with it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

DIST = "scriptorium-toy-shout"

ENGINE_MODULE = '''
"""A toy engine in one file: the engine, its factory, its options and its spec (the entry point names SPEC).
"""
from app.core.engines.base import RegionResult, no_emit
from app.core.engines.spec import EngineOption, EngineSpec
from app.core.record.events import RegionFinished, RegionStarted


class ShoutEngine:
    kind, device, input_dpi, concurrency = "region", "cpu", 200.0, 1

    def __init__(self, case, name):
        self.name, self.case = name, case

    def close(self):
        pass

    def decode_region(self, image, task, *, region_id, page=0, emit=no_emit, cancel=None):
        emit(RegionStarted(region_id, page, task, self.name))
        text = "SHOUT" if self.case == "upper" else "shout"
        emit(RegionFinished(region_id, text, {"engine": self.name}))
        return RegionResult(region_id, text, stats={"engine": self.name})


def open_engine(*, case="upper", engine="shout", **_model):
    return ShoutEngine(case, engine)


CASE = EngineOption("case", str, "upper", "letter case of the text", choices=("upper", "lower"))
SPEC = EngineSpec("shout", "Shouting OCR (plugin)", "region", "scriptorium_toy_shout:open_engine",
                  options=(CASE,))
'''

PYPROJECT = f'''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{DIST}"
version = "0.1"

[tool.setuptools]
py-modules = ["scriptorium_toy_shout"]

[project.entry-points."scriptorium.engines"]
shout = "scriptorium_toy_shout:SPEC"
broken = "scriptorium_toy_shout:NO_SUCH_SPEC"
'''

WINDOW = '''
import json
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.gui.main_window import MainWindow
w = MainWindow()
box = w.engine_bar.engine
print(json.dumps([[box.itemData(i), box.itemText(i)] for i in range(box.count())]))
w.close()
'''


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def _pip(*args: str) -> subprocess.CompletedProcess:
    return _run("-m", "pip", "--disable-pip-version-check", "-q", *args)


def _engines() -> dict:
    done = _run("-c", "import json; from app.core.engines import ENGINES; "
                      "print(json.dumps({'names': list(ENGINES), 'refused': ENGINES.refused}))")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_installed_engine_package_is_offered_by_convert_and_the_window(tmp_path):
    if _pip("--version").returncode != 0:
        pytest.skip("missing part: pip in this environment (the plugin test installs a package)")
    pkg = tmp_path / "toy-shout"
    pkg.mkdir()
    (pkg / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    (pkg / "scriptorium_toy_shout.py").write_text(ENGINE_MODULE)
    before = _engines()["names"]
    assert "shout" not in before and "classic" in before
    installed = _pip("install", "--no-deps", "--no-build-isolation", "--no-index", str(pkg))
    try:
        assert installed.returncode == 0, installed.stderr
        engines = _engines()
        assert engines["names"] == [*before, "shout"]  # ours first, then the plugins
        assert any(r.startswith("broken (scriptorium_toy_shout:NO_SUCH_SPEC)") for r in engines["refused"])
        helped = _run("-m", "app", "convert", "--help")
        assert helped.returncode == 0, helped.stderr
        assert "shout" in helped.stdout.split("--engine", 1)[1].split("\n", 1)[0]  # among --engine's choices
        assert "--engine shout (Shouting OCR (plugin))" in helped.stdout
        assert "--case {upper,lower}" in helped.stdout
        shown = _run("-c", WINDOW)
        assert shown.returncode == 0, shown.stderr
        box = json.loads(shown.stdout.strip().splitlines()[-1])
        assert ["shout", "Shouting OCR (plugin)"] in box and box[0][0] == "auto"
    finally:
        removed = _pip("uninstall", "-y", DIST)
    assert removed.returncode == 0, removed.stderr
    assert _engines()["names"] == before  # the environment is as it was
