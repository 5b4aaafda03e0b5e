#!/usr/bin/env python3
"""Post-build check: run the bundled executable the way a person's machine would, headless, and fail loudly.

    python3 installer/postbuild_check.py installer/dist/cpu/scriptorium

1. `scriptorium --version` must print the app's version.
2. `scriptorium convert <the sample inside the bundle> -o OUT` (default engine: classic RapidOCR when no model
   weights are found) must exit 0 and write readable Markdown.
3. `scriptorium --sample` (the window: on a private Xvfb X server when Xvfb is installed, else on Qt's offscreen
   platform) must come up and stay up for a few seconds: catches a missing Qt plugin or GUI module, which the
   headless commands never load.
4. With `--tiny-model DIR` (a tiny random GlmOcr checkpoint, see app/core/tiny), also `convert --engine gravity
   --model DIR` on page 1 (one whole-page region, 24 tokens at most): proves torch and transformers load and decode inside the frozen bundle. Random weights
   read nonsense, so only a clean exit (0, or 4: converted with warnings) and a Markdown file are required.
5. With `--tiny-layout DIR` (a tiny random PP-DocLayoutV3 checkpoint), also `convert --layout ppdoclayout` on
   page 1: torchvision and OpenCV inside the bundle (variants that carry torchvision).

It runs from an empty temporary folder, with a fresh SCRIPTORIUM_HOME and without PYTHONPATH/VIRTUAL_ENV, so the
bundle cannot lean on the source checkout or a Python installation. Standard library only.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONVERT_TIMEOUT_S = 900
GUI_SECONDS = 12


def app_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()  # the one place the version is kept
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def executable(bundle: Path) -> Path:
    # On Windows the GUI executable has no console; the console twin is the one to run headless.
    for name in ("scriptorium-cli.exe", "scriptorium.exe", "scriptorium"):
        if (bundle / name).is_file():
            return bundle / name
    raise FileNotFoundError(f"no scriptorium executable in {bundle}")


def bundled_sample(bundle: Path) -> Path:
    for candidate in (bundle / "_internal" / "resources" / "samples" / "sample.pdf",
                      bundle / "resources" / "samples" / "sample.pdf"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"the sample document is not in the bundle {bundle} (resources/ not collected?)")


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "SCRIPTORIUM_MODELS")}
    env.update(SCRIPTORIUM_HOME=str(home / "scriptorium-home"), QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1",
               PYTHONDONTWRITEBYTECODE="1")
    return env


def _fail(step: str, proc: subprocess.CompletedProcess | None, why: str) -> int:
    bar = "!" * 78
    print(bar, file=sys.stderr)
    print(f"POST-BUILD CHECK FAILED at {step}: {why}", file=sys.stderr)
    if proc is not None:
        print(f"exit code: {proc.returncode}", file=sys.stderr)
        print("--- stdout (tail) ---\n" + (proc.stdout or "")[-4000:], file=sys.stderr)
        print("--- stderr (tail) ---\n" + (proc.stderr or "")[-4000:], file=sys.stderr)
    print(bar, file=sys.stderr)
    return 1


def _start_xvfb() -> tuple[subprocess.Popen, str] | None:
    """A private X server when Xvfb is installed (Linux), so the window runs on the real xcb platform plugin."""
    xvfb = shutil.which("Xvfb")
    if not xvfb or not sys.platform.startswith("linux"):
        return None
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(write_fd), "-screen", "0", "1440x900x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    if not number.isdigit():
        proc.kill()
        return None
    return proc, f":{number}"


def gui_smoke(exe: Path, cwd: Path, env: dict[str, str]) -> int:
    """Open the window on the bundled sample; it must not exit (crash) within GUI_SECONDS. On an X server (Xvfb)
    when one can be started, else on Qt's offscreen platform."""
    env = dict(env)
    xserver = _start_xvfb()
    if xserver is not None:
        env.pop("QT_QPA_PLATFORM", None)
        env["DISPLAY"] = xserver[1]
        where = f"X server Xvfb {xserver[1]}, xcb platform"
    else:
        where = "offscreen platform"
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen([str(exe), "--sample"], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(timeout=GUI_SECONDS)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            print(f"   window: `{exe.name} --sample` came up and stayed up {GUI_SECONDS} s ({where}), then was closed",
                  flush=True)
            return 0
    finally:
        if xserver is not None:
            xserver[0].terminate()
            xserver[0].wait(timeout=10)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if proc.returncode != 0:
        return _fail(f"window (--sample, {where})", done, f"exited after {time.monotonic() - t0:.1f} s")
    print(f"   window: `{exe.name} --sample` opened and closed by itself with exit 0 ({where})", flush=True)
    return 0


def check(bundle: Path, tiny_model: Path | None = None, engine: str = "gravity",
          tiny_layout: Path | None = None) -> int:
    bundle = Path(bundle).resolve()
    print(f"== post-build check of {bundle}", flush=True)
    try:
        exe, sample = executable(bundle), bundled_sample(bundle)
    except FileNotFoundError as exc:
        return _fail("layout", None, str(exc))
    with tempfile.TemporaryDirectory(prefix="scriptorium-check-") as tmp:
        tmp = Path(tmp)
        env = clean_env(tmp)

        t0 = time.monotonic()
        proc = subprocess.run([str(exe), "--version"], cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
        want = f"scriptorium {app_version()}"
        if proc.returncode != 0 or want not in proc.stdout + proc.stderr:
            return _fail("--version", proc, f"expected {want!r}")
        print(f"   --version: {proc.stdout.strip()} ({time.monotonic() - t0:.1f} s)", flush=True)

        out = tmp / "out"
        t0 = time.monotonic()
        cmd = [str(exe), "convert", str(sample), "-o", str(out)]
        try:
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return _fail("convert", None, f"no answer within {CONVERT_TIMEOUT_S} s")
        secs = time.monotonic() - t0
        if proc.returncode != 0:
            return _fail("convert", proc, "non-zero exit")
        md = sorted(out.rglob("*.md")) if out.exists() else []
        text = md[0].read_text(encoding="utf-8", errors="replace") if md else ""
        if not md or len(re.findall(r"[A-Za-z]{3,}", text)) < 3:
            return _fail("convert", proc, f"no readable Markdown written under {out} (files: "
                         f"{sorted(p.name for p in out.rglob('*')) if out.exists() else 'none'})")
        produced = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
        print(f"   convert: {exe.name} convert {sample.relative_to(bundle)} -o OUT -> exit 0 in {secs:.1f} s, "
              f"wrote {', '.join(produced)}", flush=True)
        if proc.stdout.strip():
            print("   convert printed: " + " | ".join(proc.stdout.strip().splitlines()[-5:]), flush=True)
        first = [ln for ln in text.splitlines() if ln.strip()][:6]
        print("   Markdown starts:", flush=True)
        for ln in first:
            print(f"     {ln[:100]}", flush=True)

        if gui_smoke(exe, tmp, env) != 0:
            return 1

        if tiny_model is not None:
            out = tmp / "out-model"
            cmd = [str(exe), "convert", str(sample), "-o", str(out), "--engine", engine, "--model", str(tiny_model),
                   "--pages", "1", "--layout", "page", "--max-new-tokens", "24", "--device", "cpu", "--no-compare", "-q"]
            t0 = time.monotonic()
            try:
                proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                                      timeout=CONVERT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                return _fail(f"convert --engine {engine}", None, f"no answer within {CONVERT_TIMEOUT_S} s")
            md = sorted(out.rglob("*.md")) if out.exists() else []
            if proc.returncode not in (0, 4) or not md:
                return _fail(f"convert --engine {engine}", proc, "the model engine did not run in the bundle")
            print(f"   convert --engine {engine} --model <tiny random GlmOcr> --pages 1 --layout page -> exit {proc.returncode} "
                  f"in {time.monotonic() - t0:.1f} s (torch + transformers work frozen)", flush=True)
        if tiny_layout is not None:
            out = tmp / "out-layout"
            cmd = [str(exe), "convert", str(sample), "-o", str(out), "--engine", "classic", "--layout", "ppdoclayout",
                   "--layout-model", str(tiny_layout), "--pages", "1", "--device", "cpu", "--no-compare", "-q"]
            t0 = time.monotonic()
            try:
                proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True,
                                      timeout=CONVERT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                return _fail("convert --layout ppdoclayout", None, f"no answer within {CONVERT_TIMEOUT_S} s")
            if proc.returncode not in (0, 4) or not sorted(out.rglob("*.md")):
                return _fail("convert --layout ppdoclayout", proc, "the PP-DocLayoutV3 layout did not run in the bundle")
            print(f"   convert --layout ppdoclayout --layout-model <tiny random PP-DocLayoutV3> --pages 1 -> exit "
                  f"{proc.returncode} in {time.monotonic() - t0:.1f} s (torchvision + OpenCV work frozen)", flush=True)
    print("== post-build check passed", flush=True)
    return 0


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path, help="the bundle folder (holding the scriptorium executable)")
    ap.add_argument("--tiny-model", type=Path, default=None, help="a tiny GlmOcr checkpoint folder (app/core/tiny)")
    ap.add_argument("--engine", default="gravity", help="engine for the --tiny-model run (default gravity)")
    ap.add_argument("--tiny-layout", type=Path, default=None, help="a tiny PP-DocLayoutV3 checkpoint folder")
    a = ap.parse_args()
    raise SystemExit(check(a.bundle, a.tiny_model, a.engine, a.tiny_layout))
