"""What every layout engine offers, and the whole-page fallback. (Region ids are born in app.core.document.regions.)"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from app.core.layout.postprocess import Detection
from app.core.document.regions import MARGIN_LABELS, Region, region_id, route

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from app.core.document import Document
    from app.core.base.cancel import CancelToken


class LayoutError(RuntimeError):
    """A layout engine cannot run; the message is written for a person."""


class LayoutEngine(Protocol):
    name: str

    def analyse(
        self, document: "Document", index: int, image: "Image.Image", dpi: float, *, keep_headers: bool = False,
        cancel: "CancelToken | None" = None, timeout: float | None = None,
    ) -> list[Region]:
        """The page's regions in reading order. An engine whose time per page depends on what the page holds
        (PyMuPDF's) honours `timeout` seconds (raising app.core.layout.budget.LayoutTimeout) and stops on `cancel`
        within a fraction of a second; a fixed-cost one checks `cancel` before it starts."""
        ...


def make_regions(
    dets: list[Detection], page: int, dpi: float, source: str, *, keep_headers: bool = False,
    native_labels: list[str] | None = None, page_size: tuple[float, float] = (0.0, 0.0),
) -> list[Region]:
    """Detections already in reading order → regions with ids, tasks, and boxes in pixels and points."""
    s = 72.0 / dpi
    out = []
    for n, d in enumerate(dets):
        box = tuple(float(v) for v in d.box)
        extra = {"native_label": native_labels[n] if native_labels else d.label}
        out.append(Region(
            id=region_id(page, n), page=page, box=box, label=d.label, task=route(d.label, keep_headers=keep_headers),
            order=n, box_pt=tuple(round(v * s, 2) for v in box), dpi=float(dpi), score=round(float(d.score), 4),
            source=source, extra=extra,
        ))
    return keep_lone_margins(out, page_size)


LONE_MARGIN_SHARE = 0.25  # a "header" this tall a share of its page is the page's content (a one-line image)
STRIP_ASPECT = 3.0  # an image this many times wider than tall is a strip of text (a line, a label), not a page


def keep_lone_margins(regions: list[Region], page_size: tuple[float, float]) -> list[Region]:
    """Headers and footers are page furniture; but where nothing else is on the page and the page is a strip (a
    one-line image, a cut-out label) or the margin text fills a good part of its height, they are the page's text,
    and are read. A real page of running headers and a page number only (a blank book page) stays skipped."""
    width, height = page_size
    if any(r.task != "skipped" for r in regions) or height <= 0:
        return regions
    margins = [r for r in regions if r.label in MARGIN_LABELS and not r.label.endswith("_image")]
    strip = width >= STRIP_ASPECT * height
    if not margins or not (strip or max(r.box[3] - r.box[1] for r in margins) >= LONE_MARGIN_SHARE * height):
        return regions
    for r in regions:
        if r.label in MARGIN_LABELS and not r.label.endswith("_image"):
            r.task = "text"
            r.extra["margin_kept"] = "the page's only text"
    return regions


class PageLayout:
    """The whole page as one text region."""

    name = "page"

    def analyse(self, document, index, image, dpi, *, keep_headers: bool = False, cancel=None,
                timeout: float | None = None) -> list[Region]:
        det = Detection("text", 1.0, (0.0, 0.0, float(image.width), float(image.height)), 0)
        return make_regions([det], index, dpi, self.name, keep_headers=keep_headers)
