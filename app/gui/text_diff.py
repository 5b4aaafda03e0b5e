"""Two texts side by side, compared word by word: the words only on the left struck on red, the words only on the
right underlined on green (never colour alone), and inside a changed word its character detail — readable for a
large difference, where a character diff of whole paragraphs is not. Used for the text layer against the decoded
text (CER) and for a re-run's reading against the one an edit was made over.

What must never live here: widgets (the block bar shows the HTML), any change to a text.
"""
from __future__ import annotations

import difflib
import html
import re

_TOKENS = re.compile(r"\s+|[^\s]+")
GONE = "background:#f5b7b1;text-decoration:line-through;"
CAME = "background:#abebc6;text-decoration:underline;"
GONE_SOFT = "background:#fadbd8;"
CAME_SOFT = "background:#d5f5e3;"


def words(text: str) -> list[str]:
    return _TOKENS.findall(text or "")


def _span(style: str, text: str) -> str:
    return f'<span style="{style}">{html.escape(text)}</span>' if text else ""


def _chars(a: str, b: str) -> tuple[str, str]:
    """One changed word pair at character level: (left HTML, right HTML)."""
    left, right = [], []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append(_span(GONE_SOFT, a[a0:a1]))
            right.append(_span(CAME_SOFT, b[b0:b1]))
        else:
            left.append(_span(GONE, a[a0:a1]))
            right.append(_span(CAME, b[b0:b1]))
    return "".join(left), "".join(right)


def word_diff(left: str, right: str) -> tuple[str, str, int]:
    """(left HTML, right HTML, number of changed words) of `left` → `right`."""
    a, b = words(left), words(right)
    out_a, out_b, changed = [], [], 0
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            same = html.escape("".join(a[a0:a1]))
            out_a.append(same)
            out_b.append(same)
            continue
        changed += max(sum(1 for t in a[a0:a1] if t.strip()), sum(1 for t in b[b0:b1] if t.strip()))
        pa, pb = a[a0:a1], b[b0:b1]
        if op == "replace" and len(pa) == len(pb):  # word for word: show which characters changed inside
            for x, y in zip(pa, pb):
                if x == y or not x.strip():
                    out_a.append(html.escape(x))
                    out_b.append(html.escape(y))
                else:
                    hx, hy = _chars(x, y)
                    out_a.append(hx)
                    out_b.append(hy)
        else:
            out_a.append(_span(GONE, "".join(pa)))
            out_b.append(_span(CAME, "".join(pb)))
    return "".join(out_a).replace("\n", "<br>"), "".join(out_b).replace("\n", "<br>"), changed


def side_by_side(left: str, right: str, left_title: str, right_title: str) -> str:
    """The two texts in two columns (HTML), with a count of the words that differ."""
    la, rb, changed = word_diff(left, right)
    summary = "the same words" if not changed else f"{changed} word{'s differ' if changed != 1 else ' differs'}"
    return (f"<p><b>{html.escape(left_title)}</b> ↔ <b>{html.escape(right_title)}</b>: {summary} "
            f"(<span style='{GONE}'>only left</span>, <span style='{CAME}'>only right</span>)</p>"
            "<table width='100%' cellspacing='0' cellpadding='4' style='font-family:monospace'><tr>"
            f"<td width='50%' valign='top'>{la}</td><td width='50%' valign='top'>{rb}</td></tr></table>")
