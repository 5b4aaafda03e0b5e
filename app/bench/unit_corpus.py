"""`python -m app bench documents --corpus units`: converters side by side on pages with unit tests
(corpora/unittests: olmOCR-bench's public sample, 21 real PDFs and 100 tests of the kinds app.bench.unit_checks
describes: text present, running furniture absent, reading order, table neighbours, formulas, blank page).

Each test's page is cut into a one-page PDF and read once per converter (the converters take turns, page by page,
all warmed first); printed: per converter and kind the tests passed, the total and its ratio to pymupdf4llm's, and
with `--failures` why each of the first converter's failed tests failed. `--json FILE` writes every result with
the outputs.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from app.bench.unit_checks import KINDS, check

CORPUS = Path(__file__).resolve().parents[2] / "corpora" / "unittests"
DEFAULT_CONVERTERS = ("default", "classic", "pymupdf4llm")


def load(folder: Path = CORPUS) -> list[dict]:
    """Every test of the folder's `*.jsonl` files (raises ValueError naming a test whose PDF is missing)."""
    tests = []
    for f in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            t = json.loads(line)
            if t.get("type") not in KINDS:
                raise ValueError(f"{f.name}:{n}: unknown type {t.get('type')!r}")
            if not (folder / "pdfs" / t["pdf"]).is_file():
                raise ValueError(f"{f.name}:{n}: {t['pdf']} does not exist")
            tests.append(t)
    return tests


def _page_pdf(src: Path, page: int, out: Path) -> Path:
    import pymupdf

    with pymupdf.open(str(src)) as doc:
        if len(doc) == 1:
            return src
        one = pymupdf.open()
        one.insert_pdf(doc, from_page=page - 1, to_page=page - 1)
        one.save(str(out))
        one.close()
    return out


def run(tests: list[dict], names: list[str], folder: Path = CORPUS, log=None) -> tuple[list[dict], dict]:
    """(one row per test and converter: pass, why, seconds of its page; the outputs by (pdf, page, converter))."""
    from app.bench.real_corpus import CONVERTERS

    pages = list(dict.fromkeys((t["pdf"], int(t.get("page", 1))) for t in tests))
    outputs: dict[tuple[str, int, str], tuple[str, float, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {pg: _page_pdf(folder / "pdfs" / pg[0], pg[1], Path(tmp) / f"{len(outputs)}-{pg[1]}-{Path(pg[0]).name}")
                 for pg in pages}
        for name in names:  # warm: models loaded, the layout process started
            try:
                CONVERTERS[name](paths[pages[0]])
            except Exception:  # noqa: BLE001 - recorded per page below
                pass
        for pg in pages:
            for name in names:
                t0 = time.perf_counter()
                error = ""
                try:
                    md = CONVERTERS[name](paths[pg])
                except Exception as exc:  # noqa: BLE001 - a failed page fails its tests
                    md, error = "", f"{type(exc).__name__}: {exc}"[:200]
                outputs[(pg[0], pg[1], name)] = (md, time.perf_counter() - t0, error)
                if log:
                    log(f"  {name:<12} {pg[0]:<50} p{pg[1]} {time.perf_counter() - t0:.1f}s {error}")
    rows = []
    for t in tests:
        for name in names:
            md, secs, error = outputs[(t["pdf"], int(t.get("page", 1)), name)]
            ok, why = check(t, md)
            rows.append({"id": t["id"], "pdf": t["pdf"], "page": int(t.get("page", 1)), "type": t["type"],
                         "converter": name, "passed": ok, "why": error or why, "s": secs})
    return rows, {f"{k[0]}#{k[1]}#{k[2]}": v[0] for k, v in outputs.items()}


def summary(rows: list[dict], names: list[str], base: str = "pymupdf4llm") -> str:
    kinds = [k for k in KINDS if any(r["type"] == k for r in rows)]
    head = "| converter | " + " | ".join(kinds) + " | passed | × " + base + " | s/page |"
    lines = [head, "|" + "---|" * (len(kinds) + 4)]
    totals = {}
    for name in names:
        mine = [r for r in rows if r["converter"] == name]
        totals[name] = sum(r["passed"] for r in mine)
    for name in names:
        mine = [r for r in rows if r["converter"] == name]
        cells = []
        for k in kinds:
            of = [r for r in mine if r["type"] == k]
            cells.append(f"{sum(r['passed'] for r in of)}/{len(of)}")
        secs = {(r["pdf"], r["page"]): r["s"] for r in mine}
        ratio = f"{totals[name] / totals[base]:.2f}" if base in totals and totals[base] else "-"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | **{totals[name]}/{len(mine)}** | {ratio} | "
                     f"{sum(secs.values()) / max(1, len(secs)):.1f} |")
    return "\n".join(lines)


def failures(rows: list[dict], name: str) -> str:
    bad = [r for r in rows if r["converter"] == name and not r["passed"]]
    return "\n".join(f"  {r['id']:<48} {r['type']:<8} {r['why']}" for r in bad) or "  (none)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench documents --corpus units", description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", default=str(CORPUS), help="a folder with *.jsonl tests and pdfs/ (default: corpora/unittests)")
    p.add_argument("--converters", default=",".join(DEFAULT_CONVERTERS), metavar="A,B",
                   help=f"which converters, in order (default: {','.join(DEFAULT_CONVERTERS)})")
    p.add_argument("--only", default="", metavar="NAMES", help="comma-separated PDF names (or name prefixes)")
    p.add_argument("--failures", action="store_true", help="list the first converter's failed tests and why")
    p.add_argument("--json", default=None, metavar="FILE", help="write every result (and the outputs) here")
    args = p.parse_args(argv)
    from app.bench.real_corpus import CONVERTERS

    names = [n.strip() for n in args.converters.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONVERTERS]
    if unknown or not names:
        p.error(f"unknown converter {', '.join(unknown) or '(none)'}; choose from {', '.join(CONVERTERS)}")
    from app.core.base.noise import quiet_third_party

    quiet_third_party(verbose=False)
    folder = Path(args.folder)
    tests = load(folder)
    if args.only:
        keep = tuple(s.strip() for s in args.only.split(",") if s.strip())
        tests = [t for t in tests if Path(t["pdf"]).name.startswith(keep) or t["pdf"].startswith(keep)]
    if not tests:
        p.error("no tests chosen")
    rows, outputs = run(tests, names, folder, log=lambda s: print(s, file=sys.stderr, flush=True))
    print(summary(rows, names))
    if args.failures:
        print(f"\nfailed ({names[0]}):")
        print(failures(rows, names[0]))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "outputs": outputs}, ensure_ascii=False, indent=1),
                                   encoding="utf-8")
    return 0
