"""Runtime hook, run by the frozen executable before `app/__main__.py`.

- multiprocessing: a frozen child process must run its task instead of the app (spawn on Windows/macOS).
- windowed builds (Windows/macOS) have no stdout/stderr; give them a sink so a stray print cannot crash the app.
- Hugging Face libraries: never phone home from the bundle (the app never downloads at run time anyway).
"""
import multiprocessing
import os
import sys

multiprocessing.freeze_support()

if sys.stdout is None:
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the process)
if sys.stderr is None:
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
