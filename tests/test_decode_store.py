"""The decoding views keep each document's run apart (app.gui.views.decode_store): region ids repeat across documents,
so a run of one document never shows, nor is recorded, under another; what is kept is bounded to the last few
documents read. Events are the decoders' own shapes (app.bench.frames' synthetic runs)."""
from __future__ import annotations

import dataclasses
import os

from app.bench.frames import synthetic_rounds_trace
from app.core.record.events import RoundVerified, RunStarted
from app.gui.views.decode_store import KEEP_DOCUMENTS, DecodeStore, document_key, trace_document


def run_of(document: str, seed: int) -> list:
    """A self-speculative run of region p1-r01 of `document` (every document's first region has that id)."""
    events = synthetic_rounds_trace(300, block_size=8, seed=seed, region_id="p1-r01")
    return [dataclasses.replace(e, document=document) if isinstance(e, RunStarted) else e for e in events]


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, RoundVerified))


def test_the_store_is_bounded_and_never_drops_the_shown_or_the_live_document(tmp_path):
    store = DecodeStore()
    assert document_key("resources/x.pdf") == document_key(os.path.abspath("resources/x.pdf")) != document_key("")
    shown = store.open("shown.pdf")
    shown.events.append(run_of("shown.pdf", 0)[0])
    for i in range(KEEP_DOCUMENTS + 3):
        doc = store.open(f"d{i}.pdf", pinned=(shown,))
        doc.events.extend(run_of(doc.path, i)[:3])
    assert len(store) == KEEP_DOCUMENTS and "shown.pdf" in store
    assert f"d{KEEP_DOCUMENTS + 2}.pdf" in store and "d0.pdf" not in store
    assert document_key("d0.pdf") in store.dropped
    assert trace_document(run_of("a/b.pdf", 0)) == "a/b.pdf"


def test_each_document_keeps_its_own_rounds_recording_and_signals(qtbot):
    from app.gui.views import DecodingViews

    views = DecodingViews()
    qtbot.addWidget(views)
    views.resize(1200, 500)
    views.show()
    run_a, run_b, run_c = run_of("a.pdf", 1), run_of("b.pdf", 2), run_of("c.pdf", 3)
    views.show_document("a.pdf")
    for ev in run_a:
        views.feed(ev)
    views.flush()
    assert views.rounds_model.regions["p1-r01"].text == text_of(run_a)
    assert "a.pdf" in views.rounds_view.document_label.text()
    # b.pdf is read while a.pdf is shown: a.pdf's rounds and recording stay as they were
    for ev in run_b:
        views.feed(ev)
    views.flush()
    assert views.recording == run_a and views.rounds_model.regions["p1-r01"].text == text_of(run_a)
    # the person selects b.pdf: its own p1-r01, named; a round of it is b.pdf's
    views.show_document("b.pdf")
    views.flush()
    assert views.recording == run_b and views.rounds_model.regions["p1-r01"].text == text_of(run_b)
    assert "b.pdf" in views.rounds_view.document_label.text()
    assert views.rounds_view.region_box.currentData() == "p1-r01"
    with qtbot.waitSignal(views.round_selected) as sig:
        views.rounds_view.select_round(0)
    assert sig.args[:2] == ["b.pdf", "p1-r01"]
    # scrubbing b.pdf back, leaving, coming back: where it stood
    views.player.seek(5)
    views.show_document("a.pdf")
    views.show_document("b.pdf")
    assert views.player.position == 5
    # a run of a.pdf again replaces a.pdf's last run only
    for ev in run_c[:1] + [dataclasses.replace(run_c[0], document="a.pdf")] + run_c[1:]:
        views.feed(ev)  # c.pdf's RunStarted, then a.pdf's: the rounds go to a.pdf
    views.show_document("a.pdf")
    views.flush()
    assert views.rounds_model.regions["p1-r01"].text == text_of(run_c)
    views.show_document("c.pdf")
    assert not views.rounds_model.regions  # c.pdf's run began and ended with no rounds of its own
    # more documents than are kept: the oldest is dropped, and its dock says so
    for i in range(KEEP_DOCUMENTS + 1):
        for ev in run_of(f"x{i}.pdf", 10 + i)[:6]:
            views.feed(ev)
    views.show_document("b.pdf")
    views.flush()
    assert not views.rounds_model.regions and "were not kept" in views.rounds_view.hint.text()
    views.forget_document("c.pdf")  # closed: its run goes
    assert "c.pdf" not in views.store


