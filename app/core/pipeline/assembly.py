"""Assembly (decoded regions → Markdown), per docs/architecture.md, Assembly: the one place Markdown is made,
for `convert`, the window's editor and its export alike.

Assembly rules, one function each (unit-tested one by one):
- `clean_content`: strip a leading/trailing literal `\\t` (but not `\\theta`, `\\times`), collapse runs of ≥ 3
  `.`, `·`, `_` or `\\_` to three, cut degenerate repetition loops (`cut_repetition`), tighten `$ x $` to `$x$`;
- tables: `<table>…</table>` kept verbatim (spans need HTML), anything else cleaned; an engine's table takes the
  header rows of the text layer's table where its first rows say the same (`table_markdown`); in the document, a
  table continued at the top of the next page joins the one that ended the page before (`join_page_tables`);
- formulas: `$$`, `\\[ \\]`, `\\( \\)` delimiters removed, re-wrapped as `$$\\n…\\n$$`; a formula_number block
  next to a formula (before or after) becomes ` \\tag{N}` inside it (brackets removed); an orphan number is
  dropped;
- text: an unterminated ``` fence is closed; a leading bullet (`•`, `·`, `●`, `▪`, `◦`, `➢`…, the private-use codes
  of Symbol's and Wingdings' bullets that Word's PDFs carry, or `* `) becomes `- `; `(1)`/`（a）` and `1.`/`a)`/
  `1）` get one space after the marker; single newlines become blank lines;
- headings: doc_title → `# `, paragraph_title → `## ` (leading #'s and bullets removed);
- pictures: an image link to the saved crop; empty non-picture blocks are dropped;
- blocks are joined by a blank line; pages are preceded by an anchor `<a id="page-N"></a>` (1-based).

What must never live here: decoding, rendering, file writing (the pipeline saves picture crops).
"""
from __future__ import annotations

import re
from typing import Iterable

from app.core.base.stages import timed
from app.core.document.regions import Region

# --- cleaning ---------------------------------------------------------------------------------------------------

_EDGE_TAB_START = re.compile(r"^(?:\\t(?![a-z]))+")
_EDGE_TAB_END = re.compile(r"(?:\\t(?![a-z]))+$")
_DOT_RUNS = re.compile(r"(\\_|[._·])\1{3,}")
_INLINE_FORMULA = re.compile(r"(?<![\$\\])\$(?!\$)[ \t]*([^$\n]*?[^$\s])[ \t]*(?<!\\)\$(?!\$)")


def collapse_runs(text: str) -> str:
    """Runs of ≥ 3 of `.`, `·`, `_` or `\\_` become exactly three (leaders in tables of contents, fill-in blanks)."""
    return _DOT_RUNS.sub(lambda m: m.group(1) * 3, text)


def cut_repetition(text: str, min_repeats: int = 8, min_span: int = 40, max_unit: int = 200) -> str:
    """Cut a degenerate repetition loop at the end of `text` (a decoder stuck repeating a unit until its token
    limit): when the text ends with ≥ `min_repeats` consecutive copies of one unit spanning ≥ `min_span` chars,
    keep a single copy."""
    n = len(text)
    best = None
    for unit_len in range(1, min(max_unit, n // min_repeats) + 1):
        unit = text[n - unit_len:]
        if not unit.strip():
            continue
        count, pos = 1, n - unit_len
        while pos - unit_len >= 0 and text[pos - unit_len:pos] == unit:
            count += 1
            pos -= unit_len
        if count >= min_repeats and count * unit_len >= min_span:
            best = (pos, unit)
            break  # the shortest repeating unit
    if best is None:
        return text
    pos, unit = best
    return (text[:pos] + unit).rstrip()


def normalize_inline_formula(text: str) -> str:
    """`$ x $` → `$x$` (display `$$` untouched)."""
    return _INLINE_FORMULA.sub(lambda m: f"${m.group(1)}$", text)


def clean_content(text: str) -> str:
    text = _EDGE_TAB_START.sub("", text)
    text = _EDGE_TAB_END.sub("", text)
    text = collapse_runs(text)
    text = cut_repetition(text)
    text = normalize_inline_formula(text)
    return text.strip()


# --- per task -----------------------------------------------------------------------------------------------------

def format_table(text: str) -> str:
    t = text.strip()
    if t.startswith("<table") and t.endswith("</table>"):
        return t
    return clean_content(t)


_FORMULA_WRAPPERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))


