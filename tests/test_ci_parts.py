"""Under CI a skip for a missing part is a failure; elsewhere it stays a skip."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "test_needs_a_part.py").write_text(
        "import pytest\n\n"
        "def test_needs_a_part():\n    pytest.skip('missing part: a tool nobody installed')\n\n"
        "def test_skips_for_another_reason():\n    pytest.skip('not on this platform')\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(HERE)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "ci_parts", "-p", "no:randomly",
                           "-p", "no:cacheprovider", str(tmp_path)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


def test_a_missing_part_fails_the_run_under_ci(tmp_path):
    out = _run(tmp_path, "true")
    assert out.returncode == 1, out.stdout
    assert "1 failed, 1 skipped" in out.stdout and "a tool nobody installed" in out.stdout


def test_a_missing_part_is_only_a_skip_elsewhere(tmp_path):
    out = _run(tmp_path, None)
    assert out.returncode == 0 and "2 skipped" in out.stdout, out.stdout
