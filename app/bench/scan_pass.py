"""`python -m app bench scan_pass [--reps N] [--engine NAME]`: one OCR pass per scanned page with the built-in engine,
measured before/after on generated scans (app.bench.documents_corpus: skewed, salt-and-pepper noise, JPEG).

Each page is laid out once by the default layout (PyMuPDF's, whose OCR hook finds and reads the page's lines).
Then its regions are read `--reps` times each way, alternating, after one untimed warm-up of both:
- before: the engine reads each region's crop and detects its lines again (`decode_region`);
- after: the pipeline's path (`TextSource.read`), which hands the engine the layout's OCR line boxes
  (`decode_lines`): the same recogniser and decoder, no second detection.
Reported per page: the median read time of its regions each way and the ratio, and the edit distance of each way's
text to the expected text (whitespace collapsed, over its length). The layout's own time is the same both ways.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def pages(folder: Path) -> list[tuple[Path, str]]:
    """(scan PDF, expected text): the corpus's scan (3 lines) and a longer one (7 lines)."""
    from app.bench import documents_corpus as corpus

    short = folder / "scan.pdf"
    expected = corpus.scan(short)
    lines = corpus.SCAN_TEXT + [corpus.SHOWN] + corpus.SHOWN_MORE + [corpus.RIGHT[0]]
    doc, _ = corpus._image_pdf([corpus._text_page_image(lines, skew=-0.4, noise=0.002, seed=2)])
    long = folder / "scan7.pdf"
    doc.save(str(long))
    doc.close()
    return [(short, expected), (long, "\n".join(lines))]


def edit(expected: str, got: str) -> float:
    from app.core.text.textmetrics import error_rate

    return error_rate(" ".join(expected.split()), " ".join(got.split()))


def measure(pdf: Path, expected: str, engine, reps: int) -> dict:
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.document.regions import DECODED_TASKS

    pipe = Pipeline(PipelineOptions(text_layer="prefer"), engine=engine)
    try:
        out = pipe.run(pdf)  # laid out once (and read once: the warm-up of the "after" path)
        regions = [r for r in out.pages[0].regions if r.task in DECODED_TASKS]
        dpi = pipe.ocr_dpi(0)

        def before():
            return [engine.decode_region(pipe.document.crop(r.page, r.box_pt, dpi), r.task, region_id=r.id,
                                         page=r.page) for r in regions]

        def after():
            return [pipe.text_source.read(r, engine, dpi) for r in regions]

        before()  # warm-up
        times: dict[str, list[float]] = {"before": [], "after": []}
        texts: dict[str, str] = {}
        for _ in range(reps):
            for name, fn in (("before", before), ("after", after)):
                t0 = time.perf_counter()
                results = fn()
                times[name].append((time.perf_counter() - t0) * 1e3)
                texts[name] = " ".join(res.text for res in results)
        given = sum(1 for r in regions if pipe.text_source.layout_lines(r))
    finally:
        pipe.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"page": pdf.stem, "regions": len(regions), "given": given,
            "before_ms": med["before"], "after_ms": med["after"], "ratio": med["before"] / max(med["after"], 1e-9),
            "before_edit": edit(expected, texts["before"]), "after_edit": edit(expected, texts["after"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app bench scan_pass", description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=5, help="timed reads per way and page (default 5; the median is shown)")
    p.add_argument("--engine", default="builtin", help="a region engine that reads given lines (default builtin)")
    args = p.parse_args(argv)
    from app.core.engines import LineRegionEngine, open_engine
    from app.core.base.noise import quiet_third_party

    quiet_third_party(verbose=False)
    engine = open_engine(args.engine, device="cpu")
    if not isinstance(engine, LineRegionEngine):
        print(f"the {args.engine} engine does not read given lines: nothing to compare")
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for pdf, expected in pages(Path(tmp)):
            rows.append(measure(pdf, expected, engine, max(1, args.reps)))
    print(f"engine {engine.name}, median of {args.reps} warm reads per way (ms: the page's regions)")
    print("| page | regions (lines given) | before: own detection | after: layout's lines | × | edit before | "
          "edit after |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['page']} | {r['regions']} ({r['given']}) | {r['before_ms']:.0f} | {r['after_ms']:.0f} | "
              f"{r['ratio']:.2f} | {r['before_edit']:.3f} | {r['after_edit']:.3f} |")
    engine.close()
    return 0
