"""Formula pages for corpora/realdocs from papers whose LaTeX source and PDF sit in one public repository (run
as `python build_formulas.py OUT`, each repository fetched as a bare git directory under
/work/.mirror/OWNER+NAME/repo). Not part of the app.

Per page: the page cut from the repository's own PDF (pdfTeX's output, as committed), and a reference whose
display formulas are the paper's LaTeX source — the ground truth a converter's LaTeX is scored against
(app.bench.formula_score) — and whose prose is the page's text layer in reading order (inline math as the
layer spells it). The displays of the source (`\\[…\\]`, equation, align, gather, `$$`; labels dropped, the
paper's own argument-free macros expanded) are matched in order with the display runs found on the PDF's pages
(lines set apart and centred in the text column with math fonts in them); the two counts must agree for the
whole document, else the script stops. Headings (bold sans-serif-free CMBX lines) get `##`; the page number is
left out.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pymupdf

OUT = Path(sys.argv[1])
M = "/work/.mirror"
SOURCES = {  # id prefix → (repo, mirror, commit, pdf, main tex, licence, pages)
    "f01-zeta-pressure": ("AMTOPA/zeta-exact-pressure", "AMTOPA+zeta-exact-pressure", "6261c44",
                          "paper/main.pdf", "paper/main.tex", "MIT", (0, 1, 2)),
    "f02-curvature-info": ("ANTHONY-OLEVESTER/quantum_unified", "ANTHONY-OLEVESTER+quantum_unified",
                           "86a06a7", "paper/main.pdf", "paper/main.tex", "BSD-3-Clause", (4, 5)),
}
_DISPLAY = re.compile(r"\\\[(.+?)\\\]|\$\$(.+?)\$\$"
                      r"|\\begin\{(equation\*?|align\*?|gather\*?|multline\*?)\}(.+?)\\end\{\3\}", re.S)
_MATH_FONT = re.compile(r"CMMI|CMSY|CMEX|MSBM|MSAM")


def git(mirror, *args) -> bytes:
    return subprocess.run(["git", "--git-dir", f"{M}/{mirror}/repo", *args], capture_output=True,
                          check=True).stdout


def source_text(mirror, commit, path) -> str:
    """The main .tex with its \\input files inlined, comments dropped."""
    folder = path.rsplit("/", 1)[0]
    text = git(mirror, "show", f"{commit}:{path}").decode()

    def inline(m):
        name = m.group(1) if m.group(1).endswith(".tex") else m.group(1) + ".tex"
        return source_text(mirror, commit, f"{folder}/{name}")

    text = re.sub(r"(?<!\\)%.*", "", text)
    return re.sub(r"\\input\{([^}]+)\}", inline, text)


def displays(tex: str) -> list[str]:
    body = tex.split(r"\begin{document}", 1)[-1]
    macros = dict(re.findall(r"\\newcommand\{(\\[A-Za-z]+)\}\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}", tex))
    out = []
    for m in _DISPLAY.finditer(body):
        latex = next(g for g in (m.group(1), m.group(2), m.group(4)) if g is not None)
        latex = re.sub(r"\\label\{[^}]*\}", "", latex)
        for name, value in sorted(macros.items(), key=lambda kv: -len(kv[0])):
            latex = re.sub(re.escape(name) + r"(?![A-Za-z])", lambda _m, v=value: v, latex)
        env = m.group(3)
        if env and env.startswith(("align", "gather", "multline")):  # several lines keep their shape
            latex = rf"\begin{{{env.rstrip('*')}*}}{latex}\end{{{env.rstrip('*')}*}}"
        out.append(" ".join(latex.split()))
    return out


def _line_text(line) -> str:
    return "".join(s["text"] for s in line["spans"]).strip()


def _rows(page) -> list[dict]:
    """The page's visual rows: lines that share a band (a script's line overlaps its base line's band)."""
    lines = [ln for b in page.get_text("dict")["blocks"] if b.get("type") == 0 for ln in b["lines"]
             if _line_text(ln)]
    rows: list[dict] = []
    for ln in sorted(lines, key=lambda ln: ln["bbox"][1]):
        x0, y0, x1, y1 = ln["bbox"]
        row = next((r for r in rows
                    if min(y1, r["y1"]) - max(y0, r["y0"]) >= 0.5 * min(y1 - y0, r["y1"] - r["y0"])), None)
        if row is None:
            rows.append({"y0": y0, "y1": y1, "lines": [ln]})
        else:
            row["y0"], row["y1"] = min(row["y0"], y0), max(row["y1"], y1)
            row["lines"].append(ln)
    for r in rows:
        r["lines"].sort(key=lambda ln: ln["bbox"][0])
        r["x0"], r["x1"] = r["lines"][0]["bbox"][0], max(ln["bbox"][2] for ln in r["lines"])
        r["text"] = " ".join(_line_text(ln) for ln in r["lines"])
        r["fonts"] = [s["font"] for ln in r["lines"] for s in ln["spans"] if s["text"].strip()]
    return sorted(rows, key=lambda r: r["y0"])


