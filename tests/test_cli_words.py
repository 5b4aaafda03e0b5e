"""The command line as a person mistypes it: an unknown word is one line and exit 2, never a window; --version is
the package's."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _app(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))


def test_an_unknown_command_word_is_one_line_and_exit_2():
    out = _app("covnert", "x.pdf")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == ["scriptorium: unknown command 'covnert' (did you mean 'convert'?)"]


def test_a_missing_file_is_one_line_and_exit_2():
    out = _app("report-that-is-not-here.pdf")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "no such file" in out.stderr


def test_version_is_pyprojects():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    out = _app("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"scriptorium {version}"
