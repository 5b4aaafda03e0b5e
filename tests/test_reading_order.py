"""A person's reading order (core, no widgets): column and line ordering of boxes; each reorder is one LayoutEdit
whose snapshots restore the page exactly, marks the page as the person's, and flows to the Markdown, the JSON
`order` and the regions a later run reads."""
from __future__ import annotations

import json

from app.core.record import events as ev
from app.core.document.regions import Region
from app.core.review.reading_order import OrderEditor, column_order, line_order
from app.core.review.region_edits import PERSON_LAYOUT, fixed_layouts, restore
from app.core.review.session import Session

# a title over two columns of three paragraphs, and a footer-wide note under them
TWO_COLUMNS = {
    "title": (50, 40, 545, 70),
    "L1": (50, 90, 290, 160), "L2": (50, 170, 290, 240), "L3": (50, 250, 290, 320),
    "R1": (305, 90, 545, 160), "R2": (305, 170, 545, 240), "R3": (305, 250, 545, 320),
    "note": (50, 340, 545, 370),
    "L4": (50, 390, 290, 450), "R4": (305, 390, 545, 450),
}
ROWS = ["title", "L1", "R1", "L2", "R2", "L3", "R3", "note", "L4", "R4"]  # line by line: what a naive layout gives
COLUMNS = ["title", "L1", "L2", "L3", "R1", "R2", "R3", "note", "L4", "R4"]


def test_column_order_reads_each_band_column_by_column_and_line_order_reads_rows():
    names = list(TWO_COLUMNS)
    boxes = [TWO_COLUMNS[n] for n in names]
    assert [names[i] for i in column_order(boxes)] == COLUMNS
    assert [names[i] for i in line_order(boxes)] == ROWS
    # a line of boxes whose tops differ by a little is still one line, read left to right
    assert line_order([(300, 102, 400, 120), (50, 100, 200, 120), (50, 140, 200, 160)]) == [1, 0, 2]
    assert column_order([]) == [] and column_order([(0, 0, 10, 10)]) == [0]


def _work():
    session = Session()
    work = session.add_document("doc.pdf")
    session.current = 0
    regions = []
    for k, name in enumerate(ROWS):  # the layout's order: row by row, wrong for two columns
        box = TWO_COLUMNS[name]
        r = Region(id=f"p1-r{k + 1:02d}", page=0, box=tuple(v * 2 for v in box), label="text", task="text",
                   order=k, box_pt=box, dpi=144).to_dict()
        regions.append(r)
    session.apply(ev.LayoutDone(page=0, regions=regions, source="pymupdf", dpi=144, width_pt=595, height_pt=842,
                                width_px=1190, height_px=1684), work)
    for k, name in enumerate(ROWS):
        session.apply(ev.RegionFinished(f"p1-r{k + 1:02d}", f"text of {name}", {"stopped": "stop"}), work)
    return session, work


def _names(work) -> list[str]:
    return [b.region.text.removeprefix("text of ") for b in work.layout_blocks(0)]


def _markdown_names(out) -> list[str]:
    return [line.removeprefix("text of ") for line in out.to_markdown(anchors=False).split("\n\n") if line.strip()]


def test_order_by_columns_is_one_edit_that_flows_to_markdown_json_and_a_rerun_and_undo_restores_it():
    session, work = _work()
    before = json.dumps(work.to_dict(), sort_keys=True)
    edit = OrderEditor(work).by_columns(0)
    assert edit is not None and edit.description == "Order page 1 by columns"
    assert _names(work) == COLUMNS and work.pages[0].layout == PERSON_LAYOUT
    session.reassemble(work, 0)
    out = work.to_output()
    assert [s.strip() for s in _markdown_names(out)] == COLUMNS
    data = json.loads(out.to_json())
    blocks = sorted(data["pages"][0]["blocks"], key=lambda b: b["order"])
    assert [b["text"].removeprefix("text of ") for b in blocks] == COLUMNS
    assert data["pages"][0]["layout"] == PERSON_LAYOUT
    # a later run reads the person's regions in the person's order
    laid = sorted(fixed_layouts(work)[0], key=lambda r: r["order"])
    assert [r["text"].removeprefix("text of ") for r in laid] == COLUMNS
    assert OrderEditor(work).by_columns(0) is None  # already so: no edit
    restore(work, 0, edit.before, edit.layout_before)
    assert json.dumps(work.to_dict(), sort_keys=True) == before and _names(work) == ROWS
    restore(work, 0, edit.after, PERSON_LAYOUT)
    assert _names(work) == COLUMNS
    assert OrderEditor(work).top_to_bottom(0) is not None and _names(work) == ROWS


def test_move_before_move_by_and_a_click_sequence():
    _session, work = _work()
    ids = {b.region.text.removeprefix("text of "): b.id for b in work.layout_blocks(0)}
    editor = OrderEditor(work)
    edit = editor.move_before(ids["R1"], ids["note"])
    assert edit.selected == ids["R1"]
    assert _names(work) == ["title", "L1", "L2", "R2", "L3", "R3", "R1", "note", "L4", "R4"]
    assert editor.move_before(ids["R1"], "") and _names(work)[-1] == "R1"  # onto nothing: last
    assert editor.move_before(ids["R1"], ids["L4"]) and _names(work)[-3:] == ["R1", "L4", "R4"]
    assert editor.move_by(ids["title"], -1) is None  # first already
    assert editor.move_by(ids["title"], 1) and _names(work)[:2] == ["L1", "title"]
    edit = editor.set_sequence(0, [ids["R4"], ids["R3"], "p9-r99", ids["R4"]])
    assert _names(work)[:3] == ["R4", "R3", "L1"] and edit.selected == ids["R3"]
    assert [b.region.order for b in work.layout_blocks(0)] == list(range(len(ROWS)))
    assert editor.set_sequence(0, []) is None
