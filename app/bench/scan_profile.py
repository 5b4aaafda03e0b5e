"""Where a scanned page's time goes, and how it compares with a bare RapidOCR pass (`bench documents --corpus real
--profile`, `--reps N`).

- `rapidocr`: the floor converter — RapidOCR's detector and recogniser over the page image (a PDF page rendered at
  200 DPI first), its lines joined top to bottom, nothing else (no layout, no orientation, no decoder);
- `profile_table`: per page, the milliseconds of each stage of our conversion (app.core.base.stages: render, layout,
  column cut, orientation, detector, recogniser, word list, decoder, assembly, writing; "other" is the rest of the
  wall time) and each stage's share of the page, then the mean over the pages;
- `speed_lines`: per converter, seconds per page as the median over the repetitions, its spread (min-max over the
  repetitions, summed over the pages), and the ratio to the bare pass measured on the same pages in the same run.

What must never live here: the scoring (app.bench.real_scoring) or the corpus (app.bench.real_corpus).
"""
from __future__ import annotations

import statistics
from pathlib import Path

from app.core.base.stages import STAGES

RENDER_DPI = 200.0
_ENGINE: list = []  # the one RapidOCR instance, loaded on first use


def rapidocr_markdown(path: Path) -> str:
    """A bare RapidOCR pass: detection + recognition of the page image, the lines' texts one a line."""
    import numpy as np
    import pymupdf

    if not _ENGINE:
        import logging

        from rapidocr import RapidOCR

        _ENGINE.append(RapidOCR(params={"Global.log_level": "error"}))
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    with pymupdf.open(str(path)) as doc:
        if path.suffix.lower() == ".pdf":
            pix = doc.load_page(0).get_pixmap(dpi=int(RENDER_DPI))
        else:
            pix = doc.load_page(0).get_pixmap()
        image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[..., :3]
    result = _ENGINE[0](np.ascontiguousarray(image[..., ::-1]))
    return "\n".join(result.txts or ()) if result is not None else ""


def stage_names(rows: list[dict]) -> list[str]:
    seen = {n for r in rows for n in r.get("stages") or {}}
    return [n for n in STAGES if n in seen] + sorted(seen - set(STAGES)) + ["other"]


def _with_other(row: dict) -> dict[str, float]:
    ms = dict(row.get("stages") or {})
    ms["other"] = max(0.0, row["s"] * 1e3 - sum(ms.values()))
    return ms


def profile_table(rows: list[dict], converter: str = "default") -> str:
    """Per page of `converter`'s rows with stages: ms and share per stage, then the mean page."""
    mine = [r for r in rows if r["converter"] == converter and r.get("stages") is not None]
    if not mine:
        return f"(no stage profile for {converter})"
    names = stage_names(mine)
    lines = ["| page | s | " + " | ".join(names) + " |", "|" + "---|" * (2 + len(names))]
    per_page = []
    for r in mine:
        ms = _with_other(r)
        per_page.append(ms)
        whole = max(1e-9, r["s"] * 1e3)
        lines.append(f"| {r['page']} | {r['s']:.2f} | " + " | ".join(
            f"{ms.get(n, 0.0):.0f} ({100 * ms.get(n, 0.0) / whole:.0f}%)" for n in names) + " |")
    mean = {n: statistics.fmean(p.get(n, 0.0) for p in per_page) for n in names}
    whole = max(1e-9, sum(mean.values()))
    lines.append(f"| mean | {whole / 1e3:.2f} | " + " | ".join(
        f"{mean[n]:.0f} ({100 * mean[n] / whole:.0f}%)" for n in names) + " |")
    return "\n".join(lines)


def speed_lines(rows: list[dict], names: list[str], base: str = "rapidocr") -> str:
    """Per converter: total seconds per page (median of the repetitions), spread, and the ratio to `base`."""
    out = []
    pages = list(dict.fromkeys(r["page"] for r in rows))
    by = {(r["page"], r["converter"]): r for r in rows}
    totals = {}
    for n in names:
        rs = [by[(p, n)] for p in pages if (p, n) in by]
        if not rs:
            continue
        reps = [r.get("s_reps") or [r["s"]] for r in rs]
        k = min(len(x) for x in reps)
        per_rep = [sum(x[i] for x in reps) / len(rs) for i in range(k)]  # the mean page, repetition by repetition
        totals[n] = statistics.median(per_rep)
        out.append(f"{n}: {totals[n]:.2f} s/page (median of {k} repetitions over {len(rs)} pages; "
                   f"{min(per_rep):.2f}-{max(per_rep):.2f})")
    if base in totals:
        for n in (n for n in names if n != base and n in totals):
            ratios = sorted(by[(p, n)]["s"] / by[(p, base)]["s"] for p in pages
                            if (p, n) in by and (p, base) in by and by[(p, base)]["s"] > 0)
            out.append(f"{n} / {base}: {totals[n] / max(1e-9, totals[base]):.2f} on the mean page "
                       f"(per page median {statistics.median(ratios):.2f}, {ratios[0]:.2f}-{ratios[-1]:.2f})")
    return "\n".join(out)
