"""TEDS, Tree-Edit-Distance-based Similarity of two tables (Zhong, ShafieiBavani & Jimeno Yepes, "Image-based table
recognition: data, model, and evaluation", 2020 — the PubTabNet metric, also OmniDocBench's):

    TEDS(a, b) = 1 - EditDistance(tree_a, tree_b) / max(|tree_a|, |tree_b|)

over the tables' HTML trees (`table` → `thead`/`tbody` → `tr` → `td`), with APTED (the `apted` package) as the tree
edit distance: inserting or deleting a node costs 1, renaming one costs 1 unless both are cells with the same
tag, rowspan and colspan, in which case it costs the normalised Levenshtein distance of their texts. So 1.0 means
the same structure and text, and a header spanning two columns written as two cells costs more than a typo.
`structure_only` compares the trees without the text (TEDS-S).

Tables come from HTML (`<th>` rows at the top form the `thead`) or Markdown pipe tables (the first row is the
header); `page_teds` pairs a page's reference tables with the output's (best first, each output table used once).

What must never live here: converters, the corpus, anything that reads files.
"""
from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser

from apted import APTED, Config
from rapidfuzz.distance import Levenshtein

_SPACES = re.compile(r"\s+")
_PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_PIPE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_MD_MARKS = re.compile(r"(\*\*|__|`+|~~|<br\s*/?>)")


@dataclass
class Node:
    tag: str
    colspan: int = 1
    rowspan: int = 1
    text: str = ""
    children: list["Node"] = field(default_factory=list)

    def size(self) -> int:
        return 1 + sum(c.size() for c in self.children)


@dataclass
class TableCell:
    text: str
    header: bool = False
    rowspan: int = 1
    colspan: int = 1


def _norm(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", html.unescape(text))).strip()


def tree(rows: list[list[TableCell]]) -> Node:
    """Rows of cells → the table's tree; the leading rows whose cells are all header cells are its `thead`."""
    head = 0
    while head < len(rows) and rows[head] and all(c.header for c in rows[head]):
        head += 1

    def tr(row: list[TableCell]) -> Node:
        return Node("tr", children=[Node("td", c.colspan, c.rowspan, _norm(c.text)) for c in row])

    parts = []
    if head:
        parts.append(Node("thead", children=[tr(r) for r in rows[:head]]))
    parts.append(Node("tbody", children=[tr(r) for r in rows[head:]]))
    return Node("table", children=parts)


class _Config(Config):
    valuecls = float

    def __init__(self, structure_only: bool) -> None:
        self.structure_only = structure_only

    def rename(self, a: Node, b: Node) -> float:
        if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
            return 1.0
        if a.tag == "td" and not self.structure_only and (a.text or b.text):
            return Levenshtein.normalized_distance(a.text, b.text)
        return 0.0

    def children(self, node: Node) -> list[Node]:
        return node.children


def teds(a: list[list[TableCell]], b: list[list[TableCell]], structure_only: bool = False) -> float:
    """TEDS of two tables given as rows of cells: 1.0 identical, towards 0 the more they differ."""
    ta, tb = tree(a), tree(b)
    size = max(ta.size(), tb.size())
    distance = APTED(ta, tb, _Config(structure_only)).compute_edit_distance()
    return max(0.0, 1.0 - float(distance) / size)


# ---- tables out of text -----------------------------------------------------------------------------------------

class _HtmlTables(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[TableCell]]] = []
        self._stack: list[list[list[TableCell]]] = []
        self._cell: TableCell | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._stack.append([])
        elif not self._stack:
            return
        elif tag == "tr" and len(self._stack) == 1:
            self._stack[-1].append([])
        elif tag in ("td", "th") and len(self._stack) == 1:
            if not self._stack[-1]:
                self._stack[-1].append([])
            self._cell = TableCell("", tag == "th", _span(a.get("rowspan")), _span(a.get("colspan")))
            self._text = []
        elif tag == "br" and self._cell is not None:
            self._text.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._stack:
            self._cell.text = "".join(self._text)
            self._stack[-1][-1].append(self._cell)
            self._cell = None
        elif tag == "table" and self._stack:
            rows = self._stack.pop()
            if not self._stack:
                self.tables.append([r for r in rows if r])

    def handle_data(self, data):
        if self._cell is not None:
            self._text.append(data)


def _span(v) -> int:
    try:
        return max(1, int(v))
    except (TypeError, ValueError):
        return 1


def _pipe_table(lines: list[str]) -> list[list[TableCell]]:
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if not _PIPE_RULE.fullmatch(ln)]
    return [[TableCell(_MD_MARKS.sub(" ", c), header=(n == 0 and len(rows) > 1)) for c in r]
            for n, r in enumerate(rows)]


def tables_in(text: str) -> list[list[list[TableCell]]]:
    """The tables of Markdown/HTML text (HTML tables, then Markdown pipe tables), each as rows of cells; a table of
    one cell is not a table."""
    parser = _HtmlTables()
    parser.feed(text or "")
    found = list(parser.tables)
    block: list[str] = []
    for line in (text or "").splitlines() + [""]:
        if _PIPE_ROW.match(line):
            block.append(line)
        elif block:
            found.append(_pipe_table(block))
            block = []
    return [t for t in found if sum(len(r) for r in t) > 1]


def page_teds(reference: str, output: str, structure_only: bool = False) -> float | None:
    """Mean TEDS over the reference's tables, each paired with the output table that matches it best (an output
    table is used once; a reference table left without one scores 0). None when the reference has no table."""
    want, have = tables_in(reference), tables_in(output)
    if not want:
        return None
    scores = sorted(((teds(w, h, structure_only), i, j) for i, w in enumerate(want) for j, h in enumerate(have)),
                    reverse=True)
    best: dict[int, float] = {}
    used: set[int] = set()
    for s, i, j in scores:
        if i not in best and j not in used:
            best[i] = s
            used.add(j)
    return sum(best.get(i, 0.0) for i in range(len(want))) / len(want)