def test_a_long_document_keeps_the_rounds_of_its_latest_regions_only(qtbot):
    """Memory stays flat over a long run: past `playback_regions` regions, the oldest regions' rounds and per-token
    events go (in batches); every region's RegionFinished (its text and statistics) stays."""
    from app.core.record.events import RegionFinished, RegionStarted
    from app.gui.views import DecodingViews

    views = DecodingViews()
    qtbot.addWidget(views)
    views.playback_regions = 20
    views.show_document("long.pdf")
    sizes = []
    for n in range(120):
        run = synthetic_rounds_trace(40, block_size=8, seed=n, region_id=f"p{n + 1}-r01")
        for ev in run[int(n > 0):-1]:  # one run: its RunStarted once, each region's events, no RunFinished
            if isinstance(ev, RegionFinished):
                ev = dataclasses.replace(ev, tokens=list(range(40)))
            views.feed(dataclasses.replace(ev, document="long.pdf") if isinstance(ev, RunStarted) else ev)
        sizes.append(len(views.recording))
    regions = views.rounds_model.regions
    assert 20 <= len(regions) <= 20 + max(4, 20 // 8) + 1 and "p120-r01" in regions and "p1-r01" not in regions
    assert max(sizes[60:]) < 2 * min(sizes[60:])  # the recording stops growing
    finished = [e for e in views.recording if isinstance(e, RegionFinished)]
    assert len(finished) == 120 and not finished[0].tokens and finished[-1].tokens  # old ones lose their tokens only
    assert sum(isinstance(e, RegionStarted) for e in views.recording) == 120
    views.flush()
    assert views.rounds_view.region_box.count() == len([r for r in regions.values() if r.rounds])


def test_trimmed_regions_keep_their_numbers_and_boxes_not_their_line_tables(qtbot):
    """What stays of a region past `playback_regions` is what the views still use (its text, its scalar figures and
    a server's, where its page's regions were), not its per-line tables nor its page's text-layer text: those are
    what made a long document's recording grow by about 40 kB a page."""
    from app.core.record.events import LayoutDone, RegionFinished
    from app.gui.views import DecodingViews

    views = DecodingViews()
    qtbot.addWidget(views)
    views.playback_regions = 10
    views.show_document("long.pdf")
    line_stats = [{"text": "a line of the page", "box": [0, 0, 10, 2], "words": [[0, 0, 1, 1]] * 5}] * 12
    for n in range(60):
        rid = f"p{n + 1}-r01"
        region = {"id": rid, "page": n, "box": [0, 0, 10, 10], "label": "text", "task": "text", "order": 0,
                  "text": "the text layer's words " * 40, "extra": {"layer_lines": [[0, 0, 1, 1]] * 30}}
        run = synthetic_rounds_trace(30, block_size=8, seed=n, region_id=rid)[:-1]
        if n == 0:
            views.feed(dataclasses.replace(run[0], document="long.pdf"))
        views.feed(LayoutDone(page=n, regions=[region]))
        for ev in run[1:]:
            if isinstance(ev, RegionFinished):
                ev = dataclasses.replace(ev, stats={**ev.stats, "line_stats": line_stats, "tpf": 2.5,
                                                    "server": {"name": "llama"}, "accepted": [3, 4, 2]})
            views.feed(ev)
    finished = {e.region_id: e for e in views.recording if isinstance(e, RegionFinished)}
    old, new = finished["p1-r01"], finished["p60-r01"]
    assert "line_stats" not in old.stats and "accepted" not in old.stats
    assert old.stats["tpf"] == 2.5 and old.stats["server"] == {"name": "llama"} and old.text
    assert new.stats["line_stats"] == line_stats and new.stats["accepted"] == [3, 4, 2]
    layouts = {e.page: e for e in views.recording if isinstance(e, LayoutDone)}
    assert len(layouts) == 60
    assert set(layouts[0].regions[0]) == {"id", "page", "box", "label", "task", "order"}
    assert layouts[59].regions[0]["text"].startswith("the text layer") and layouts[59].regions[0]["extra"]
