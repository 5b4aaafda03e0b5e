"""Lines found on the page for a block whose engine reports only its text (GravityOCR, GLM-OCR, Unlimited-OCR, the
remote engines): the projection-profile line finder (app.core.engines.line_finder, no model) run on the region's
crop, its boxes in page points. The geometry model (app.core.formats.geometry) then aligns the block's words to
them: the line boxes are measured, the words' places in them estimated. The searchable PDF and the export formats
ask here alike, so they place the text on the same lines.

What must never live here: reading text, writing files.
"""
from __future__ import annotations

from app.core.formats.geometry import Box, line_boxes_pt
from app.core.document.regions import Region

FIND_DPI = 150.0  # the crop's resolution: printed lines of 6 pt and up are several pixels tall
FOUND_TASKS = ("text",)  # a table's rows and a formula's lines are not the lines a paragraph's words flow over


def found_lines(document, region: Region) -> list[tuple[Box, None]]:
    """The printed lines inside `region` (points, top to bottom) when it is a text block whose engine recorded
    none; [] otherwise, or when the page cannot be rendered."""
    if document is None or region.task not in FOUND_TASKS or line_boxes_pt(region):
        return []
    from app.core.document.base import crop_origin
    from app.core.engines.line_finder import find_lines

    x0, y0, x1, y1 = region.box_pt
    if x1 - x0 < 2 or y1 - y0 < 2:
        return []
    try:
        crop = document.crop(region.page, tuple(region.box_pt), FIND_DPI)
        boxes = find_lines(crop)
    except Exception:  # noqa: BLE001 - a page that cannot be rendered: the lines are estimated instead
        return []
    s = FIND_DPI / 72.0
    ox, oy = crop_origin(tuple(region.box_pt), FIND_DPI)
    return [(((ox + a) / s, (oy + b) / s, (ox + c) / s, (oy + d) / s), None) for a, b, c, d in boxes]
