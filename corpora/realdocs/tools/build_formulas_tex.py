"""Formula pages for corpora/realdocs compiled here from public LaTeX sources (run as
`python build_formulas_tex.py OUT`, each repository fetched as a bare git directory under
/work/.mirror/OWNER+NAME/repo). Not part of the app.

Unlike build_formulas.py (which cuts the repository's own PDF), these sources ship no usable PDF or need
classes and packages this machine's TeX Live lacks (IEEEtran, exam, SciPost, tcolorbox, forloop, cleveref),
so each page is set here with pdfTeX: `article` (two columns where the source is a two-column journal), the
source's one-line macro definitions and theorem declarations, a few stand-ins for the missing commands
(SHIMS, layout only), and contiguous excerpts of the source's body (line ranges at the commit), with
`\\clearpage` and `\\vspace{\\stretch…}` lines dropped. The reference is made as in build_formulas.py: the
displays of that composed text (macros with and without arguments expanded, labels dropped) matched in order
with the display runs found on the compiled pages, the prose the pages' text layer in reading order.
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pymupdf

import build_formulas as bf

OUT = Path(sys.argv[1])
_CREF = r"\newcommand{\cref}[1]{(\ref{#1})}\newcommand{\Cref}[1]{(\ref{#1})}"
SOURCES = {  # id prefix → spec
    "f03-execution-ieee": dict(
        repo="000zer000/robust-ml-optimal-execution", commit="98edbaa", tex="paper/main.tex", licence="MIT",
        licence_file="LICENSE", lines=[(119, 170), (287, 316), (320, 350)], options="10pt,twocolumn",
        shims=_CREF, kind="two-column journal paper (IEEEtran in the source), aligned sums, fractions, "
                          "\\left…\\right groups"),
    "f04-lds-notes": dict(
        repo="memming/linear-algebra-and-dynamics-lectures", commit="c2c7715", tex="lecture_notes.tex",
        licence="CC-BY-4.0", licence_file="README.md", lines=[(240, 328), (990, 1075)], options="11pt",
        shims=r"\newenvironment{questions}{}{}\newcommand{\question}{\par\noindent\textbf{Question.} }"
              r"\newenvironment{parts}{\begin{enumerate}}{\end{enumerate}}\renewcommand{\part}{\item}"
              r"\newenvironment{tcolorbox}[1][]{\par}{\par}"
              + "".join(rf"\newcommand{{\v{c}}}{{\mathbf{{{c}}}}}" for c in "abcdefghijklmnopqrstuvwxyz"),
        kind="lecture notes (exam class in the source): bracketed matrices, cases, sums with limits"),
    "f05-sbi-notes": dict(
        repo="EiffL/LesHouches2025", commit="82a3a1b", tex="notes/main.tex", licence="CC-BY-4.0",
        licence_file="README.md", lines=[(120, 137), (246, 330)], options="11pt", shims="",
        kind="lecture notes (SciPost class in the source): integrals, products, boxed and aligned "
             "probability formulas"),
}
_DEF = re.compile(r"^\\(newcommand|renewcommand|providecommand|DeclareMathOperator|newtheorem|theoremstyle)")
_NEWCMD = re.compile(r"\\(?:new|renew|provide)command\*?\{(\\[A-Za-z]+)\}(?:\[(\d)\])?\{")
_OPERATOR = re.compile(r"\\DeclareMathOperator(\*?)\{(\\[A-Za-z]+)\}\{")


def _braced(text: str, i: int) -> tuple[str, int]:
    """The group opening at text[i] == '{' (without its braces) and the index after it."""
    depth, j = 0, i
    while j < len(text):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j], j + 1
        j += 2 if text[j] == "\\" else 1
    return text[i + 1:], len(text)


def macros(preamble: str) -> dict[str, tuple[int, str]]:
    """name → (argument count, body) for the preamble's \\newcommand and \\DeclareMathOperator lines."""
    out = {}
    for m in _NEWCMD.finditer(preamble):
        out[m.group(1)] = (int(m.group(2) or 0), _braced(preamble, m.end() - 1)[0])
    for m in _OPERATOR.finditer(preamble):
        out[m.group(2)] = (0, rf"\operatorname{m.group(1)}{{{_braced(preamble, m.end() - 1)[0]}}}")
    return out


def expand(latex: str, defs: dict[str, tuple[int, str]], rounds: int = 4) -> str:
    """`latex` with the macros of `defs` replaced by their bodies (arguments braced or single tokens)."""
    for _ in range(rounds):
        out, i, changed = [], 0, False
        while i < len(latex):
            m = re.compile(r"\\[A-Za-z]+").match(latex, i)
            if not m or m.group() not in defs:
                out.append(latex[i:m.end()] if m else latex[i])
                i = m.end() if m else i + 1
                continue
            n, body = defs[m.group()]
            i, args = m.end(), []
            for _k in range(n):
                while i < len(latex) and latex[i] == " ":
                    i += 1
                if i < len(latex) and latex[i] == "{":
                    arg, i = _braced(latex, i)
                else:
                    arg, i = latex[i:i + 1], i + 1
                args.append(arg)
            for k, arg in enumerate(args, 1):
                body = body.replace(f"#{k}", arg)
            out.append("{" + body + "}" if n else body + " ")
            changed = True
        latex = "".join(out)
        if not changed:
            break
    return latex


