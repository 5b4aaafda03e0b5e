"""A table that runs over a page break, joined into one: the continuation's rows appended to the table before
it.

    merged = join_continued(first_html, next_html, page=2)   # one <table>, or None when next is another table

The continuation is the same table when it has as many columns (spans counted) and either no header of its own
or the first one's header again (a repeated header row is dropped). Its rows keep their page as `data-page`
(1-based) on each `<tr>`, so the page a row was printed on is not lost. Which blocks are looked at (the last
one of a page and the first one of the next) is the assembler's (app.core.pipeline.assembly).

What must never live here: pages, regions or their boxes; reading tables (app.core.text.tables).
"""
from __future__ import annotations

import re
from html import unescape

_ROW = re.compile(r"<tr\b[^>]*>.*?</tr>", re.S | re.I)
_CELL = re.compile(r"<(t[dh])\b([^>]*)>(.*?)</t[dh]>", re.S | re.I)
_SPAN = re.compile(r"colspan\s*=\s*[\"']?(\d+)", re.I)
_TAG = re.compile(r"<[^>]+>")


def _cells(row: str) -> list[tuple[str, int, str]]:
    """(tag, colspan, text) of a row's cells."""
    out = []
    for tag, attrs, body in _CELL.findall(row):
        m = _SPAN.search(attrs)
        text = " ".join(unescape(_TAG.sub(" ", body)).split()).lower()
        out.append((tag.lower(), int(m.group(1)) if m else 1, text))
    return out


def width(html: str) -> int:
    """The table's column count: its widest row, spans counted (a row a rowspan reaches into is shorter)."""
    return max((sum(c[1] for c in _cells(r)) for r in _ROW.findall(html or "")), default=0)


def _head(rows: list[str]) -> list[str]:
    """The leading rows of header cells only."""
    out = []
    for r in rows:
        cells = _cells(r)
        if not cells or any(c[0] != "th" for c in cells):
            break
        out.append(r)
    return out


def _says(rows: list[str]) -> list[list[str]]:
    return [[c[2] for c in _cells(r)] for r in rows]


def join_continued(first: str, following: str, page: int) -> str | None:
    """`first` with `following`'s rows appended (each `<tr data-page="page">`), its repeated header rows
    dropped; None when `following` is not `first` continued (another column count, or a header of its own that
    is not `first`'s)."""
    if not (first.startswith("<table") and first.endswith("</table>") and following.startswith("<table")
            and following.endswith("</table>")):
        return None
    n = width(first)
    if n == 0 or width(following) != n:
        return None
    top, rows = _ROW.findall(first), _ROW.findall(following)
    head, again = _head(top), _head(rows)
    if again:
        if _says(again) != _says(head):
            return None  # a header of its own: another table
        rows = rows[len(again):]
    elif not head and top and rows and _says(rows[:1]) == _says(top[:1]):
        rows = rows[1:]  # a header row set like the body, printed again on the new page
    if not rows:
        return first
    tagged = "".join(re.sub(r"^<tr\b[^>]*>", f'<tr data-page="{page}">', r, flags=re.I) for r in rows)
    return first[: -len("</table>")] + tagged + "</table>"
