"""The decoding dock with two documents whose region ids repeat (the bundled samples: sample.pdf and carbon-copy.jpg
both have a `p1-r01`), in the real window, offscreen, with the shipped built-in model (no mocked decoder) and its
recorded traces (resources/traces): each document's rounds stay its own, the dock follows the selected document and
names it, a round's highlight lands in that document's editor; the text panel shows the text the document got, the
decoder's own reading under each line it read otherwise and why (live, replayed, and in the A/B tab); a round cut at
a stop token greys the slots after it and no figure counts them. Screenshots land in tests/artifacts/."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from app.core.base.paths import resources_dir

SAMPLES = resources_dir() / "samples"
TRACES = resources_dir() / "traces"


def _window(qtbot, size=(1440, 900)):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    qtbot.wait(50)
    return w


def _select(qtbot, w, name: str):
    row = next(i for i, d in enumerate(w.session.documents) if Path(d.path).name == name)
    w.documents.setCurrentRow(row)  # as a person clicks it in the list
    assert w.work is w.session.documents[row]
    if "p1-r01" in w.work.blocks:  # read: the page and its regions are drawn
        qtbot.waitUntil(lambda: "p1-r01" in w.page_view.region_items, timeout=20_000)
    w.redraw()
    w.views.flush()
    return w.work


def _editor_selection(w) -> str:
    spans = [s for s in w.editor.extraSelections() if s.cursor.hasSelection()]
    assert spans, "nothing highlighted in the editor"
    return spans[-1].cursor.selectedText()


def _check_document_shown(w, work):
    """The dock shows `work`'s rounds, names it, and its region box lists that document's regions only."""
    views, rv = w.views, w.views.rounds_view
    name = Path(work.path).name
    assert Path(views.document).name == name
    assert name in rv.document_label.text() and rv.document_label.isVisible()
    listed = [rv.region_box.itemData(i) for i in range(rv.region_box.count())]
    assert listed and set(listed) <= set(work.blocks)
    reg = views.rounds_model.regions["p1-r01"]
    assert reg.final_text == work.blocks["p1-r01"].raw_text  # this document's reading, not the other's
    return reg


def _click_round(qtbot, w, index: int):
    rv = w.views.rounds_view
    rv.show_region("p1-r01")
    with qtbot.waitSignal(w.views.round_selected, timeout=2000) as sig:
        rv.select_round(index)
    return sig.args


def _round_inside(reg, needle: str) -> int:
    """The first round that wrote a character of the decoder's output at `needle`."""
    at = reg.text.index(needle)
    return reg.round_at(at).index


