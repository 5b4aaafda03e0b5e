"""The session (no widgets): what a re-run does to a block the person edited."""
from __future__ import annotations

import pytest

from app.core import events as ev
from app.core.regions import Region


def test_rerun_keeps_the_cer_of_the_edit_not_of_the_new_ocr():
    from app.gui.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    session.current = 0
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0,
                    extra={"text_layer": "Hello world"}).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region]), work)
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats={"cer": 0.0}), work)
    assert session.edit("p1-r01", "Hello world EDITED BY HAND")
    edited_cer = work.blocks["p1-r01"].cer
    assert edited_cer and edited_cer > 0.3
    # OCR runs again and reads the page perfectly: the block still shows the edit, so its badge keeps the edit's CER
    change = session.apply(ev.RegionFinished(region_id="p1-r01", text="Hello world", stats={"cer": 0.0}), work)
    block = work.blocks["p1-r01"]
    assert change.conflicts == ["p1-r01"] and block.markdown.endswith("EDITED BY HAND")
    assert block.cer == pytest.approx(edited_cer)


def test_exported_json_keeps_each_blocks_engine_and_stats():
    from app.gui.export import to_json_dict
    from app.gui.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0).to_dict()
    session.apply(ev.LayoutDone(page=0, regions=[region]), work)
    session.apply(ev.RegionFinished(region_id="p1-r01", text="Hi", stats={"engine": "classic", "ms": 3.0}), work)
    block = to_json_dict(work)["pages"][0]["blocks"][0]
    assert block["engine"] == "classic" and block["stats"]["ms"] == 3.0


def test_cer_badge_reads_sensibly_for_garbage_output(qtbot):
    from app.core.regions import Region
    from app.gui.block_bar import BlockBar
    from app.gui.session import Block

    bar = BlockBar()
    qtbot.addWidget(bar)
    region = Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0)
    bar.show_block(Block(region, cer=0.034, reference="abc"))
    assert bar.badge.text() == "CER 3.4%"
    bar.show_block(Block(region, cer=32.833, reference="abc"))
    assert bar.badge.text() == "CER > 100%" and "3283.3%" in bar.badge.toolTip()