def formula_body(text: str) -> str:
    t = text.strip()
    if not (t.startswith("$$") and t.endswith("$$")):
        t = clean_content(t)
    for start, end in _FORMULA_WRAPPERS:
        if t.startswith(start) and t.endswith(end) and len(t) >= len(start) + len(end):
            t = t[len(start):len(t) - len(end)].strip()
            break
    return t


def format_formula(text: str, tag: str | None = None) -> str:
    body = formula_body(text)
    if not body:
        return ""
    if tag:
        body = f"{body} \\tag{{{tag}}}"
    return f"$$\n{body}\n$$"


# list bullets: Unicode's, and the private-use codes a Symbol or Wingdings bullet is extracted as when its font
# maps no Unicode (Word's PDFs: U+F0B7 Symbol's bullet, U+F0A7 and U+F06E squares, U+F06C a disc, U+F076 ❖,
# U+F0D8 ➢); check marks and boxes are left alone (a checklist's marks mean something)
BULLETS = "•·●▪■◦‣➢➤►▸❖◆\uf0b7\uf0a7\uf06e\uf06c\uf076\uf0d8"
_BULLET = re.compile(rf"^[ \t]*(?:[{BULLETS}]|\*(?=\s))[ \t]*", re.M)
_PAREN_MARKER = re.compile(r"^([(（])([0-9]+|[A-Za-z])([)）])[ \t]*(?=\S)", re.M)
_NUM_MARKER = re.compile(r"^(?:([0-9]+)([.)）])|([A-Za-z])([)）]))(?=[^\s.\d)）])", re.M)


def _number_marker(m: re.Match) -> str:
    if m.group(1) is not None:
        return f"{m.group(1)}{'.' if m.group(2) == '.' else ')'} "
    return f"{m.group(3)}) "


def format_text(text: str) -> str:
    t = clean_content(text)
    if t.count("```") % 2 == 1:
        t += "\n```"
    t = _BULLET.sub("- ", t)
    t = _PAREN_MARKER.sub(lambda m: f"({m.group(2)}) ", t)
    t = _NUM_MARKER.sub(_number_marker, t)
    t = re.sub(r"(?<!\n)\n(?!\n)", "\n\n", t)
    return t.strip()


def format_heading(text: str, level: int) -> str:
    t = clean_content(text)
    t = re.sub(r"^(?:[-*][ \t]+)", "", t) if level > 1 else t
    t = t.lstrip("#").strip()
    t = " ".join(t.split())  # a heading is one line
    return f"{'#' * level} {t}" if t else ""


def format_block(region: Region, tag: str | None = None, picture_path: str | None = None) -> str:
    """The Markdown of one block ('' when it contributes nothing)."""
    task = region.task
    if task == "skipped":
        return ""
    if task == "picture":
        return f"![{_picture_alt(region)}]({picture_path})" if picture_path else ""
    text = region.text or ""
    if task == "table":
        return table_markdown(region)
    if task == "formula":  # one whose LaTeX could not be rebuilt, or an OCR reading, is plain text
        return format_text(text) if formula_problem(region) else format_formula(text, tag)
    if region.label == "doc_title":
        return format_heading(text, 1)
    if region.label == "paragraph_title":
        return format_heading(text, 2)
    return format_text(text)


SCANNED_FORMULA = "formula read from the image: not read as LaTeX"


def formula_problem(region: Region) -> str | None:
    """Why a formula block has no LaTeX to trust (None: it has): the text layer's own reason
    (`stats["formula_problem"]`: app.core.pipeline.text_source.formula_latex), or `SCANNED_FORMULA` when a
    recogniser that writes no LaTeX (its spec's `reads_formulas` false: classic, the built-in engine) read it
    from the image — OCR fragments of a formula, never to be written as if they were one. Worked out from what
    the block's events carry (its stats, the engine that read it), so the window and `convert` agree."""
    stats = region.extra.get("stats")
    if region.task != "formula" or not stats:
        return None
    if stats.get("formula_problem"):
        return str(stats["formula_problem"])
    if stats.get("text_source", "ocr") != "ocr":
        return None
    from app.core.engines import ENGINES

    spec = ENGINES.get(str(stats.get("engine") or region.extra.get("engine") or ""))
    return SCANNED_FORMULA if spec is not None and not spec.reads_formulas else None