def test_two_documents_read_live_keep_their_own_rounds_text_and_highlights(qtbot, artifacts_dir):
    w = _window(qtbot)
    w.engine_bar.set_engine("builtin")
    sample, carbon = str(SAMPLES / "sample.pdf"), str(SAMPLES / "carbon-copy.jpg")
    w.open_files([sample, carbon], run=False)
    docs = {Path(d.path).name: d for d in w.session.documents}
    # read carbon-copy.jpg while sample.pdf is shown, then sample.pdf's first page: the dock keeps both apart
    _select(qtbot, w, "sample.pdf")
    w.run_document(work=docs["carbon-copy.jpg"])
    qtbot.waitUntil(lambda: not w.decoder.running and bool(docs["carbon-copy.jpg"].run.outcome), timeout=300_000)
    assert not w.views.rounds_model.regions, "sample.pdf is shown: carbon-copy.jpg's rounds are not drawn over it"
    w.run_document(pages=[0], work=docs["sample.pdf"])
    qtbot.waitUntil(lambda: not w.decoder.running and bool(docs["sample.pdf"].run.outcome), timeout=300_000)
    assert docs["carbon-copy.jpg"].run.outcome == docs["sample.pdf"].run.outcome == "finished"

    # sample.pdf selected: its rounds, named; a round lights up sample.pdf's region and characters
    work = _select(qtbot, w, "sample.pdf")
    reg = _check_document_shown(w, work)
    document, region, start, end = _click_round(qtbot, w, 0)
    assert (Path(document).name, region) == ("sample.pdf", "p1-r01")
    assert w.work is work and w.page_view.selected_id == "p1-r01"
    assert _editor_selection(w) and _editor_selection(w) in work.blocks["p1-r01"].markdown
    w.grab().save(str(artifacts_dir / "document_rounds_sample_1440x900.png"))

    # carbon-copy.jpg selected: its own p1-r01, its name; the A/B tab names it too
    work = _select(qtbot, w, "carbon-copy.jpg")
    reg = _check_document_shown(w, work)
    w.views.tabs.setCurrentIndex(2)
    w.views.ab_view.use_shown.click()
    assert "carbon-copy.jpg" in w.views.ab_view.document_label.text()
    w.views.tabs.setCurrentWidget(w.views.rounds_view)
    # the text panel: the document's text, the decoder's own reading under each line it read otherwise, and why
    shown = w.views.rounds_view.text.toPlainText()
    stats = work.blocks["p1-r01"].region.extra["stats"]
    differing = [s for s in stats["line_stats"] if s.get("decoder_text") not in (None, s["text"])]
    assert differing, "the carbon copy's decoder reads some lines otherwise (its recogniser was sure there)"
    for line in stats["line_stats"]:
        assert line["text"] in shown
    for line in differing:
        assert "decoder: " + line["decoder_text"] in shown
    assert any(f"◂ {why}" in shown for why in ("recogniser kept", "arbiter"))
    assert "document got" in w.views.rounds_view.text_caption.text()
    # a round inside a line the document kept from the recogniser: the editor marks that line of the block
    line = differing[0]
    index = _round_inside(reg, line["decoder_text"])
    document, region, start, end = _click_round(qtbot, w, index)
    assert Path(document).name == "carbon-copy.jpg" and w.work is work
    assert line["text"] in _editor_selection(w) or _editor_selection(w) in line["text"]
    w.grab().save(str(artifacts_dir / "document_rounds_carbon_1440x900.png"))
    w.views.grab().save(str(artifacts_dir / "document_rounds_carbon_dock.png"))

    # the stop token: slots after it are unused; the map's and the report's figures agree with the rounds view
    from app.core.record.acceptance import analyse
    from app.gui.views.acceptance_map import decoded_figures

    cut = [r for r in reg.rounds if r.cut is not None and r.cut < r.slots]
    assert cut and all(r.k > r.cut for r in cut), "the model drafts past its stop token (and the verifier agrees)"
    for rec in cut:
        assert all(rec.slot_state(i) == "unused" for i in range(rec.cut, rec.slots)) and not rec.full_accept
    used = statistics.fmean(r.used for r in reg.rounds)
    assert decoded_figures(stats)["mean_accepted"] == pytest.approx(used)
    report = analyse(w.views.recording)
    assert report.region("p1-r01").mean_accepted == pytest.approx(used)
    assert not w.views.store.dropped


def test_replayed_traces_of_two_documents_keep_their_own_rounds(qtbot, artifacts_dir):
    w = _window(qtbot, (1280, 800))
    w.views.player.set_speed(0.0)
    for name in ("sample-builtin.jsonl", "carbon-builtin.jsonl"):
        w.open_trace(TRACES / name)
        w.views.player.play_all()
        qtbot.waitUntil(lambda: w.views.player.position == len(w.views.recording), timeout=20_000)
    w.redraw()
    assert {Path(d.path).name for d in w.session.documents} == {"sample.pdf", "carbon-copy.jpg"}
    for name in ("sample.pdf", "carbon-copy.jpg", "sample.pdf"):
        work = _select(qtbot, w, name)
        _check_document_shown(w, work)
        document, region, _a, _b = _click_round(qtbot, w, 0)
        assert Path(document).name == name and w.work is work and w.page_view.selected_id == "p1-r01"
        assert _editor_selection(w) in work.blocks["p1-r01"].markdown
        if name == "carbon-copy.jpg":  # replayed: the document's text with the decoder's readings beside it
            text = w.views.rounds_view.text
            assert text.document_mode and "decoder: " in text.toPlainText()
            assert "◂ recogniser kept" in text.toPlainText() and "◂ word list" in text.toPlainText()
            w.views.grab().save(str(artifacts_dir / "document_rounds_replayed_carbon_dock.png"))
            w.grab().save(str(artifacts_dir / "document_rounds_replayed_carbon_1280x800.png"))
    # each document's recording stays its own: the playback bar scrubs sample.pdf's run only
    assert {type(e).__name__ for e in w.views.recording} >= {"RunStarted", "RoundVerified"}
    assert w.views.recording[0].document.endswith("sample.pdf")


