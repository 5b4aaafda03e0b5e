#!/usr/bin/env python3
"""Set-up and tasks with nothing but python3: `python3 make.py run` | `python3 make.py test` | `python3 make.py setup`.
`python3 make.py test -p randomly` runs the tests in a random order (the seed is printed; `--randomly-seed=N`
repeats one).

It creates .venv/ beside this file, installs the project into it (editable, with test extras) when pyproject.toml
changed since the last install, and runs the task inside it.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("SCRIPTORIUM_VENV", ROOT / ".venv"))
PY = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
STAMP = VENV / ".scriptorium-installed"


def _fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def setup() -> None:
    if not PY.exists():
        print(f"== creating virtual environment {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _fingerprint():
        return
    print("== installing scriptorium and its dependencies (a few minutes the first time)", flush=True)
    subprocess.run([str(PY), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    # compat mode: a plain path in a .pth instead of an import hook, so `python -m app` starts ~30 ms sooner (a
    # Ctrl+C in those first milliseconds is Python's own, before the app can leave quietly)
    subprocess.run([str(PY), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[test]", "--config-settings",
                    "editable_mode=compat"], check=True)
    STAMP.write_text(_fingerprint())


def run(extra: list[str]) -> int:
    setup()
    return subprocess.call([str(PY), "-m", "app", *(extra or ["--sample", "--run"])], cwd=ROOT)


def test(extra: list[str]) -> int:
    setup()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
    # the 25 slowest tests are listed at the end of every run: a test that grows slow shows up there
    rc = subprocess.call([str(PY), "-m", "pytest", "--durations=25", *extra], cwd=ROOT, env=env)
    if rc == 5:
        print("make.py: pytest collected no tests; that is a failure", file=sys.stderr)
        return 1
    return rc


def main(argv: list[str]) -> int:
    task, extra = (argv[0], argv[1:]) if argv else ("run", [])
    if task == "setup":
        setup()
        return 0
    if task == "run":
        return run(extra)
    if task == "test":
        return test(extra)
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