def table_markdown(region: Region) -> str:
    """A table's HTML; an engine's reading of a born-digital table takes the header rows the text layer's table
    shows there (`extra["layer_table"]`, the table finder's HTML: app.core.text.tables.adopt_header). Made here, in
    the one assembler, so that the window (which rebuilds blocks from events) and `convert` write the same table;
    the region's own text stays the engine's reading."""
    html = format_table(region.text or "")
    layer = region.extra.get("layer_table")
    if layer and html.startswith("<table"):
        from app.core.text.tables import adopt_header

        return adopt_header(html, layer)
    return html


def _picture_alt(region: Region) -> str:
    return f"{'Chart' if region.label == 'chart' else 'Figure'} {region.id}"


def formula_tag(text: str) -> str:
    """`(3)` / `（3）` / `3` → `3`."""
    t = text.strip().strip("$").strip()
    t = re.sub(r"^[(（]\s*|\s*[)）]$", "", t)
    return t.strip()


# --- pages and documents --------------------------------------------------------------------------------------

def assemble_blocks(regions: Iterable[Region], picture_paths: dict[str, str] | None = None,
                    edits: dict[str, str] | None = None) -> dict[str, str]:
    """Region id → its Markdown for one page's regions (in reading order), with formula numbers merged into the
    neighbouring formula and empty blocks left out. `edits` (region id → Markdown a person wrote) replace the
    assembled Markdown of their blocks."""
    picture_paths = picture_paths or {}
    edits = edits or {}
    regs = [r for r in regions if r.task != "skipped"]
    tags: dict[str, str] = {}
    consumed: set[str] = set()
    for i, r in enumerate(regs):
        if r.label != "formula_number":
            continue
        tag = formula_tag(r.text or "")
        consumed.add(r.id)  # merged or orphaned: never a block of its own
        if not tag:
            continue
        for j in (i - 1, i + 1):  # the formula before, else the one after
            if 0 <= j < len(regs) and regs[j].task == "formula" and regs[j].id not in tags:
                tags[regs[j].id] = tag
                break
    out: dict[str, str] = {}
    for r in regs:
        if r.id in consumed:
            continue
        md = edits[r.id] if r.id in edits else format_block(r, tags.get(r.id), picture_paths.get(r.id))
        if md.strip():
            out[r.id] = md
    return out


def assemble_page(regions: Iterable[Region], picture_paths: dict[str, str] | None = None,
                  edits: dict[str, str] | None = None) -> str:
    return "\n\n".join(assemble_blocks(regions, picture_paths, edits).values())


def page_anchor(page: int) -> str:
    """The anchor line placed before page `page` (0-based) in the Markdown."""
    return f'<a id="page-{page + 1}"></a>'


@timed("assembly")
def assemble_document(
    pages: Iterable[tuple[int, Iterable[Region]]], picture_paths: dict[str, str] | None = None, *, anchors: bool = True,
    edits: dict[str, str] | None = None,
) -> str:
    laid = []
    for page, regions in pages:
        regions = list(regions)
        laid.append((page, {r.id: r for r in regions}, assemble_blocks(regions, picture_paths, edits)))
    join_page_tables(laid)
    parts = []
    for page, _, blocks in laid:
        body = "\n\n".join(blocks.values())
        parts.append(f"{page_anchor(page)}\n\n{body}" if anchors else body)
    return "\n\n".join(p.rstrip() for p in parts if p.strip()).rstrip() + "\n"


def join_page_tables(laid: list[tuple[int, dict[str, Region], dict[str, str]]]) -> None:
    """A table that ends a page and one that starts the next (nothing of the body above it: headers and footers are
    left out already) over the same columns are one table run over the page break: the continuation's rows join
    the first block, its repeated header dropped, each row marked with its page (app.core.text.table_pages); in
    place, on (page, regions by id, blocks) per page. The JSON keeps each page's own block."""
    from app.core.text.table_pages import join_continued

    for (page, regs, blocks), (nxt, nregs, nblocks) in zip(laid, laid[1:]):
        if nxt != page + 1 or not blocks or not nblocks:
            continue
        last, first = list(blocks)[-1], next(iter(nblocks))
        a, b = regs[last], nregs[first]
        if a.task != "table" or b.task != "table" or not _same_columns(a.box_pt, b.box_pt):
            continue
        merged = join_continued(blocks[last], nblocks[first], nxt + 1)
        if merged is not None:
            blocks[last] = merged
            del nblocks[first]


def _same_columns(a, b) -> bool:
    """Do two tables' boxes (points) stand over the same stretch of their pages, most of the narrower one's width?"""
    overlap = min(a[2], b[2]) - max(a[0], b[0])
    return overlap >= 0.8 * min(a[2] - a[0], b[2] - b[0])