def test_ab_view_names_the_document_and_shows_the_decoders_reading_beside_the_text(qtbot, artifacts_dir):
    from app.gui.views.ab_view import ABView

    ab = ABView()
    qtbot.addWidget(ab)
    ab.resize(1200, 600)
    ab.show()
    ab.load_trace("a", TRACES / "carbon-builtin.jsonl")
    ab.load_trace("b", TRACES / "carbon-builtin.jsonl")
    assert "carbon-copy.jpg" in ab.document_label.text()
    html = ab.text_a.toPlainText()
    assert "decoder: Received. Irom Mr. J. Halloran the sum of,.1,00.0" in html
    assert "1,250.00" in html and "◂ recogniser kept" in html and "◂ word list" in html
    ab.load_trace("b", TRACES / "sample-builtin.jsonl")
    assert "A carbon-copy.jpg" in ab.document_label.text().replace("<b>", "").replace("</b>", "")
    qtbot.wait(30)  # the row lays out the new label
    assert ab.document_label.width() >= ab.document_label.sizeHint().width()  # both names whole, not clipped
    ab.grab().save(str(artifacts_dir / "ab_view_document_and_readings.png"))


def test_slots_after_the_stop_token_are_greyed_and_not_counted(qtbot, artifacts_dir):
    """A real recorded round of the built-in model: its drafts after `<|endoftext|>` were accepted by the verifier
    (k = 17) but never output; the strip greys them, the history and the statistics do not count them."""
    from app.core.record.trace import load_trace
    from app.gui.views import DecodingViews
    from app.gui.views import colors

    trace = load_trace(TRACES / "carbon-builtin.jsonl")
    views = DecodingViews()
    qtbot.addWidget(views)
    views.resize(1280, 420)
    views.show()
    views.load_trace(trace.events, trace.times, play=False)
    views.player.play_all()
    views.flush()
    reg = views.rounds_model.regions["p1-r01"]
    rec = reg.rounds[2]
    assert rec.k == 17 and len(rec.new_tokens) == 13 and rec.cut == 13 and rec.used == 13
    assert [rec.slot_state(i) for i in (0, 12, 13, 16, 17)] == ["accepted", "accepted", "unused", "unused", "none"]
    assert "never output" in rec.describe() and not rec.full_accept
    # the statistics: of the rounds reaching slot 13, none counts it accepted unless it output a token there
    reaching = [r for r in reg.rounds if r.slots > 13 and (r.cut is None or r.cut > 13)]
    assert reg.pos_total[13] == len(reaching)
    assert reg.pos_accepted[13] == sum(1 for r in reaching if r.used > 13)
    # the strip as drawn: the stop cell accepted (labelled "stop"), the cells after it not green
    views.rounds_view.show_region("p1-r01")
    views.rounds_view.select_round(2)
    strip = views.rounds_view.strip
    strip.show_round(rec, animate=False)
    image = strip.grab().toImage()

    def colour(i: int) -> QColor:
        r = strip.cell_rect(i)
        return QColor(image.pixel(int(r.left() + 3), int(r.top() + 3)))

    green = colors.ACCEPTED
    close = lambda c, d: abs(c.red() - d.red()) + abs(c.green() - d.green()) + abs(c.blue() - d.blue()) < 40  # noqa
    assert close(colour(5), green) and close(colour(12), green)
    assert not any(close(colour(i), green) for i in range(13, 17))
    strip.grab().save(str(artifacts_dir / "round_strip_stop_token.png"))
    QTest.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(int(strip.cell_rect(15).center().x()),
                                                                   int(strip.cell_rect(15).center().y())))
    assert views.rounds_view.inspector.lines()[1].startswith("unused")
