"""`python -m app report TRACE [--out DIR]`: where drafting paid and where it failed in a recorded run, from the
trace file alone (no model): per region its TPF and mean accepted length, and the drafts' acceptance by region kind,
by token class and by position in the block, printed as tables; with `--out`, also an HTML page, the charts and each
page's acceptance map as PNG, and the figures as JSON (app.core.record.acceptance). Exits 2 when the file is not a
readable trace, 1 when no region in it was decoded by a model."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", help="trace file (JSON lines, written with --trace or the window's recording)")
    p.add_argument("--out", help="folder for report.html, report.png, map-pN.png and report.json")
    p.add_argument("--no-page", action="store_true",
                   help="draw the maps on white instead of the document's page (when the document is found)")


def print_report(report, console) -> None:
    from rich.table import Table

    regions = Table(title=f"Regions ({report.engine or '?'}, B={report.block_size})")
    for col in ("region", "label", "kind", "TPF", "mean accepted", "tokens", "forwards", "drafts accepted"):
        regions.add_column(col, justify="right" if col not in ("region", "label", "kind") else "left")
    for r in report.regions:
        regions.add_row(r.region_id, r.label, r.kind, f"{r.tpf:.2f}", f"{r.mean_accepted:.2f}", str(r.tokens),
                        str(r.forwards), f"{r.rate:.1%}")
    console.print(regions)
    for title, rows, with_tpf in (("By region kind", report.by_kind, True), ("By token class", report.by_class, False),
                                  ("By position in the block", report.by_position, False)):
        table = Table(title=title)
        for col in ("", "drafts judged", "accepted", *(("TPF",) if with_tpf else ())):
            table.add_column(col, justify="left" if not col else "right")
        for t in rows:
            table.add_row(t.name, str(t.judged), f"{t.rate:.1%}", *((f"{t.tpf:.2f}",) if with_tpf else ()))
        console.print(table)
    rejected = ", ".join(f"{t!r}×{n}" for t, n in report.rejected_texts.items()) or "none"
    console.print(f"most often rejected drafts: {rejected}")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from app.core.record.acceptance import analyse
    from app.core.record.acceptance_html import write_report
    from app.core.record.trace import TraceError, read_trace

    try:
        events = read_trace(args.trace)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = analyse(events)
    console = Console(width=110)
    print_report(report, console)
    if args.out:
        for path in write_report(report, Path(args.out), with_page=not args.no_page):
            console.print(f"wrote {path}")
    if not report.regions:
        print("no region in this trace was decoded by a model (nothing to report)", file=sys.stderr)
        return 1
    return 0
