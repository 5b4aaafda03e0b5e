"""Furniture by the shape of a page's edge row (app.core.layout.furniture.edge_rows): a running footer of pieces
spread across the page, a download stamp at the very edge, a slide's tiny footer — on one-page documents, where no
neighbour page repeats them — are left out of the body; the body's own last lines are not."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.layout.furniture import edge_rows, settle
from app.core.layout.page_boxes import Line

UNITS = Path(__file__).resolve().parents[1] / "corpora" / "unittests" / "pdfs"
BODY = ("Times-Roman", 10.0)


def _body(top: float = 100, n: int = 30) -> list[Line]:
    return [Line((72, top + 14 * k, 540, top + 14 * k + 10), f"line {k} of the body text, set in its own font", False,
                 False, *BODY) for k in range(n)]


def test_a_spread_footer_row_is_furniture_and_cut_off_its_box() -> None:
    row = [Line((72, 760, 130, 768), "Revision: 2.4", False, False, "Times-Roman", 8.0),
           Line((280, 760, 330, 768), "P/N 119-036", False, False, "Times-Roman", 8.0),
           Line((470, 760, 540, 768), "10 June 2019", False, False, "Times-Roman", 8.0)]
    body = _body()
    boxes = [{"boxclass": "text", "x0": 72, "y0": 100, "x1": 540, "y1": 768}]
    settle(boxes, lambda b: [ln for ln in body + row if b[1] - 1 <= ln.box[1] and ln.box[3] <= b[3] + 1], 792.0,
           body + row, None)
    assert [b["boxclass"] for b in boxes] == ["text", "page-footer"]
    assert boxes[0]["y1"] <= 760 <= boxes[1]["y0"]


def test_the_body_s_last_lines_are_not_furniture() -> None:
    body = _body(top=560, n=14)  # the last line ends 16 points above the bottom edge, no gap before it
    assert edge_rows(body, 792.0, BODY) == []
    # two columns' last lines side by side, a line's gap apart: body, not a footer
    left = [Line((72, 500 + 14 * k, 300, 510 + 14 * k), f"left column line {k}", False, False, *BODY) for k in range(20)]
    right = [Line((320, 500 + 14 * k, 540, 510 + 14 * k), f"right column line {k}", False, False, *BODY)
             for k in range(20)]
    assert edge_rows(left + right, 792.0, BODY) == []
    # a scan's last line near the edge (no fonts): the stamp rule is for born-digital pages only
    scan = [Line(ln.box, ln.text, True) for ln in _body(top=100, n=10)] + [Line((72, 770, 300, 780), "the end.", True)]
    assert edge_rows(scan, 792.0, None) == []


def _markdown(path: Path) -> str:
    from pipeline_kit import read

    return read(path, markdown=True, engine="auto", layout="auto")


@pytest.mark.parametrize("name, gone, kept", [
    ("fff590bed29a2854ac1f874dad5752ede1aa_pg1.pdf", ["Revision: 2.4", "P/N 119-036", "10 June 2019"],
     ["not be liable for errors"]),
    ("ff0f0b22c55d8b90dd77d153f48e144fc9db_pg2.pdf", ["www.plosntds.org", "Volume 8 | Issue 3"], ["manuscript."]),
    ("ff4f7dad78081cff727d19ab51c181d4a661_pg1.pdf", ["Download date"], ["UvA-DARE is a service provided"]),
    ("ff1fc6a205ad039139ce566851b6b260c929_pg1.pdf", ["NETS 2015", "TELEDYNE ENERGY", "AEROJET"], ["Tom Hammel"]),
])
def test_real_one_page_documents_lose_their_edge_furniture(name: str, gone: list[str], kept: list[str]) -> None:
    md = _markdown(UNITS / "headers_footers" / name)
    for text in gone:
        assert text not in md, text
    for text in kept:
        assert text in md, text


def test_a_poster_s_logo_drawn_as_a_picture_is_read() -> None:
    """A born-digital poster's logo (a strip of a picture, its words drawn) is read by the engine; the slide above
    shows that the same beside a running footer is furniture."""
    md = _markdown(UNITS / "test-graphical-text.pdf")
    assert "FutureSkill" in md and "THE POWER OF STORYTELLING" in md


def test_a_small_scanned_book_page_loses_its_running_head() -> None:
    """A 180 × 300 pt page of a scanned book: its running head "400 BRITISH HUSBANDRY. [Ch. XIX." stands in
    three pieces across the top row, inside the box the layout took for a picture of the page's first paragraph;
    it is cut off as a header and the paragraph under it is read whole."""
    md = _markdown(UNITS / "small_page_size.pdf")
    assert "BRITISH HUSBANDRY" not in md and "XIX" not in md and not md.lstrip().startswith("400")
    assert "very tri" in md and "Since the use of bones" in md and "An examination" in md
