"""The decoding debugger in the real window (pytest-qt, offscreen): a run of the SHIPPED built-in model on a degraded
line, recorded to a trace and replayed; clicking the rejected cell of a round opens the reject inspector with the
numbers the round carried; the closest calls list is sorted by margin and jumps to its round; the probability tint
colours the unsure characters. Screenshot: tests/artifacts/inspector_builtin_rejected.png."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from app.core.record.events import RegionFinished, RegionStarted, RoundVerified, RunFinished, RunStarted  # noqa: E402
from app.core.record.trace import write_trace  # noqa: E402

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
pytestmark = [pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(), reason="missing part: no shipped built-in model (models/builtin/model.safetensors)")]


def degraded_lines(lines: list[str], size: int = 26, blur: float = 1.3):
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    font = ImageFont.truetype(DEJAVU, size)
    step = int(size * 1.8)
    img = Image.new("RGB", (int(max(font.getlength(t) for t in lines)) + 40, step * len(lines) + 20), "white")
    draw = ImageDraw.Draw(img)
    for i, t in enumerate(lines):
        draw.text((20, 10 + i * step), t, font=font, fill="black")
    return img.filter(ImageFilter.GaussianBlur(blur))


@pytest.fixture(scope="module")
def builtin_trace(tmp_path_factory):
    from app.core.engines import open_engine

    engine = open_engine("builtin", device="cpu", mode="selfspec")
    events: list = [RunStarted(engine="builtin", document="degraded.png", model="builtin", device="cpu",
                               block_size=engine.block_size)]
    img = degraded_lines(["Invoice 48213: rnrn clltl 0O0O l1I| 7,85", "Scriptorium reads faded print, 1/2 lb"], blur=1.7)
    result = engine.decode_region(img, "text", region_id="p1-r01", emit=events.append)
    events.append(RunFinished(stats={"regions": 1}))
    path = write_trace(tmp_path_factory.mktemp("dbg") / "builtin.jsonl", events)
    return path, events, result


def replayed_window(qtbot, path, events):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.views.player.set_speed(0.0)
    w.open_trace(path)
    w.views.player.play_all()
    qtbot.waitUntil(lambda: w.views.player.position == len(events), timeout=20_000)
    w.views.flush()
    return w


def test_clicking_a_rejected_cell_opens_the_inspector(qtbot, builtin_trace, artifacts_dir):
    path, events, result = builtin_trace
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    rejected = [e for e in rounds if e.k < len(e.candidates) and e.inspected]
    assert len(rejected) >= 2, "the degraded line should make the built-in model reject drafts"
    w = replayed_window(qtbot, path, events)
    view = w.views.tabs.currentWidget()
    assert view is w.views.rounds_view
    view.show_region("p1-r01")
    target = max(rejected, key=lambda e: len(e.candidates) - e.k)  # a rejection early in its block: red + discards
    index = rounds.index(target)
    view.select_round(index)
    view.strip.show_round(view.region().rounds[index], animate=False)
    qtbot.wait(30)
    cell = view.strip.cell_rect(target.k).center()
    qtbot.mouseClick(view.strip, Qt.MouseButton.LeftButton, pos=QPoint(int(cell.x()), int(cell.y())))
    assert view.side.currentWidget() is view.inspector and view.inspector.position == target.k
    slot = view.inspector.slot
    assert slot is not None and slot == target.inspected[0]
    lines = view.inspector.lines()
    assert f"round {target.round_index + 1}" in lines[0] and f"slot {target.k}" in lines[0]
    assert lines[1].startswith("REJECTED") and f"margin {slot.margin:.3f}" in lines[2]
    assert lines[3].startswith("context: …")
    from PySide6.QtWidgets import QDockWidget

    dock = next(d for d in w.findChildren(QDockWidget) if d.isAncestorOf(w.views))
    w.resizeDocks([dock], [520], Qt.Orientation.Vertical)  # room for the five ranked bars of each chart
    qtbot.wait(50)
    w.views.render_frame(paint_now=True)
    w.grab().save(str(artifacts_dir / "inspector_builtin_rejected.png"))
    # an accepted cell of the same round: the verifier's probability of its token, and what was not recorded
    if target.k > 1:
        cell = view.strip.cell_rect(1).center()
        qtbot.mouseClick(view.strip, Qt.MouseButton.LeftButton, pos=QPoint(int(cell.x()), int(cell.y())))
        assert view.inspector.position == 1 and view.inspector.slot is None
        assert view.inspector.lines()[1].startswith("accepted") and "p = " in view.inspector.lines()[2]


def test_closest_calls_are_sorted_by_margin_and_jump_to_their_round(qtbot, builtin_trace):
    path, events, _result = builtin_trace
    w = replayed_window(qtbot, path, events)
    view = w.views.rounds_view
    view.show_region("p1-r01")
    view.side.setCurrentWidget(view.calls)
    calls = view.calls
    assert calls.count() >= 2
    margins = [float(calls.item(i).text().split()[1]) for i in range(calls.count())]
    assert margins == sorted(margins)
    item = calls.item(calls.count() - 1)
    index, position = item.data(Qt.ItemDataRole.UserRole)
    rect = calls.visualItemRect(item)
    qtbot.mouseClick(calls.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.selected == index and view.inspector.position == position
    assert view.side.currentWidget() is view.inspector and view.strip.record is view.region().rounds[index]


def test_probability_tint_marks_the_unsure_characters(qtbot, builtin_trace):
    from PySide6.QtGui import QTextCursor

    path, events, result = builtin_trace
    w = replayed_window(qtbot, path, events)
    view = w.views.rounds_view
    view.show_region("p1-r01")
    before = view.text.toPlainText()
    view.tint_box.setChecked(True)
    # the rounds view shows the text the block got (what the engine settled with the recogniser), and the decoder's
    # own reading under each line where the two differ, tinted by its rounds
    shown = view.text.toPlainText()
    assert shown == before
    for line in result.stats["line_stats"]:
        assert line["text"] in shown
        if line.get("decoder_text") not in (None, line["text"]):
            assert "decoder: " + line["decoder_text"] in shown and view.text.document_mode
    reg = view.region()
    spans = [s for rec in reg.rounds for s in rec.char_probs()]
    unsure = min(spans, key=lambda s: s[2])
    sure = max(spans, key=lambda s: s[2])
    assert unsure[2] < 0.9 and sure[2] > 0.95

    def alpha_at(pos: int) -> float:
        cur = QTextCursor(view.text.document())
        cur.setPosition(pos + 1)
        return cur.charFormat().background().color().alphaF() if cur.charFormat().background().style() else 0.0

    shown_at = view.text.shown_position  # a character of the decoder's output, where the panel shows it
    assert shown_at(unsure[0]) >= 0 and shown_at(sure[0]) >= 0
    assert alpha_at(shown_at(unsure[0])) > alpha_at(shown_at(sure[0]))
    view.tint_box.setChecked(False)
    assert view.text.toPlainText() == before


def test_ab_view_of_block_size_8_against_16_on_one_region(qtbot, tmp_path, artifacts_dir):
    """The same region read by the shipped model with B=8 and B=16, recorded to two traces and loaded into the A/B
    tab of the real window: the same tokens (self-spec is exact at any B), so no divergence; each side's own TPF,
    time and rounds."""
    from PySide6.QtWidgets import QDockWidget

    from app.core.engines import open_engine
    from app.core.record.trace_compare import regions_of

    img = degraded_lines(["Scriptorium reads faded print line by line.", "Order No. 48213, due 2025-01-31"],
                         blur=0.9)
    paths, runs = {}, {}
    for block in (8, 16):
        engine = open_engine("builtin", device="cpu", mode="selfspec", block_size=block)
        events: list = [RunStarted(engine="builtin", model="builtin", device="cpu", dtype="fp32", block_size=block)]
        runs[block] = engine.decode_region(img, "text", region_id="p1-r03", emit=events.append)
        paths[block] = write_trace(tmp_path / f"b{block}.jsonl", events)
    assert runs[8].tokens == runs[16].tokens and runs[8].stats["rounds"] > runs[16].stats["rounds"]
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    ab = w.views.ab_view
    w.views.tabs.setCurrentIndex(2)
    ab.load_trace("a", paths[8])
    ab.load_trace("b", paths[16])
    reg = ab.shown()
    assert reg is not None and reg.region_id == "p1-r03" and reg.divergence is None and reg.same_text
    assert "B=8" in ab.head_a.text() and "B=16" in ab.head_b.text()
    assert f"TPF {reg.a.tpf:.2f}" in ab.head_a.text() and reg.a.tpf < reg.b.tpf
    assert ab.verdict.text().startswith("Same tokens")
    assert ab.text_a.toPlainText() == ab.text_b.toPlainText() == runs[8].text
    assert len(regions_of(w.views.ab_view._events["a"])["p1-r03"].rounds) == runs[8].stats["rounds"]
    dock = next(d for d in w.findChildren(QDockWidget) if d.isAncestorOf(w.views))
    w.resizeDocks([dock], [520], Qt.Orientation.Vertical)
    qtbot.wait(50)
    w.grab().save(str(artifacts_dir / "ab_builtin_b8_vs_b16.png"))


def test_ab_view_marks_the_first_divergence_with_both_distributions(qtbot, tmp_path, builtin_trace, artifacts_dir):
    """A run against a copy whose region ended differently: the first differing token is named, and the bars show
    what each side's verifier believed there (the shipped model, its own inspector records)."""
    import dataclasses

    _path, events, _result = builtin_trace
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    # B: the same run, but from the first rejected round on, the verifier's runner-up wins (a checkpoint that
    # leaned the other way at the closest call)
    target = min((e for e in rounds if e.k < len(e.candidates) and e.inspected), key=lambda e: e.inspected[0].margin)
    slot = target.inspected[0]
    other, other_text = slot.verify_top[1], slot.verify_texts[1]
    changed = []
    for e in events:
        if e is target:
            new = list(e.new_tokens[:-1]) + [other]
            e = dataclasses.replace(e, new_tokens=new, text=e.text[: len(e.text) - len(slot.verify_texts[0])] + other_text)
        elif isinstance(e, RegionFinished):
            pos = sum(len(r.new_tokens) for r in rounds[: rounds.index(target) + 1]) - 1
            e = dataclasses.replace(e, tokens=e.tokens[:pos] + [other] + e.tokens[pos + 1:], text=e.text + "?")
        changed.append(e)
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    ab = w.views.ab_view
    w.views.tabs.setCurrentIndex(2)
    comp = ab.compare(events, changed, name_a="recorded", name_b="changed")
    d = comp.regions[0].divergence
    start = sum(len(r.new_tokens) for r in rounds[: rounds.index(target)])
    assert d is not None and d.index == start + target.k and d.b_token == other
    assert d.a_slot == slot and "First divergence at output token" in ab.verdict.text()
    assert ab.bars.diff is comp.regions[0]
    ab.grab().save(str(artifacts_dir / "ab_first_divergence.png"))
