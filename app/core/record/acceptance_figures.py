"""The acceptance report drawn as pictures with Pillow: the page map (each decoded region filled with the colour of
its TPF, its figures written in it, a legend), the document strip (one cell per page) and the report's three bar
charts (acceptance by region kind, by token class, by position in the block). The window's export and
`python -m app report` both write these, so the two cannot drift; the window draws its live overlay itself, with
the same colour scale (`tpf_colour`).

What must never live here: Qt, torch, reading traces (acceptance.py does), choosing file names.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from app.core.record.acceptance import AcceptanceReport, Tally

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

_STOPS = ((0.0, (198, 40, 40)), (0.5, (249, 168, 37)), (1.0, (46, 125, 50)))  # red → amber → green


def tpf_top(block_size: int) -> float:
    """The best TPF a block size allows: every draft and the bonus accepted, B+2 tokens in two forwards."""
    return max(2.0, (block_size + 2) / 2) if block_size else 2.0


def tpf_colour(tpf: float, block_size: int) -> tuple[int, int, int]:
    """The map's colour for a TPF: red at 1 (no gain over AR), green at the block size's best."""
    top = tpf_top(block_size)
    x = min(1.0, max(0.0, (tpf - 1.0) / (top - 1.0)))
    for (x0, c0), (x1, c1) in zip(_STOPS, _STOPS[1:]):
        if x <= x1:
            f = (x - x0) / (x1 - x0)
            return tuple(round(a + (b - a) * f) for a, b in zip(c0, c1))  # type: ignore[return-value]
    return _STOPS[-1][1]


def rate_colour(rate: float) -> tuple[int, int, int]:
    """A draft acceptance rate (0..1) on the same red → green scale."""
    return tpf_colour(1.0 + rate, 2)


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size)
    except TypeError:  # Pillow < 10.1: one size only
        return ImageFont.load_default()


def map_image(report: AcceptanceReport, page: int, background: "Image.Image | None" = None) -> "Image.Image":
    """The page's acceptance map: `background` (the page image, any size) or white under the regions."""
    from PIL import Image, ImageDraw

    size = report.pages.get(page)
    w, h = (size.width_px, size.height_px) if size and size.width_px else (1240, 1754)
    base = (background.convert("RGB").resize((w, h)) if background is not None
            else Image.new("RGB", (w, h), "white"))
    legend_h = 56
    canvas = Image.new("RGB", (w, h + legend_h), "white")
    canvas.paste(base, (0, 0))
    overlay = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    font = _font(14)
    for r in (r for r in report.regions if r.page == page):
        colour = tpf_colour(r.tpf, r.block_size or report.block_size)
        draw.rectangle(r.box, fill=(*colour, 90), outline=(*colour, 255), width=3)
        draw.text((r.box[0] + 4, r.box[1] + 2), f"{r.region_id}  TPF {r.tpf:.2f}  mean k {r.mean_accepted:.1f}",
                  fill=(0, 0, 0, 255), font=font)
    canvas = Image.alpha_composite(canvas.convert("RGBA"), overlay).convert("RGB")
    _legend(ImageDraw.Draw(canvas), (10, h + 8, min(w - 10, 520), h + legend_h - 8), report.block_size, font)
    return canvas


def _legend(draw, box: Sequence[int], block_size: int, font) -> None:
    x0, y0, x1, y1 = box
    top = tpf_top(block_size)
    bar_y1 = y0 + (y1 - y0) // 2
    for x in range(x0, x1):
        tpf = 1.0 + (top - 1.0) * (x - x0) / max(1, x1 - x0)
        draw.line([(x, y0), (x, bar_y1)], fill=tpf_colour(tpf, block_size))
    for tick in (1.0, (1.0 + top) / 2, top):
        x = x0 + (x1 - x0) * (tick - 1.0) / (top - 1.0)
        draw.text((min(x, x1 - 40), bar_y1 + 2), f"{tick:.1f}", fill="black", font=font)
    draw.text((x1 + 10, y0), f"TPF (B={block_size})", fill="black", font=font)


def strip_image(report: AcceptanceReport, cell: int = 48) -> "Image.Image":
    """One coloured cell per page, its TPF written in it: where in a long document drafting pays."""
    from PIL import Image, ImageDraw

    pages = sorted(report.pages) or [0]
    img = Image.new("RGB", (cell * len(pages), cell), "white")
    draw = ImageDraw.Draw(img)
    font = _font(12)
    for i, page in enumerate(pages):
        tpf = report.page_tpf(page)
        draw.rectangle((i * cell + 1, 1, (i + 1) * cell - 2, cell - 2),
                       fill=tpf_colour(tpf, report.block_size) if tpf else (224, 224, 224))
        draw.text((i * cell + 4, 4), f"p{page + 1}", fill="black", font=font)
        draw.text((i * cell + 4, cell // 2), f"{tpf:.1f}" if tpf else "–", fill="black", font=font)
    return img


def charts_image(report: AcceptanceReport, width: int = 900) -> "Image.Image":
    """The report's three bar charts, one under the other: draft acceptance by region kind (with its TPF), by
    token class and by position in the block."""
    from PIL import Image, ImageDraw

    sections = [("Draft acceptance by region kind (TPF)", report.by_kind, True),
                ("Draft acceptance by token class", report.by_class, False),
                ("Draft acceptance by position in the block", report.by_position, False)]
    row = 20
    height = sum(40 + row * max(1, len(rows)) for _t, rows, _k in sections) + 10
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    font, y = _font(13), 8
    for title, rows, with_tpf in sections:
        draw.text((10, y), title, fill="black", font=_font(15))
        y += 26
        y = _bars(draw, rows, y, width, row, font, with_tpf)
        y += 14
    return img


def _bars(draw, rows: Sequence[Tally], y: int, width: int, row: int, font, with_tpf: bool) -> int:
    label_w, bar_x1 = 110, width - 230
    if not rows:
        draw.text((10, y), "no drafts judged", fill="gray", font=font)
        return y + row
    for t in rows:
        draw.text((10, y + 2), t.name, fill="black", font=font)
        x1 = label_w + (bar_x1 - label_w) * t.rate
        draw.rectangle((label_w, y + 2, bar_x1, y + row - 4), outline=(200, 200, 200))
        if t.judged:
            draw.rectangle((label_w, y + 2, x1, y + row - 4), fill=rate_colour(t.rate))
        note = f"{t.rate:.0%} of {t.judged}" + (f"  TPF {t.tpf:.2f}" if with_tpf else "")
        draw.text((bar_x1 + 8, y + 2), note, fill="black", font=font)
        y += row
    return y
