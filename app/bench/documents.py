"""`python -m app bench documents [DIR] [--quick] [--corpus generated|real|units|all]`: our default pipeline beside a plain `pymupdf4llm.to_markdown`
on a folder of PDFs, each with its expected text (`<stem>.txt`, the text in reading order, one block a line).

When DIR holds no PDFs (or is not given: a temporary folder), the generated corpus is written there first
(app.bench.documents_corpus: two columns, a table with spans, a noisy skewed scan, a scan under a wrong invisible
OCR layer, a page whose layer disagrees with its image). Each converter reads every document once untimed first
(models loaded, the layout process started), then once timed. Per converter and document:

- pages/s — pages over the timed conversion's wall time;
- recall — the share of expected words (case-folded, as a multiset) found in the output;
- edit — the Levenshtein distance between the expected text and the output's text (markup stripped, whitespace
  collapsed), over the expected length: order matters here (columns read across score badly);
- tables — `<table>` blocks (ours) or Markdown tables (pymupdf4llm) in the output.

Ours is what `convert` does by default (engine auto, layout auto, `--text-layer prefer`). --quick: the first three
documents only.
"""
from __future__ import annotations

import argparse
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

_MD_TABLE = re.compile(r"^\|?\s*:?-{3,}", re.M)
_MD_NOISE = re.compile(r"!\[[^\]]*\]\([^)]*\)|[|*#`]|^-{3,}$|<[^>]+>", re.M)
_WORDS = re.compile(r"\w+(?:[.,']\w+)*")


def plain(text: str) -> str:
    """Output Markdown/HTML → plain text (image links, tags, table pipes, emphasis and heading marks removed)."""
    from app.core.text.textlayer import normalise

    return normalise(_MD_NOISE.sub(" ", text))


def recall(expected: str, got: str) -> float:
    want = Counter(w.lower() for w in _WORDS.findall(expected))
    have = Counter(w.lower() for w in _WORDS.findall(got))
    total = sum(want.values())
    return sum(min(n, have[w]) for w, n in want.items()) / total if total else 1.0


def edit(expected: str, got: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref = plain(expected)
    return Levenshtein.distance(ref, plain(got)) / max(1, len(ref))


_MODELS: dict[str, object] = {"engine": None, "layout": None}  # loaded once, as `convert` keeps them


def ours(pdf: Path) -> tuple[str, int, int]:
    """(Markdown, pages, tables) of our default conversion."""
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(text_layer="prefer"), engine=_MODELS["engine"], layout=_MODELS["layout"])
    try:
        out = pipe.run(pdf)
        _MODELS["engine"], _MODELS["layout"] = pipe.engine, pipe.layout
        md = out.to_markdown(anchors=False)
        return md, len(out.pages), md.count("<table")
    finally:
        pipe.close()


def plain_pymupdf4llm(pdf: Path) -> tuple[str, int, int]:
    import pymupdf

    from app.core.layout.budget import _quiet

    with _quiet():
        import pymupdf4llm

        md = pymupdf4llm.to_markdown(str(pdf), show_progress=False)
    with pymupdf.open(str(pdf)) as doc:
        pages = doc.page_count
    return md, pages, len(_MD_TABLE.findall(md))


CONVERTERS = {"scriptorium": ours, "pymupdf4llm": plain_pymupdf4llm}


def measure(pdfs: list[Path]) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for name, convert in CONVERTERS.items():
        convert(pdfs[0])  # warm: models loaded, the layout process started
        rows[name] = []
        for pdf in pdfs:
            expected = pdf.with_suffix(".txt").read_text(encoding="utf-8")
            t0 = time.perf_counter()
            md, pages, tables = convert(pdf)
            s = time.perf_counter() - t0
            rows[name].append({"doc": pdf.stem, "pages": pages, "s": s, "recall": recall(expected, md),
                               "edit": edit(expected, md), "tables": tables})
    return rows


def table(rows: dict[str, list[dict]]) -> str:
    names = list(rows)
    head = "| document | " + " | ".join(f"{n} pages/s | {n} recall | {n} edit | {n} tables" for n in names) + " |"
    lines = [head, "|" + "---|" * (1 + 4 * len(names))]
    docs = [r["doc"] for r in rows[names[0]]]
    for k, doc in enumerate(docs + ["all"]):
        cells = []
        for n in names:
            rs = rows[n] if doc == "all" else [rows[n][k]]
            pages, secs = sum(r["pages"] for r in rs), sum(r["s"] for r in rs)
            cells += [f"{pages / secs:.2f}" if secs else "-", f"{sum(r['recall'] for r in rs) / len(rs):.3f}",
                      f"{sum(r['edit'] for r in rs) / len(rs):.3f}", str(sum(r["tables"] for r in rs))]
        lines.append(f"| {doc} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench documents", description=__doc__.split("\n\n")[0])
    p.add_argument("folder", nargs="?", help="PDFs with <stem>.txt expected texts (default: the generated corpus)")
    p.add_argument("--quick", action="store_true", help="the first three documents only")
    p.add_argument("--corpus", choices=("generated", "real", "units", "all"), default="generated",
                   help="generated (default), real: corpora/realdocs (app.bench.real_corpus; see its --help), "
                        "units: corpora/unittests' page unit tests (app.bench.unit_corpus), all: generated and real")
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--corpus", choices=("generated", "real", "units", "all"), default="generated")
    corpus, argv = pre.parse_known_args(argv)
    if corpus.corpus == "units":
        from app.bench.unit_corpus import main as units

        return units(argv)
    if corpus.corpus != "generated":
        from app.bench.real_corpus import main as real

        code = real(argv)
        if corpus.corpus == "real" or code:
            return code
        print()
        argv = [a for a in argv if a == "--quick"]
    args = p.parse_args(argv)
    from app.bench.documents_corpus import make_corpus
    from app.core.base.noise import quiet_third_party

    quiet_third_party(verbose=False)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.folder) if args.folder else Path(tmp)
        pdfs = sorted(p for p in folder.glob("*.pdf") if p.with_suffix(".txt").exists()) if folder.exists() else []
        if not pdfs:
            pdfs = make_corpus(folder)
        if args.quick:
            pdfs = pdfs[:3]
        print(table(measure(pdfs)))
    return 0
