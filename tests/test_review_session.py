"""The review session (core, no widgets): what runs, re-runs, cancels and failures do to blocks and edits."""
from __future__ import annotations

import pytest

from app.core.record import events as ev
from app.core.document.regions import Region


def _one_block_session(text_layer: str = "Hello world"):
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    session.current = 0
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0,
                    extra={"text_layer": text_layer}).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region]), work)
    return session, work


def test_the_same_ocr_again_over_an_edit_is_no_conflict():
    session, work = _one_block_session()
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats={"ms": 1.0}), work)
    assert session.edit("p1-r01", "Hello world EDITED BY HAND")
    for _ in range(3):  # re-run after re-run reads what it read before: nothing to resolve, the edit stays
        change = session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats={"ms": 1.0}), work)
        assert change.conflicts == [] and work.blocks["p1-r01"].pending_ocr is None
    assert work.blocks["p1-r01"].markdown == "Hello world EDITED BY HAND"


def test_a_changed_ocr_under_an_edit_is_a_conflict_that_says_what_changed_and_keeps_the_edits_cer():
    session, work = _one_block_session()
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hel1o world", stats={"ms": 1.0}), work)
    assert session.edit("p1-r01", "Hello world EDITED BY HAND")
    edited_cer = work.blocks["p1-r01"].cer
    assert edited_cer and edited_cer > 0.3
    change = session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats={"ms": 1.0}), work)
    block = work.blocks["p1-r01"]
    assert change.conflicts == ["p1-r01"] and block.markdown.endswith("EDITED BY HAND")
    assert (block.previous_ocr, block.pending_ocr) == ("Hel1o world", "Hello world")  # what the bar shows
    assert block.cer == pytest.approx(edited_cer)  # the badge measures the text shown: the edit
    session.keep_edit("p1-r01")  # kept: the next comparison is against the newest OCR
    change = session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats={"ms": 1.0}), work)
    assert change.conflicts == [] and block.pending_ocr is None


def _page_of(n: int):
    return [Region(id=f"p1-r{i + 1:02d}", page=0, box=(0, 10 * i, 10, 10 * i + 9), label="text", task="text",
                   order=i).to_dict() for i in range(n)]


def test_a_cancelled_rerun_keeps_old_text_and_status_and_says_how_far_it_got():
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    session.apply(ev.RunStarted(engine="classic"), work)
    session.apply(ev.LayoutDone(page=0, regions=_page_of(5)), work)
    for i in range(5):
        session.apply(ev.RegionFinished(region_id=f"p1-r{i + 1:02d}", text=f"old {i}", stats={"ms": 1.0}), work)
    session.apply(ev.RunFinished(stats={"engine": "classic"}), work)
    assert work.summary() == "5 blocks"
    # F5: the page is laid out again (no text in the new regions), two blocks are re-read, then Cancel
    session.plan_run(work, None)
    session.apply(ev.RunStarted(engine="classic"), work)
    session.apply(ev.LayoutDone(page=0, regions=_page_of(5)), work)
    assert [b.markdown for b in work.ordered()] == [f"old {i}" for i in range(5)]
    assert all(b.status == "done" for b in work.ordered())  # not "pending" while showing old text
    session.apply(ev.RegionStarted(region_id="p1-r01", page=0, task="text", engine="classic"), work)
    session.apply(ev.RegionFinished(region_id="p1-r01", text="new 0", stats={"ms": 1.0}), work)
    session.apply(ev.RegionStarted(region_id="p1-r02", page=0, task="text", engine="classic"), work)
    session.apply(ev.RegionFinished(region_id="p1-r02", text="new 1", stats={"ms": 1.0}), work)
    session.apply(ev.RegionStarted(region_id="p1-r03", page=0, task="text", engine="classic"), work)
    session.apply(ev.RunCancelled(where="decoding"), work)
    assert [b.markdown for b in work.ordered()] == ["new 0", "new 1", "old 2", "old 3", "old 4"]
    assert [b.status for b in work.ordered()] == ["done"] * 5  # the one cut off keeps its previous reading
    assert work.summary() == "cancelled (2 of 5 re-read)"


def test_a_cancelled_page_rerun_counts_the_blocks_it_set_out_to_read():
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    session.apply(ev.LayoutDone(page=0, regions=_page_of(3)), work)
    for i in range(3):
        session.apply(ev.RegionFinished(region_id=f"p1-r{i + 1:02d}", text=f"old {i}", stats={"ms": 1.0}), work)
    session.plan_run(work, [0])  # Shift+F5: the laid-out page again, its layout re-announced with its readings
    session.apply(ev.RunStarted(engine="classic"), work)
    session.apply(ev.LayoutDone(page=0, regions=[b.region.to_dict() for b in work.ordered()]), work)
    session.apply(ev.RegionFinished(region_id="p1-r01", text="new 0", stats={"ms": 1.0}), work)
    session.apply(ev.RunCancelled(), work)
    assert work.summary() == "cancelled (1 of 3 re-read)"
    assert [b.markdown for b in work.ordered()] == ["new 0", "old 1", "old 2"]


def test_a_failed_run_says_failed_and_why():
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    session.apply(ev.RunStarted(engine="gravity"), work)
    change = session.apply(ev.ErrorRaised("engine 'gravity' cannot be used: no weights", where="loading_model"),
                           work)
    assert change.run_state and work.summary() == "failed: engine 'gravity' cannot be used: no weights"
    session.apply(ev.ErrorRaised("a page could not be rendered", fatal=False), work)  # a warning is no failure
    assert work.summary().startswith("failed: engine")


