"""A table box the layout drew over two tables and the caption between them, cut back into its parts.

A layout model boxes two tables that stand close over each other as one table when the caption of the second is
short: the reader then lays one grid over both, and neither table's columns come out. A line inside a table box
that stands alone in its row and starts with a table label and a number ("Table 5", "Tab. 2", "表 5", "Tabelle 3",
"Таблица 1") is a caption, never a cell: the box is cut there into the table above, the caption (and its further
caption lines: the same label in another language, or the wrapped rest of a caption line that reached across),
and the table below. A caption at the top or bottom of the box is cut off the same way, so its text is a caption
rather than a spanning row of the grid.

The other way round (`named_captions`): a box the layout called a section heading that names a table or figure
("[표 1] …", "Table 2: …", "Figure 3.", "그림 4", "图 5") and stands right above or below a table or picture is
that table's or picture's caption, not a heading of the text.
"""

from __future__ import annotations

import re

# "Table 5", "Tab. 2", "TABLE IV", "表 5", "表5-1", "Tabelle 3", "Tableau 2", "Tabla 1", "Tabella 1", "Таблица 1",
# "Πίνακας 2", "तालिका 3"; the label, then a number (arabic or roman) right after it
CAPTION = re.compile(r"^\s*(?:table|tab\.|tabelle|tableau|tabla|tabella|tabel|tabulka|tablo|таблица|табл\.|πίνακας"
                     r"|तालिका|表)\s*(?:\d+|[IVXLC]+\b)", re.I)
# a table's or a figure's name, perhaps in brackets ("[표 1]", "<그림 2>", "【图 3】")
NAMED = re.compile(r"^\s*[\[<(〈【《]?\s*(?:table|tab\.|tabelle|tableau|tabla|tabella|tabel|tabulka|tablo|таблица|табл\."
                   r"|πίνακας|तालिका|表|표|figure|fig\.|abbildung|abb\.|рисунок|рис\.|σχήμα|εικόνα|चित्र|그림|図|图)"
                   r"\s*(?:\d+|[IVXLC]+\b)", re.I)
NEAR = 1.5  # a caption stands within this many of its own line heights of its table or picture
WRAPPED = 0.8  # a caption line this share of the box wide (or wider) goes on in the next lone line


def _rows(lines) -> list[list]:
    """The lines in row bands, top to bottom: a line joins the band whose vertical extent it overlaps by half."""
    rows: list[list] = []
    for ln in sorted(lines, key=lambda ln: (ln.box[1] + ln.box[3]) / 2):
        if rows:
            y0, y1 = min(r.box[1] for r in rows[-1]), max(r.box[3] for r in rows[-1])
            h = min(ln.box[3] - ln.box[1], y1 - y0) or 1.0
            if min(y1, ln.box[3]) - max(y0, ln.box[1]) >= 0.5 * h:
                rows[-1].append(ln)
                continue
        rows.append([ln])
    return rows


def _caption_runs(rows: list[list], width: float) -> list[tuple[int, int]]:
    """(first, end) row indexes of each run of caption rows."""
    runs: list[tuple[int, int]] = []
    k = 0
    while k < len(rows):
        row = rows[k]
        if len(row) == 1 and CAPTION.match(row[0].text):
            end = k + 1
            while end < len(rows) and len(rows[end]) == 1 and (
                    CAPTION.match(rows[end][0].text)
                    or rows[end - 1][0].box[2] - rows[end - 1][0].box[0] >= WRAPPED * width):
                end += 1
            runs.append((k, end))
            k = end
        else:
            k += 1
    return runs


def split_table(box: dict, lines) -> list[dict] | None:
    """The parts of a table box (`lines`: the text lines inside it, with .box and .text) cut at its captions, top
    to bottom: tables ("table") and captions ("caption"); None where it holds no caption to cut at."""
    rows = _rows(lines)
    width = (box["x1"] - box["x0"]) or 1.0
    runs = _caption_runs(rows, width)
    if not runs or len(rows) < 2:
        return None
    parts: list[tuple[str, list]] = []
    k = 0
    for first, end in runs:
        if first > k:
            parts.append(("table", rows[k:first]))
        parts.append(("caption", rows[first:end]))
        k = end
    if k < len(rows):
        parts.append(("table", rows[k:]))
    if not any(kind == "table" and len(part) >= 2 for kind, part in parts):
        return None  # no table of two rows or more is left: the box was a caption with a line or two
    out = []
    for n, (kind, part) in enumerate(parts):
        held = [ln for row in part for ln in row]
        piece = {k: v for k, v in box.items() if k not in ("layer_table", "word_table", "textlines", "ocr_lines")}
        piece.update(textlines=None, cut=True, y0=min(ln.box[1] for ln in held), y1=max(ln.box[3] for ln in held))
        if kind == "caption" or len(part) < 2:  # (one row left between two captions: no table of its own)
            piece.update(boxclass="caption" if kind == "caption" else "text",
                         x0=min(ln.box[0] for ln in held), x1=max(ln.box[2] for ln in held))
        else:  # a table keeps the box's width, and its edge where no caption cut it (its rules, its padding)
            piece.update(boxclass="table", y0=box["y0"] if n == 0 else piece["y0"],
                         y1=box["y1"] if n == len(parts) - 1 else piece["y1"])
        out.append(piece)
    return out


def named_captions(boxes: list[dict], text_of) -> None:
    """A `section-header` box (in reading order) whose text names a table or figure and that stands right above
    or below a table or picture box it overlaps across becomes a `caption` (in place). `text_of(box)` is its text."""
    for k, b in enumerate(boxes):
        if b.get("boxclass") != "section-header" or not NAMED.match(text_of(b) or ""):
            continue
        h = b["y1"] - b["y0"]
        for other in boxes[max(0, k - 1):k] + boxes[k + 1:k + 2]:
            across = min(b["x1"], other["x1"]) - max(b["x0"], other["x0"])
            gap = max(other["y0"] - b["y1"], b["y0"] - other["y1"])
            if other.get("boxclass") in ("table", "picture") and across > 0 and gap <= NEAR * h:
                b["boxclass"] = "caption"
                break
