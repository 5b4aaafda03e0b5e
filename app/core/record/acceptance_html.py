"""The acceptance report as one self-contained HTML page: the same tables `python -m app report` prints, bars drawn
in CSS, the page maps and charts as images beside the file (given by name). No scripts, no remote content; every
text from the trace is escaped. The window's report pane exports the same page.

`write_report` writes the whole set (HTML, charts, strip, maps, JSON) into a folder: the command's `--out` and the
window's report pane's export. What must never live here: Qt, reading traces, drawing pictures
(acceptance_figures.py does).
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Sequence

from app.core.record.acceptance import AcceptanceReport, Tally
from app.core.record.acceptance_figures import rate_colour, tpf_colour

_STYLE = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}
.bar{display:inline-block;height:12px;vertical-align:middle}img{max-width:100%;border:1px solid #ccc}"""


def _rgb(c: tuple[int, int, int]) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def _tally_table(title: str, rows: Sequence[Tally], with_tpf: bool) -> str:
    head = "<tr><th>" + escape(title) + "</th><th>drafts judged</th><th>accepted</th><th></th>"
    head += "<th>TPF</th></tr>" if with_tpf else "</tr>"
    body = []
    for t in rows:
        bar = f'<span class="bar" style="width:{round(200 * t.rate)}px;background:{_rgb(rate_colour(t.rate))}"></span>'
        cells = (f"<td>{escape(t.name)}</td><td class=n>{t.judged}</td><td class=n>{t.rate:.1%}</td><td>{bar}</td>"
                 + (f"<td class=n>{t.tpf:.2f}</td>" if with_tpf else ""))
        body.append(f"<tr>{cells}</tr>")
    return f"<table>{head}{''.join(body) or '<tr><td>no drafts judged</td></tr>'}</table>"


def report_html(report: AcceptanceReport, *, images: Sequence[str] = (), title: str = "") -> str:
    """The page; `images` are file names (beside the HTML) of the maps and charts to show under the tables."""
    name = escape(title or report.document or "trace")
    regions = "".join(
        f"<tr><td>{escape(r.region_id)}</td><td>{escape(r.label)}</td><td>{escape(r.kind)}</td>"
        f'<td class=n style="background:{_rgb(tpf_colour(r.tpf, r.block_size or report.block_size))}">{r.tpf:.2f}'
        f"</td><td class=n>{r.mean_accepted:.2f}</td><td class=n>{r.tokens}</td><td class=n>{r.forwards}</td>"
        f"<td class=n>{r.rate:.1%}</td></tr>" for r in report.regions)
    rejected = ", ".join(f"{escape(repr(t))} ×{n}" for t, n in report.rejected_texts.items()) or "none"
    parts = [
        f"<!doctype html><html><head><meta charset=utf-8><title>Decoding report: {name}</title>",
        f"<style>{_STYLE}</style></head><body><h1>Decoding report: {name}</h1>",
        f"<p>engine {escape(report.engine or '?')}, block size {report.block_size}, "
        f"{len(report.regions)} decoded regions</p>",
        "<h2>Regions</h2><table><tr><th>region</th><th>label</th><th>kind</th><th>TPF</th><th>mean accepted</th>"
        f"<th>tokens</th><th>forwards</th><th>drafts accepted</th></tr>{regions}</table>",
        "<h2>Where drafts fail</h2>",
        _tally_table("region kind", report.by_kind, True),
        _tally_table("token class", report.by_class, False),
        _tally_table("position in block", report.by_position, False),
        f"<p>Most often rejected drafts: {rejected}</p>",
        "".join(f'<p><img src="{escape(src)}" alt="{escape(src)}"></p>' for src in images),
        "</body></html>",
    ]
    return "\n".join(parts)


def page_image(report: AcceptanceReport, page: int):
    """The document's page at the regions' DPI, or None when the document is not here (a trace from elsewhere)."""
    from app.core.document import DocumentError, open_document

    size = report.pages.get(page)
    if not report.document or size is None or not size.dpi or not Path(report.document).is_file():
        return None
    try:
        return open_document(report.document).render(page, size.dpi)
    except (DocumentError, OSError, IndexError):
        return None


def write_report(report: AcceptanceReport, out: Path, *, with_page: bool = True) -> list[Path]:
    """report.html, report.png (the charts), strip.png, map-pN.png per page and report.json into `out`."""
    from app.core.base.atomic import atomic_write_text
    from app.core.record.acceptance_figures import charts_image, map_image, strip_image

    out.mkdir(parents=True, exist_ok=True)
    images = ["report.png", "strip.png"]
    charts_image(report).save(out / "report.png")
    strip_image(report).save(out / "strip.png")
    for page in sorted(report.pages):
        name = f"map-p{page + 1}.png"
        map_image(report, page, page_image(report, page) if with_page else None).save(out / name)
        images.append(name)
    atomic_write_text(out / "report.html", report_html(report, images=images))
    atomic_write_text(out / "report.json", json.dumps(report.to_dict(), ensure_ascii=False, indent=1))
    return [out / n for n in (*images, "report.html", "report.json")]