def test_exported_json_keeps_each_blocks_engine_and_stats():
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region], dpi=144.0, width_pt=100, height_pt=100), work)
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hi", stats={"engine": "classic", "ms": 3.0}), work)
    block = work.to_output().to_dict()["pages"][0]["blocks"][0]
    assert block["engine"] == "classic" and block["stats"]["ms"] == 3.0 and block["status"] == "done"


def test_cer_badge_reads_sensibly_for_garbage_output(qtbot):
    from app.core.document.regions import Region
    from app.gui.block_bar import BlockBar
    from app.core.review.document import Block

    bar = BlockBar()
    qtbot.addWidget(bar)
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0)
    bar.show_block(Block(region, cer=0.034, reference="abc"))
    assert bar.badge.text() == "CER 3.4%"
    bar.show_block(Block(region, cer=32.833, reference="abc"))
    assert bar.badge.text() == "CER > 100%" and "3283.3%" in bar.badge.toolTip()


def test_the_block_bar_shows_what_a_conflicting_reading_changed(qtbot):
    from app.gui.block_bar import BlockBar

    session, work = _one_block_session()
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Total: 1,204", stats={"ms": 1.0}), work)
    session.edit("p1-r01", "Total: 1,204 (checked)")
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Total: 1,284", stats={"ms": 1.0}), work)
    bar = BlockBar()
    qtbot.addWidget(bar)
    bar.show_block(work.blocks["p1-r01"])
    label = bar.conflict_label.text()
    assert not bar.conflict.isHidden()
    assert "line-through;\">0</span>" in label and "#abebc6;\">8</span>" in label  # 0 went, 8 came


def test_work_from_an_older_trace_without_page_frames_still_exports_its_blocks():
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("old.pdf")
    region = Region(id="p1-r01", page=0, box=(0, 0, 144, 20), label="text", task="text", order=0, dpi=144.0,
                    box_pt=(0, 0, 72, 10)).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region]), work)  # a v0.1 trace: no frame in LayoutDone
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Still here", stats={"ms": 1.0}), work)
    out = work.to_output()
    assert out.to_markdown() == '<a id="page-1"></a>\n\nStill here\n'
    assert out.to_dict()["pages"][0]["dpi"] == 144.0


def test_a_rerun_that_reads_the_same_text_shows_the_formatted_markdown_again_not_the_streamed_text():
    """A heading or a formula streams as raw text; once read it is Markdown ("# …", "$$ … $$"). Read again with
    the same result, the block must not stay at the raw text it streamed (seen in the window after F5)."""
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    regions = [Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="doc_title", task="text", order=0).to_dict(),
               Region(id="p1-r02", page=0, box=(0, 20, 10, 30), label="formula", task="formula", order=1).to_dict()]
    texts = {"p1-r01": "Quarterly Report", "p1-r02": "E = mc^2"}
    shown = []
    for _ in range(3):  # the first run, then two re-runs of the page (which keep its layout, as F5 does)
        session.plan_run(work, None)
        session.apply(ev.RunStarted(engine="gravity"), work)
        session.apply(ev.LayoutDone(page=0, regions=regions), work)
        regions = [b.region.to_dict() for b in work.ordered()]  # the page's regions as read, announced again
        for rid, text in texts.items():
            session.apply(ev.RegionStarted(region_id=rid, page=0, task="text", engine="gravity"), work)
            session.apply(ev.TokensCommitted(region_id=rid, step=0, tokens=[1], text=text, ms=1.0), work)
            assert work.blocks[rid].markdown == text  # streaming: the raw text
            session.apply(ev.RegionFinished(region_id=rid, text=text, stats={"ms": 1.0}), work)
        session.apply(ev.RunFinished(stats={"engine": "gravity"}), work)
        shown.append([b.markdown for b in work.ordered()])
    assert shown == [["# Quarterly Report", "$$\nE = mc^2\n$$"]] * 3


def test_the_journal_snapshot_is_plain_data_that_later_changes_do_not_reach():
    """The journal writes `Session.to_dict()` in its own thread while the window goes on changing the work: the
    snapshot must be a copy (each region copied once; pages without their regions), and read back the same."""
    from dataclasses import asdict

    from app.core.review.document import DocumentWork

    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region], width_pt=100.0, height_pt=100.0, dpi=144.0, width_px=200,
                                height_px=200), work)
    stats = {"stopped": "stop", "line_stats": [{"text": "Hello world", "words": [[0, 0, 5, 10, "Hello", 0.9]]}]}
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats=stats), work)
    work.pages[0].stages["layout"] = 12.5
    snapshot = session.to_dict()
    (doc,) = snapshot["documents"]
    (block,) = doc["blocks"]
    assert block == {**asdict(work.blocks["p1-r01"]), "region": work.blocks["p1-r01"].region.to_dict()}
    assert doc["pages"][0]["stages"] == {"layout": 12.5} and doc["pages"][0]["regions"] == []
    work.blocks["p1-r01"].region.extra["stats"]["line_stats"][0]["words"][0][4] = "Jello"
    work.blocks["p1-r01"].markdown = "changed"
    work.pages[0].stages["layout"] = 99.0
    assert block["region"]["extra"]["stats"]["line_stats"][0]["words"][0][4] == "Hello"
    assert block["markdown"] != "changed" and doc["pages"][0]["stages"] == {"layout": 12.5}
    assert DocumentWork.from_dict(doc).to_dict() == doc
