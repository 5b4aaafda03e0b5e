"""The classic engine (RapidOCR on CPU): real text from a rendered line, tables from line boxes, and the pure
line-grouping helpers."""
from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from app.core.engines.classic import group_lines, lines_to_table, lines_to_text
from app.core.engines import open_engine
from app.core.base.cancel import CancelToken
from doc_inputs import text_image


def test_group_lines_rows_by_vertical_overlap_and_cells_left_to_right():
    items = [((100, 12, 150, 30), "b"), ((0, 10, 50, 30), "a"), ((0, 50, 40, 70), "c"), ((110, 55, 140, 72), "d")]
    rows = group_lines(items)
    assert [[t for _, t in row] for row in rows] == [["a", "b"], ["c", "d"]]
    assert lines_to_table(rows) == "<table><tr><th>a</th><th>b</th></tr><tr><td>c</td><td>d</td></tr></table>"
    assert lines_to_table([]) == ""


def test_lines_join_into_a_paragraph_and_rejoin_hyphenated_words():
    rows = [[((0, 0, 1, 1), "Optical charac-")], [((0, 2, 1, 3), "ter recognition")], [((0, 4, 1, 5), "Done.")]]
    assert lines_to_text(rows) == "Optical character recognition Done."


def test_reads_a_rendered_line_and_emits_start_and_finish():
    engine = open_engine("classic")
    assert engine.kind == "region" and engine.name == "classic"
    events = []
    result = engine.decode_region(text_image("Hello 2026"), "text", region_id="p1-r01", emit=events.append, page=3)
    assert result.text.replace(" ", "") == "Hello2026"
    assert [e.type for e in events] == ["region_started", "region_finished"]
    assert events[0].page == 3 and events[1].stats["lines"] == 1


def test_table_task_builds_html_rows():
    img = Image.new("RGB", (420, 130), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=28)
    for r, row in enumerate([["Name", "Total"], ["Apples", "42"]]):
        for c, cell in enumerate(row):
            draw.text((20 + 220 * c, 20 + 55 * r), cell, fill="black", font=font)
    text = open_engine("classic").decode_region(img, "table", region_id="t").text
    assert text == "<table><tr><th>Name</th><th>Total</th></tr><tr><td>Apples</td><td>42</td></tr></table>"


def test_cancelled_before_start_returns_a_partial_result():
    token = CancelToken()
    token.cancel()
    result = open_engine("classic").decode_region(text_image(), "text", region_id="x", cancel=token)
    assert result.cancelled and result.text == ""
