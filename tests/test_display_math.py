"""Display equations inside a paragraph's box cut out as formula boxes (app.core.layout.display_math)."""
from __future__ import annotations

from app.core.layout.display_math import split_displays
from app.core.layout.page_boxes import Line, lines_in


def _prose(y: float) -> Line:
    return Line((72, y, 520, y + 10), "a line of the paragraph that says what the sum below is for", False)


def test_a_display_in_a_paragraphs_box_becomes_a_formula_between_two_text_boxes():
    lines = [_prose(100), _prose(112),
             Line((240, 126, 250, 132), "6", False, True),  # the sum's upper limit: a row of its own
             Line((220, 133, 380, 145), "F(g) = X brgr + X aijW(yj − yi).", False, True),
             Line((236, 146, 330, 152), "r=1 0≤i<j≤6", False, True),
             _prose(160), _prose(172)]
    box = {"boxclass": "text", "x0": 72, "y0": 100, "x1": 520, "y1": 182}
    out = split_displays([box], lambda b: lines_in(lines, b))
    assert [b["boxclass"] for b in out] == ["text", "formula", "text"]
    assert out[1]["y0"] < 126 and out[1]["y1"] > 152 and out[0]["y1"] < 126 and out[2]["y0"] > 152
    assert [len(lines_in(lines, (b["x0"], b["y0"], b["x1"], b["y1"]))) for b in out] == [2, 3, 2]


def test_a_centred_line_of_words_is_no_display():
    lines = [_prose(100), Line((200, 114, 390, 124), "Chapter notes and further reading", False), _prose(128)]
    box = {"boxclass": "text", "x0": 72, "y0": 100, "x1": 520, "y1": 138}
    assert split_displays([box], lambda b: lines_in(lines, b)) == [box]


def test_a_text_box_that_is_one_display_of_several_rows_is_a_formula():
    lines = [Line((240, 126, 250, 132), "6", False, True),
             Line((220, 133, 380, 145), "B = X br = 93", False, True),
             Line((236, 146, 330, 152), "r=1 23000", False, True)]
    box = {"boxclass": "text", "x0": 220, "y0": 126, "x1": 380, "y1": 152}
    assert [b["boxclass"] for b in split_displays([box], lambda b: lines_in(lines, b))] == ["formula"]


def test_the_numbered_lines_of_one_align_boxed_line_by_line_are_one_formula():
    from app.core.layout.display_math import merge_stacked

    rows = [{"boxclass": "formula", "x0": 213, "y0": 345 + 17 * k, "x1": 541, "y1": 358 + 17 * k}
            for k in range(3)]
    after = {"boxclass": "text", "x0": 72, "y0": 400, "x1": 541, "y1": 420}
    out = merge_stacked(rows + [after])
    assert [b["boxclass"] for b in out] == ["formula", "text"] and (out[0]["y0"], out[0]["y1"]) == (345, 392)
    apart = [rows[0], {**rows[1], "y0": 380, "y1": 393}]  # a paragraph's gap between them: two displays
    assert len(merge_stacked(apart)) == 2
