"""Getting llama-server without a build on the machine: `python3 make.py llama-server` keeps its build in a cache
outside the checkout keyed by llama.cpp's version and the build flags, and a second call finds it (no rebuild);
`--engine llamacpp` finds its GGUF files in a models folder and says what is missing and how to get it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.base import llama_build
from app.core.engines import EngineUnavailable, open_engine
from app.core.engines.llamacpp import find_model_files

ROOT = Path(__file__).resolve().parents[1]


def _make(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, llama_build.CACHE_ENV: str(cache)}
    return subprocess.run([sys.executable, str(ROOT / "make.py"), "llama-server", *args], capture_output=True,
                          text=True, env=env, timeout=60)


def test_make_llama_server_finds_its_cached_build_without_building_again(tmp_path, monkeypatch):
    empty = _make(tmp_path, "--where")  # nothing cached: says how to get it, builds nothing
    assert empty.returncode == 1 and "make.py llama-server" in empty.stderr and not empty.stdout
    monkeypatch.setenv(llama_build.CACHE_ENV, str(tmp_path))
    home = llama_build.build_dir()
    assert home.is_relative_to(tmp_path / "llama.cpp") and llama_build.VERSION in home.name
    assert not home.is_relative_to(ROOT)  # outside the checkout
    exe = home / "build" / "bin" / "llama-server"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    found = _make(tmp_path)  # a second call: the cached binary, no download, no cmake
    assert found.returncode == 0 and found.stdout.strip() == str(exe) and "==" not in found.stdout + found.stderr
    assert llama_build.cached_binary() == exe


def test_the_cache_is_keyed_by_version_and_flags(monkeypatch):
    before = llama_build.build_dir()
    monkeypatch.setattr(llama_build, "CMAKE_FLAGS", (*llama_build.CMAKE_FLAGS, "-DGGML_CUDA=ON"))
    assert llama_build.build_dir() != before and llama_build.build_dir().parent == before.parent


def test_a_models_folder_holds_the_model_and_its_projector(tmp_path):
    folder = tmp_path / "glm"
    folder.mkdir()
    (folder / "GLM-OCR-Q8_0.gguf").write_bytes(b"GGUF")
    with pytest.raises(EngineUnavailable, match="--mmproj"):  # an OCR model reads no image without it
        find_model_files(model_path=str(folder))
    (folder / "mmproj-GLM-OCR-F16.gguf").write_bytes(b"GGUF")
    assert find_model_files(model_path=str(folder)) == (folder / "GLM-OCR-Q8_0.gguf",
                                                        folder / "mmproj-GLM-OCR-F16.gguf")
    assert find_model_files(gguf=str(folder / "GLM-OCR-Q8_0.gguf"))[1].name == "mmproj-GLM-OCR-F16.gguf"
    (folder / "GLM-OCR-Q4_K_M.gguf").write_bytes(b"GGUF")
    with pytest.raises(EngineUnavailable, match="exactly one model GGUF.*--gguf"):
        find_model_files(model_path=str(folder))
    with pytest.raises(EngineUnavailable, match="does not exist"):
        find_model_files(gguf=str(tmp_path / "missing.gguf"))


def test_without_a_binary_the_engine_and_convert_say_how_to_get_one(tmp_path, monkeypatch, capsys):
    from app.cli import main
    from app.core.base.paths import sample_document

    folder = tmp_path / "glm"
    folder.mkdir()
    for name in ("m.gguf", "mmproj-m.gguf"):
        (folder / name).write_bytes(b"GGUF")
    with pytest.raises(EngineUnavailable, match="python3 make.py llama-server"):
        open_engine("llamacpp", model_path=str(folder), llama_server=str(tmp_path / "no-such-binary"))
    monkeypatch.setenv("PATH", str(tmp_path))  # neither on PATH nor cached nor configured
    monkeypatch.setenv(llama_build.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(llama_build.BINARY_ENV, raising=False)
    code = main(["convert", str(sample_document()), "-o", str(tmp_path / "out"), "--engine", "llamacpp", "--model",
                 str(folder)])
    err = capsys.readouterr().err
    assert code == 3 and "llama-server was not found" in err and "make.py llama-server" in err
