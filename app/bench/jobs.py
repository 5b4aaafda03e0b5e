"""`python -m app bench jobs [--pages 50] [--jobs 1,2] [--reps 2]`: `convert` of one long scanned PDF with one
worker (in process) and with N worker processes (`--jobs N`), side by side: wall time and peak memory.

The PDF is built here, at bench time, from the real scans of the development set (corpora/realdocs, its `s`
pages in Latin script, app.bench.real_corpus): each scan becomes one image-only page, the scans taken in turn
until the PDF has `--pages` pages (default 50). Each setting runs `python -m app convert PDF -o DIR --jobs N
-q` as a child process, the settings taking turns, `--reps` times (default 2). Per run: the wall time, and the
peak memory — the largest sum of the resident memory (RSS) of the convert process and every process below it
(its workers, their layout children), sampled every 0.25 s. Printed: per setting the median wall time, seconds
per page, the spread over the repetitions, the median peak memory, and the speed-up over the first setting;
then whether the outputs of every run are the same (Markdown byte for byte, JSON with its timings taken out:
`differences`).

The machine state is printed first and last (cores, load average, memory free): these figures mean little on a
busy machine, and say so. What must never live here: asserts (this prints figures), conversion code.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SAMPLE_S = 0.25


def scan_images(only: tuple[str, ...] = ("s",), folder: Path | None = None) -> list[Path]:
    """The Latin scans of the development set (its `s` pages that are images; those whose id starts with one
    of `only`), in manifest order."""
    from app.bench.real_corpus import CORPUS, load

    return [pg.path for pg in load(folder or CORPUS) if pg.id.startswith("s") and pg.id.startswith(only)
            and pg.kind == "scan" and pg.script == "latin"
            and pg.path.suffix.lower() in (".png", ".jpg", ".jpeg", ".tif", ".tiff")]


def scanned_pdf(path: Path, pages: int, images: list[Path]) -> Path:
    """An image-only PDF of `pages` pages, the `images` in turn, each on a page of its own size at the DPI
    that makes its long side about 11 inches (72-300 DPI): what a scanner's PDF holds."""
    import pymupdf
    from PIL import Image

    if not images:
        raise ValueError("no scans to build the PDF from")
    doc = pymupdf.open()
    for k in range(pages):
        image = images[k % len(images)]
        with Image.open(image) as im:
            w, h = im.size
        dpi = min(300.0, max(72.0, max(w, h) / 11.0))
        page = doc.new_page(width=w * 72.0 / dpi, height=h * 72.0 / dpi)
        page.insert_image(page.rect, filename=str(image))
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path), garbage=3, deflate=True)
    doc.close()
    return path