def page_items(page) -> list[tuple[str, str]]:
    """("text" | "heading" | "display", text) in reading order; a display: a run of centred rows with math."""
    rows = _rows(page)
    left, right = min(r["x0"] for r in rows), max(r["x1"] for r in rows)
    mid, width = (left + right) / 2, right - left
    items: list[tuple[str, str]] = []
    last = None  # the previous row when it was part of a display
    prev_row = None  # the previous row of prose
    for r in rows:
        text = r["text"]
        if r["y0"] > page.rect.height - 80 and text.isdigit():
            continue  # the page number
        prose = sum(len(re.findall(r"[A-Za-z]{4,}", s["text"])) for ln in r["lines"] for s in ln["spans"]
                    if not _MATH_FONT.search(s["font"]))
        centred = r["x0"] > left + 25 and abs((r["x0"] + r["x1"]) / 2 - mid) < 0.25 * width \
            and r["x1"] - r["x0"] < (0.8 if prose >= 3 else 0.95) * width
        close = last is not None and r["y0"] - last["y1"] < 7
        caption = re.match(r"(Figure|Table|Fig\.) \d", text) or any("CMR17" in f or "CMR12" in f
                                                                       for f in r["fonts"])
        if centred and not caption and (any(_MATH_FONT.search(f) for f in r["fonts"]) or close):
            if close and items and items[-1][0] == "display":
                items[-1] = ("display", items[-1][1] + " " + text)
            else:
                items.append(("display", text))
            last = r
            continue
        if centred and not caption and len(text) <= 14 and not prose and r is not rows[-1]:
            nxt = rows[rows.index(r) + 1]
            if nxt["y0"] - r["y1"] < 7:
                items.append(("display", text))  # a display's top (a limit, a numerator): rows below join
                last = r
                continue
        last = None
        if all("CMBX12" in f or "CMBX10" in f for f in r["fonts"]) and len(text) < 90 and r["x0"] < left + 5:
            items.append(("heading", text))
        elif items and items[-1][0] == "text" and prev_row is not None and r["y0"] - prev_row["y1"] < 6 and (
                r["x0"] < left + 5 or r["x0"] < prev_row["x0"] + 3):  # the same margin, or under an indent
            prev = items[-1][1]
            joined = prev[:-1] + text if prev.endswith("-") and text[:1].islower() else f"{prev} {text}"
            items[-1] = ("text", joined)
        else:
            items.append(("text", text))
        prev_row = r
    return items


def build(pid, spec) -> list[dict]:
    repo, mirror, commit, pdf_path, tex_path, licence, pages = spec
    full = git(mirror, "rev-parse", commit).decode().strip()
    tex = displays(source_text(mirror, commit, tex_path))
    doc = pymupdf.open("pdf", git(mirror, "show", f"{commit}:{pdf_path}"))
    per_page = [page_items(p) for p in doc]
    found = sum(1 for items in per_page for kind, _ in items if kind == "display")
    if found != len(tex):
        for i, items in enumerate(per_page):
            print(i, [t for k, t in items if k == "display"], file=sys.stderr)
        raise SystemExit(f"{pid}: {found} display runs on the pages, {len(tex)} displays in the source")
    rows, k = [], 0
    for index, items in enumerate(per_page):
        md = []
        for kind, text in items:
            if kind == "display":
                md.append(f"$$\n{tex[k]}\n$$")
                k += 1
            else:
                md.append(("## " if kind == "heading" else "") + text)
        if index not in pages:
            continue
        page_id = f"{pid}-p{index + 1}"
        one = pymupdf.open()
        one.insert_pdf(doc, from_page=index, to_page=index)
        one.save(OUT / "pages" / f"{page_id}.pdf", garbage=3, deflate=True)
        (OUT / "refs" / f"{page_id}.md").write_text("\n\n".join(md) + "\n", encoding="utf-8")
        rows.append({"id": page_id, "file": f"pages/{page_id}.pdf", "page": 0, "kind": "born-digital",
                     "script": "latin", "features": ["formula"],
                     "source": {"repo": repo, "path": pdf_path, "commit": full, "page": index},
                     "licence": licence, "reference": f"refs/{page_id}.md",
                     "reference_made": "display formulas: the paper's LaTeX source (" + tex_path
                     + " and its \\input files at the same commit; labels dropped, the paper's "
                     "argument-free macros expanded), matched in order with the display runs of the PDF; "
                     "prose: the page's text layer in reading order (inline math as the layer spells it), "
                     "page number left out (tools/build_formulas.py)",
                     "note": "pdfTeX output as committed in the repository"})
    return rows


if __name__ == "__main__":
    (OUT / "pages").mkdir(parents=True, exist_ok=True)
    (OUT / "refs").mkdir(parents=True, exist_ok=True)
    print(json.dumps([row for pid, spec in SOURCES.items() for row in build(pid, spec)], indent=1))