def compose(spec) -> str:
    mirror = spec["repo"].replace("/", "+")
    src = bf.git(mirror, "show", f"{spec['commit']}:{spec['tex']}").decode()
    lines = src.splitlines()
    head = src.split(r"\begin{document}", 1)[0]
    skip = ("forLoop", "\\defvec", "\\defrv", "rulewidth")  # loops over packages missing here; page style
    defs = [ln for ln in head.splitlines() if _DEF.match(ln.strip()) and not any(k in ln for k in skip)]
    body = [ln for a, b in spec["lines"] for ln in lines[a - 1:b]
            if not re.match(r"\s*\\(clearpage|vspace\{\\stretch)", ln)]
    return "\n".join([rf"\documentclass[{spec['options']}]{{article}}",
                      r"\usepackage[margin=2cm]{geometry}\usepackage{amsmath,amssymb,amsthm,bm}",
                      r"\usepackage{graphicx}\usepackage{url}", spec["shims"], *defs,
                      r"\pagestyle{empty}\begin{document}", *body, r"\end{document}", ""])


def displays(tex: str) -> list[str]:
    body = tex.split(r"\begin{document}", 1)[-1]
    body = re.sub(r"(?<!\\)%.*", "", body)
    defs = macros(tex.split(r"\begin{document}", 1)[0])
    out = []
    for m in bf._DISPLAY.finditer(body):
        latex = next(g for g in (m.group(1), m.group(2), m.group(4)) if g is not None)
        latex = expand(re.sub(r"\\label\{[^}]*\}", "", latex), defs)
        env = m.group(3)
        if env and env.startswith(("align", "gather", "multline")):
            latex = rf"\begin{{{env.rstrip('*')}*}}{latex}\end{{{env.rstrip('*')}*}}"
        out.append(" ".join(latex.split()))
    return out


class _Column:
    """One column of a two-column page, as bf.page_items reads a page."""

    def __init__(self, page, left: bool):
        self.rect, self._page = page.rect, page
        mid = page.rect.width / 2
        self._clip = pymupdf.Rect(0, 0, mid, page.rect.height) if left else \
            pymupdf.Rect(mid, 0, page.rect.width, page.rect.height)

    def get_text(self, kind):
        return self._page.get_text(kind, clip=self._clip)


def _items(page, columns: int) -> list[tuple[str, str]]:
    if columns == 1:
        return bf.page_items(page)
    return [it for left in (True, False) for it in bf.page_items(_Column(page, left))]


def build(pid, spec) -> list[dict]:
    mirror = spec["repo"].replace("/", "+")
    full = bf.git(mirror, "rev-parse", spec["commit"]).decode().strip()
    tex = compose(spec)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "page.tex").write_text(tex, encoding="utf-8")
        for _ in range(2):
            subprocess.run(["nice", "-n", "19", "pdflatex", "-interaction=nonstopmode", "page.tex"], cwd=tmp,
                           capture_output=True, timeout=300)
        errors = [ln for ln in (Path(tmp) / "page.log").read_text(errors="replace").splitlines()
                  if ln.startswith("! ")]
        if errors:
            raise SystemExit(f"{pid}: pdfTeX stopped on {errors[0]}")
        doc = pymupdf.open(Path(tmp) / "page.pdf")
    formulas = displays(tex)
    per_page = [_items(p, 2 if "twocolumn" in spec["options"] else 1) for p in doc]
    found = sum(1 for items in per_page for kind, _ in items if kind == "display")
    if found != len(formulas):
        for i, items in enumerate(per_page):
            print(i, [t for k, t in items if k == "display"], file=sys.stderr)
        raise SystemExit(f"{pid}: {found} display runs on the pages, {len(formulas)} displays in the source")
    rows, k = [], 0
    for index, items in enumerate(per_page[:2]):
        md = []
        for kind, text in items:
            if kind == "display":
                md.append(f"$$\n{formulas[k]}\n$$")
                k += 1
            else:
                md.append(("## " if kind == "heading" else "") + text)
        page_id = f"{pid}-p{index + 1}"
        one = pymupdf.open()
        one.insert_pdf(doc, from_page=index, to_page=index)
        one.save(OUT / "pages" / f"{page_id}.pdf", garbage=3, deflate=True)
        (OUT / "refs" / f"{page_id}.md").write_text("\n\n".join(md) + "\n", encoding="utf-8")
        ranges = ", ".join(f"{a}–{b}" for a, b in spec["lines"])
        rows.append({"id": page_id, "file": f"pages/{page_id}.pdf", "page": 0, "kind": "born-digital",
                     "script": "latin", "features": ["formula"],
                     "source": {"repo": spec["repo"], "path": spec["tex"], "commit": full, "lines": ranges,
                                "url": f"https://github.com/{spec['repo']}/blob/{full}/{spec['tex']}",
                                "licence_file": spec["licence_file"]},
                     "licence": spec["licence"], "reference": f"refs/{page_id}.md",
                     "reference_made": "display formulas: the source's LaTeX (lines " + ranges + " of "
                     + spec["tex"] + "; labels dropped, the source's macros expanded), matched in order with "
                     "the display runs of the compiled pages; prose: the page's text layer in reading order "
                     "(inline math as the layer spells it) (tools/build_formulas_tex.py)",
                     "note": "set here with pdfTeX from the source's excerpt in article class ("
                     + spec["kind"] + "); stand-ins for commands of packages missing here, layout only"})
    return rows


if __name__ == "__main__":
    (OUT / "pages").mkdir(parents=True, exist_ok=True)
    (OUT / "refs").mkdir(parents=True, exist_ok=True)
    print(json.dumps([row for pid, spec in SOURCES.items() for row in build(pid, spec)], indent=1))
