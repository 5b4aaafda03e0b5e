"""The bundle reads every script the router reads with nothing installed on the person's machine: the spec
carries tesserocr (its wheel holds libtesseract) and the build machine's Tesseract models of those scripts,
with English and the script detector; a model the build machine lacks is named with the package that brings
it; the bundle's runtime hook points Tesseract at the models it carries, unless the person named a folder of
their own."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from script_pages import need_tesseract
from test_installer import INSTALLER, _spec_namespace


def _wanted() -> set[str]:
    from app.core.scripts.catalogue import SCRIPTS

    return {"osd", "eng", *(lang for s in SCRIPTS.values() for lang in s.languages)}


def test_the_spec_carries_tesserocr_and_the_models_of_every_script_the_router_reads():
    tess = need_tesseract(*sorted(_wanted()))
    ns = _spec_namespace("default")
    carried = {Path(src).name: src for src, dest in ns["datas"] if dest == "tessdata"}
    assert set(carried) == {f"{lang}.traineddata" for lang in _wanted()}
    assert all(Path(src).parent == tess.folder for src in carried.values())
    assert "tesserocr" in ns["hiddenimports"]


def test_a_model_the_build_machine_lacks_is_left_out_and_named_with_its_package(tmp_path, monkeypatch,
                                                                               capsys):
    folder = tmp_path / "tessdata"
    folder.mkdir()
    (folder / "eng.traineddata").write_bytes((need_tesseract("eng").folder / "eng.traineddata").read_bytes())
    monkeypatch.setenv("TESSDATA_PREFIX", str(folder))
    ns = _spec_namespace("default")
    assert [Path(src).name for src, dest in ns["datas"] if dest == "tessdata"] == ["eng.traineddata"]
    said = capsys.readouterr().out
    assert "Tesseract models left out" in said and "apt install tesseract-ocr-osd tesseract-ocr-rus" in said
    assert "tesseract-ocr-eng" not in said


def _hook_env(meipass: Path, env: dict) -> str:
    code = ("import os, runpy, sys; sys._MEIPASS = sys.argv[1]; runpy.run_path(sys.argv[2]); "
            "print(os.environ.get('TESSDATA_PREFIX', ''))")
    hook = INSTALLER / "hooks" / "rthook_scriptorium.py"
    proc = subprocess.run([sys.executable, "-c", code, str(meipass), str(hook)], env=env, capture_output=True,
                          text=True, check=True)
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


def test_the_runtime_hook_points_tesseract_at_the_bundled_models_unless_told_otherwise(tmp_path):
    bundle = tmp_path / "_internal"
    (bundle / "tessdata").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "TESSDATA_PREFIX"}
    assert _hook_env(bundle, env) == str(bundle / "tessdata")
    assert _hook_env(bundle, {**env, "TESSDATA_PREFIX": "/somewhere/mine"}) == "/somewhere/mine"
    assert _hook_env(tmp_path / "no-bundle", env) == ""  # a bundle without models: Tesseract's own lookup
