"""A person's layout fixes (core, no widgets): every edit changes only what it says, keeps ids stable, marks the
page as laid out by a person, and its before/after snapshots restore the page exactly (undo/redo); a run request
carries the person's regions."""
from __future__ import annotations

import json

import pytest

from app.core.record import events as ev
from app.core.document.regions import Region
from app.core.review.region_edits import PERSON_LAYOUT, USER_FIXED, RegionEditor, fixed_layouts, restore
from app.core.review.session import Session


def _work():
    session = Session()
    work = session.add_document("doc.pdf")
    session.current = 0
    regions = [Region(id=f"p1-r0{i + 1}", page=0, box=(0, 0, 0, 0), label="text", task="text", order=i,
                      box_pt=(50, 100 + 60 * i, 300, 140 + 60 * i), dpi=144).to_dict() for i in range(3)]
    for r in regions:
        r["box"] = [v * 2 for v in r["box_pt"]]
    session.apply(ev.LayoutDone(page=0, regions=regions, source="pymupdf", dpi=144, width_pt=595, height_pt=842,
                                width_px=1190, height_px=1684), work)
    for i in range(3):
        session.apply(ev.RegionFinished(f"p1-r0{i + 1}", f"line {i + 1}", {"stopped": "stop"}), work)
    return session, work


def _state(work):
    return json.dumps(work.to_dict(), sort_keys=True)


def test_moving_a_box_keeps_its_id_scales_the_pixel_box_and_undo_restores_the_page_exactly():
    session, work = _work()
    before = _state(work)
    edit = RegionEditor(work).set_box("p1-r02", (40, 150, 320, 210))
    region = work.blocks["p1-r02"].region
    assert region.box_pt == (40, 150, 320, 210) and region.box == (80, 300, 640, 420)
    assert USER_FIXED in region.flags and work.pages[0].layout == PERSON_LAYOUT
    assert work.blocks["p1-r02"].region.text == "line 2"  # its reading stays until it is read again
    after = _state(work)
    restore(work, 0, edit.before, edit.layout_before)
    assert _state(work) == before
    restore(work, 0, edit.after, PERSON_LAYOUT)
    assert _state(work) == after
    assert RegionEditor(work).set_box("p1-r02", (40, 150, 41, 151)) is None  # too small: no edit
    assert RegionEditor(work).set_box("p1-r02", (-50, 150, 320, 900)).after  # clamped to the page
    assert work.blocks["p1-r02"].region.box_pt == (0, 150, 320, 842)


def test_draw_goes_in_reading_order_where_it_stands_and_delete_renumbers():
    session, work = _work()
    edit = RegionEditor(work).add(0, (50, 145, 300, 155), label="paragraph_title")
    drawn = work.blocks["p1-u01"]
    assert edit.selected == "p1-u01" and drawn.region.task == "text" and drawn.status == "pending"
    assert [b.id for b in work.layout_blocks(0)] == ["p1-r01", "p1-u01", "p1-r02", "p1-r03"]  # below r01's top
    assert [b.region.order for b in work.layout_blocks(0)] == [0, 1, 2, 3]
    RegionEditor(work).delete("p1-r02")
    assert [b.id for b in work.layout_blocks(0)] == ["p1-r01", "p1-u01", "p1-r03"]
    assert [b.region.order for b in work.layout_blocks(0)] == [0, 1, 2]
    assert RegionEditor(work).add(0, (10, 10, 300, 30)).selected == "p1-u02"  # ids never reused on a page


def test_relabel_sets_label_and_task_split_cuts_at_a_line_merge_joins_in_reading_order():
    session, work = _work()
    RegionEditor(work).relabel("p1-r01", "table")
    assert work.blocks["p1-r01"].region.task == "table"
    RegionEditor(work).relabel("p1-r01", "table", task="formula")
    r = work.blocks["p1-r01"].region
    assert (r.label, r.task, r.extra["native_label"]) == ("table", "formula", "text")

    assert RegionEditor(work).split("p1-r02", 161) is None  # too close to its edge
    RegionEditor(work).split("p1-r02", 180)
    top, bottom = work.blocks["p1-r02"], work.blocks["p1-u01"]
    assert top.region.box_pt == (50, 160, 300, 180) and bottom.region.box_pt == (50, 180, 300, 200)
    assert top.status == bottom.status == "pending" and top.region.text == ""  # both to be read again
    assert [b.id for b in work.layout_blocks(0)] == ["p1-r01", "p1-r02", "p1-u01", "p1-r03"]

    RegionEditor(work).merge("p1-r03", "p1-r01")  # either order: the earlier one keeps its id
    merged = work.blocks["p1-r01"].region
    assert "p1-r03" not in work.blocks and merged.box_pt == (50, 100, 300, 260)
    assert merged.text == "line 1\nline 3"
    change = session.reassemble(work, 0)
    assert "p1-r01" in change.blocks or work.blocks["p1-r01"].markdown.startswith("line 1")


def test_a_run_request_carries_the_persons_regions_of_the_pages_it_reads():
    from app.core.review.runs import RunController

    class Lane:
        running = False
        recorder = None

        def __init__(self):
            self.requests = []

        def submit(self, request):
            self.requests.append(request)
            return len(self.requests)

        def cancel(self, discard=False):
            pass

    session, work = _work()
    lane = Lane()
    runs = RunController(session, lane)
    from app.core.pipeline.options import PipelineOptions

    runs.start(work, PipelineOptions(engine="classic"), [0])
    assert lane.requests[-1].layouts == {}  # the layout's own page: laid out again as usual
    RegionEditor(work).add(0, (50, 400, 300, 440))
    runs.start(work, PipelineOptions(engine="classic"), [0])
    sent = lane.requests[-1].layouts
    assert list(sent) == [0] and [r["id"] for r in sent[0]] == [b.id for b in work.layout_blocks(0)]
    assert fixed_layouts(work, [1]) == {}


def test_a_fresh_pipeline_reads_the_persons_regions_instead_of_laying_the_page_out(tmp_path):
    from app.core.pipeline.options import PipelineOptions
    from app.core.review.runner import PipelineRunner, RunRequest
    from app.core.document.sample_documents import make_sample_pdf
    from app.core.base.cancel import CancelToken

    pdf = make_sample_pdf(tmp_path / "one.pdf", pages=1)
    mine = Region(id="p1-u01", page=0, box=(120, 200, 1000, 260), label="text", task="text", order=0,
                  box_pt=(60, 100, 500, 130), dpi=144, source=PERSON_LAYOUT, flags=[USER_FIXED],
                  extra={"stats": {"old": 1}}, text="stale")
    events: list = []
    runner = PipelineRunner()
    try:
        out = runner.run(RunRequest(str(pdf), PipelineOptions(engine="classic", ocr_dpi=100), [0],
                                    layouts={0: [mine.to_dict()]}), events.append, CancelToken())
    finally:
        runner.close()
    layout = next(e for e in events if isinstance(e, ev.LayoutDone))
    assert [r["id"] for r in layout.regions] == ["p1-u01"] and layout.source == PERSON_LAYOUT
    assert out.pages[0].layout == PERSON_LAYOUT and [r.id for r in out.pages[0].regions] == ["p1-u01"]
    region = out.pages[0].regions[0]
    assert region.text and region.text != "stale" and "old" not in region.extra["stats"]  # read now, from its box
    assert pytest.approx(region.box_pt) == (60, 100, 500, 130)
