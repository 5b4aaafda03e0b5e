"""Runtime hook, run by the frozen executable before `app/__main__.py`.

- multiprocessing: a frozen child process must run its task instead of the app (spawn on Windows/macOS).
- windowed builds (Windows/macOS) have no stdout/stderr; give them a sink so a stray print cannot crash the app.
- Hugging Face libraries: never phone home from the bundle (the app never downloads at run time anyway).
- Tesseract reads the models the bundle carries (tessdata/, installer/scriptorium.spec) unless the person
  named a folder of their own (TESSDATA_PREFIX: for a language the bundle lacks, a folder holding it).
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

_TESSDATA = os.path.join(getattr(sys, "_MEIPASS", os.path.dirname(sys.executable)), "tessdata")
if os.path.isdir(_TESSDATA):
    os.environ.setdefault("TESSDATA_PREFIX", _TESSDATA)
