"""`python -m app bench paging [--quick] [--pages N] [--dpi D]`: opening and paging through a long PDF.

A 500-page report is generated (app.core.document.sample_documents.make_long_pdf; --quick: 120 pages), then measured in one process:
- time to open it and to render page 1 (what a person waits for before seeing anything);
- paging through every page at the display DPI with the document's bounded render cache, the resident memory
  (RSS) sampled after each page: after page 10, at the middle, at the end, and the peak. Flat means bounded: the
  growth from page 10 to the last page should be a few MB, not (pages × one rendered page).
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path


def rss_mb() -> float:
    """Resident memory of this process in MB."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 1e6
    except ImportError:  # pragma: no cover - psutil is optional
        try:
            with open("/proc/self/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024 / 1e6
        except OSError:
            pass
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def measure(path: Path, dpi: float) -> dict:
    from app.core.document import open_document

    out: dict = {"rss_before_mb": rss_mb()}
    t0 = time.perf_counter()
    doc = open_document(path)
    out["open_ms"] = (time.perf_counter() - t0) * 1000
    out["pages"] = doc.page_count
    t0 = time.perf_counter()
    first = doc.render(0, dpi)
    out["render1_ms"] = (time.perf_counter() - t0) * 1000
    out["page_mb"] = first.width * first.height * 3 / 1e6
    out["rss_after_open_mb"] = rss_mb()
    samples: dict[int, float] = {}
    peak = 0.0
    t0 = time.perf_counter()
    for i in range(doc.page_count):
        doc.render(i, dpi)
        r = rss_mb()
        peak = max(peak, r)
        if i + 1 in (10, doc.page_count // 2, doc.page_count):
            samples[i + 1] = r
    out["page_through_s"] = time.perf_counter() - t0
    out["rss_samples_mb"] = samples
    out["rss_peak_mb"] = peak
    out["cache_pages"], out["cache_mb"] = len(doc.cache), doc.cache.nbytes / 1e6
    doc.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench paging", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="120 pages instead of 500")
    p.add_argument("--pages", type=int, default=None)
    p.add_argument("--dpi", type=float, default=144.0)
    args = p.parse_args(argv)
    pages = args.pages or (120 if args.quick else 500)
    from app.core.document.sample_documents import make_long_pdf

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"report-{pages}.pdf"
        t0 = time.perf_counter()
        make_long_pdf(path, pages=pages)
        gen_s = time.perf_counter() - t0
        m = measure(path, args.dpi)
        size_mb = os.path.getsize(path) / 1e6
    s = m["rss_samples_mb"]
    first, last = min(s), max(s)
    growth = s[last] - s[first]
    linear = m["page_mb"] * (last - first)
    print(f"document benchmark: generated {pages}-page PDF ({size_mb:.1f} MB, {gen_s:.1f} s), {args.dpi:g} DPI")
    rows = [
        ("open", f"{m['open_ms']:.1f} ms"),
        ("render page 1", f"{m['render1_ms']:.1f} ms"),
        (f"page through all {m['pages']} pages", f"{m['page_through_s']:.1f} s "
                                                 f"({m['page_through_s'] * 1000 / m['pages']:.1f} ms/page)"),
        ("RSS before open / after page 1", f"{m['rss_before_mb']:.0f} / {m['rss_after_open_mb']:.0f} MB"),
        ("RSS after page " + " / ".join(str(k) for k in sorted(s)), " / ".join(f"{s[k]:.0f}" for k in sorted(s)) + " MB"),
        ("peak RSS", f"{m['rss_peak_mb']:.0f} MB"),
        (f"growth page {first} → {last}", f"{growth:+.1f} MB (keeping every page: +{linear:.0f} MB)"),
        ("render cache at the end", f"{m['cache_pages']} pages, {m['cache_mb']:.1f} MB ({m['page_mb']:.1f} MB a page)"),
    ]
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{w}}  {v}")
    print(f"RESULT document open_ms={m['open_ms']:.1f} render1_ms={m['render1_ms']:.1f} "
          f"peak_rss_mb={m['rss_peak_mb']:.0f} growth_mb={growth:.1f} pages={m['pages']}")
    return 0