def tree_rss_mb(pid: int) -> float:
    """The resident memory of process `pid` and every process below it, in MB (0 when it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 1e6


def convert_once(pdf: Path, out: Path, jobs: int, extra: list[str]) -> dict:
    """One `convert` child: its wall time, peak tree memory and exit code."""
    cmd = [sys.executable, "-m", "app", "convert", str(pdf), "-o", str(out), "--jobs", str(jobs), "-q",
           *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0.0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            time.sleep(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - t0
    sampler.join()
    return {"jobs": jobs, "s": seconds, "peak_mb": peak[0], "code": proc.returncode,
            "line": (stdout.strip().splitlines() or [""])[-1], "stderr": stderr.strip()[-400:]}


def machine_state() -> str:
    import psutil

    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    mem = psutil.virtual_memory()
    busy = load[0] > 0.5 * (os.cpu_count() or 1)
    return (f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
            f"(1/5/15 min), {mem.available / 1e9:.1f} of {mem.total / 1e9:.1f} GB free"
            + (" — a busy machine: the figures are slower than on an idle one, and noisier" if busy else ""))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app bench jobs", description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=50, help="pages of the generated scanned PDF (default 50)")
    p.add_argument("--jobs", default="1,2", metavar="A,B", help="--jobs settings to compare (default 1,2)")
    p.add_argument("--reps", type=int, default=2, help="runs of each setting, taking turns (default 2)")
    p.add_argument("--only", default="s", metavar="IDS",
                   help="the scans the PDF is built from: page id prefixes, e.g. s06,s07 (default: all)")
    p.add_argument("--keep", default="", metavar="DIR", help="keep the PDF and every run's output here")
    p.add_argument("convert_args", nargs=argparse.REMAINDER, help="after --: more convert options")
    args = p.parse_args(argv)
    settings = [int(j) for j in args.jobs.split(",") if j.strip()]
    extra = [a for a in args.convert_args if a != "--"]
    print(machine_state(), flush=True)
    with tempfile.TemporaryDirectory(prefix="scriptorium-bench-jobs-") as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        images = scan_images(tuple(i.strip() for i in args.only.split(",") if i.strip()))
        pdf = scanned_pdf(root / f"scans-{args.pages}.pdf", args.pages, images)
        names = ", ".join(i.stem.split("-")[0] for i in images)
        print(f"{pdf.name}: {args.pages} pages from {len(images)} real scans ({names}; corpora/realdocs)",
              flush=True)
        runs: list[dict] = []
        for rep in range(args.reps):
            for jobs in settings:
                out = root / f"out-j{jobs}-r{rep + 1}"
                run = convert_once(pdf, out, jobs, extra)
                run["out"] = out
                runs.append(run)
                print(f"  --jobs {jobs} run {rep + 1}: {run['s']:.1f} s, peak {run['peak_mb']:.0f} MB, "
                      f"exit {run['code']}: {run['line'][:90]}", flush=True)
                if run["code"] not in (0, 4):
                    print(f"    {run['stderr']}", flush=True)
        print()
        print(table(runs, settings, args.pages))
        print(same_outputs(runs, pdf.stem))
        print("at the end, " + machine_state())
    return 0


def table(runs: list[dict], settings: list[int], pages: int) -> str:
    lines = ["| --jobs | wall s (median) | s/page | spread s | peak MB (median) | speed-up |",
             "|---|---|---|---|---|---|"]
    base = None
    for jobs in settings:
        mine = [r for r in runs if r["jobs"] == jobs and r["code"] in (0, 4)]
        if not mine:
            lines.append(f"| {jobs} | failed | | | | |")
            continue
        wall = statistics.median(r["s"] for r in mine)
        base = base or wall
        lines.append(f"| {jobs} | {wall:.1f} | {wall / pages:.2f} | {min(r['s'] for r in mine):.1f}-"
                     f"{max(r['s'] for r in mine):.1f} ({len(mine)} runs) | "
                     f"{statistics.median(r['peak_mb'] for r in mine):.0f} | {base / wall:.2f}× |")
    return "\n".join(lines)


def same_outputs(runs: list[dict], stem: str) -> str:
    """Are the runs' outputs the same (Markdown byte for byte, JSON but for its timings)?"""
    done = [r for r in runs if r["code"] in (0, 4)]
    if len(done) < 2:
        return "outputs: fewer than two runs to compare"
    first = done[0]
    found = [f"--jobs {r['jobs']}: {d}" for r in done[1:] for d in differences(first["out"], r["out"], stem)]
    if found:
        return "outputs DIFFER from the first run's:\n  " + "\n  ".join(found[:10])
    return f"outputs: the same in all {len(done)} runs (Markdown byte for byte, JSON but for its timings)"


# wall-clock measurements in the JSON (two runs never take the same milliseconds); the rest must be the same
TIMINGS = {"ms", "seconds", "tokens_per_s", "total_ms", "request_ms", "draft_ms", "verify_ms", "decode_s",
           "run_s", "first_token_ms", "mean_ms", "stages"}


def without_timings(value):
    """A JSON value with its wall-clock measurements blanked."""
    if isinstance(value, dict):
        timing = TIMINGS | {k for k in value if k.endswith(("_ms", "_per_s", "_per_forward"))}
        return {k: None if k in timing else without_timings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def differences(a: Path, b: Path, stem: str = "") -> list[str]:
    """What differs between two output folders: files only one holds, files whose bytes differ (JSON files:
    once their timings are blanked). [] when they are the same."""
    import json

    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(root).parts)}

    left, right = files(a), files(b)
    found = [f"only in {a.name}: {n}" for n in sorted(left - right)]
    found += [f"only in {b.name}: {n}" for n in sorted(right - left)]
    for name in sorted(left & right):
        x, y = (a / name).read_bytes(), (b / name).read_bytes()
        if x == y:
            continue
        if name.endswith(".json") and without_timings(json.loads(x)) == without_timings(json.loads(y)):
            continue
        found.append(f"{name} differs")
    return found
