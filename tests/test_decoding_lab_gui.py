"""The decoding lab in the real window, on the bundled sample's recorded run (resources/traces/sample-builtin.jsonl,
the built-in model on resources/samples/sample.pdf): the acceptance map colours every decoded region by its TPF
with the JSON export's numbers, the report pane charts acceptance from the trace alone, and a sweep over B 4–64 on
the built-in model writes AR's text at every B. Screenshots go to tests/artifacts/."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "resources" / "traces" / "sample-builtin.jsonl"


@pytest.fixture
def replayed(qtbot, monkeypatch):
    from app.gui.main_window import MainWindow

    monkeypatch.chdir(ROOT)  # the trace names its document relative to the repository
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 950)
    w.show()
    qtbot.waitExposed(w)
    w.views.player.set_speed(0.0)
    w.open_trace(TRACE)
    w.views.player.play_all()
    qtbot.waitUntil(lambda: w.views.player.position == len(w.views.recording), timeout=15_000)
    w.views.flush()
    return w


def test_the_acceptance_map_colours_each_decoded_region_with_the_json_numbers(qtbot, replayed, artifacts_dir):
    from app.core.pipeline.output import block_dict
    from app.core.record.acceptance import analyse
    from app.core.record.trace import read_trace

    w = replayed
    amap = w.acceptance_map
    assert amap.action in w.actions.menus["&View"].actions() and not amap.fills
    amap.button.click()  # the page view's own toggle
    qtbot.waitUntil(lambda: len(amap.fills) >= 8, timeout=5_000)
    assert amap.shown and amap.legend.isVisible() and amap.legend.block_size == 16
    report = analyse(read_trace(TRACE))
    assert {r.region_id for r in report.regions} == set(amap.fills)
    for rid, fill in amap.fills.items():
        exported = block_dict(w.page_view.region_items[rid].region)  # what the JSON writes for the block
        assert round(fill.figures["tpf"], 3) == exported["tpf"] == round(report.region(rid).tpf, 3)
        assert round(fill.figures["mean_accepted"], 3) == exported["mean_accepted"]
        assert f"TPF {exported['tpf']:.2f}" in fill.toolTip()
    table, text = amap.fills["p1-r06"].colour, amap.fills["p1-r05"].colour
    assert table.red() > table.green() and text.green() > text.red()  # TPF 2.25 reads red, 8.08 green
    w.grab().save(str(artifacts_dir / "acceptance_map.png"))
    amap.action.setChecked(False)
    assert not amap.fills and not amap.legend.isVisible()


def test_the_map_survives_the_page_placing_its_regions_again(qtbot, replayed):
    """The page view replaces its region frames (a page turn, an edit): the fills that were their children go with
    them, and the map puts new ones on the new frames instead of touching the dead ones."""
    w = replayed
    amap = w.acceptance_map
    amap.action.setChecked(True)
    qtbot.waitUntil(lambda: len(amap.fills) >= 8, timeout=5_000)
    before = set(amap.fills)
    regions = [item.region for item in w.page_view.region_items.values()]
    w.page_view.set_regions(regions)  # the old frames (and their fills) are deleted here
    amap.refresh()
    assert set(amap.fills) == before
    for rid, fill in amap.fills.items():
        assert fill.parentItem() is w.page_view.region_items[rid] and "TPF" in fill.toolTip()


def test_the_report_pane_charts_acceptance_from_the_recorded_trace(qtbot, replayed, artifacts_dir, tmp_path):
    w = replayed
    pane = w.decoding_report
    w.views_dock.show()
    w.views.tabs.setCurrentWidget(pane.tab)
    pane.refresh(force=True)
    assert [t.name for t in pane.by_kind.rows] == ["text", "title", "table", "formula"]
    table = next(t for t in pane.by_kind.rows if t.name == "table")
    assert round(table.tpf, 2) == 2.25 and table.judged > 0
    assert {t.name for t in pane.by_class.rows} >= {"letters", "digits", "whitespace"}
    assert [t.name for t in pane.by_position.rows][:3] == ["1", "2", "3"]
    assert pane.strip.pages and pane.strip.pages[0][0] == 0
    assert "8 decoded regions" in pane.summary.text()
    written = pane.export_to(tmp_path / "report")
    assert {p.name for p in written} >= {"report.html", "report.png", "map-p1.png", "report.json"}
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html and "http" not in html and "p1-r06" in html
    pane.grab().save(str(artifacts_dir / "decoding_report_pane.png"))


def test_a_sweep_over_b_4_to_64_on_the_builtin_model_writes_ar_text_at_every_b(qtbot, replayed, artifacts_dir):
    if not (ROOT / "models" / "builtin" / "model.safetensors").is_file():
        pytest.skip("missing part: the built-in model (models/builtin)")
    w = replayed
    pane = w.decoding_report
    w.views.tabs.setCurrentWidget(pane.tab)
    pane.refresh(force=True)
    sweep = pane.sweep
    sweep.start(["p1-r02", "p1-r07"], blocks=(4, 8, 16, 32, 64))
    qtbot.waitUntil(lambda: sweep.result is not None or "failed" in sweep.status.text(), timeout=120_000)
    result = sweep.result
    assert result is not None, sweep.status.text()
    assert [p.block_size for p in result.points if p.region_id == "p1-r02"] == [0, 4, 8, 16, 32, 64]
    for rid in ("p1-r02", "p1-r07"):
        texts = {p.text for p in result.points if p.region_id == rid}
        assert len(texts) == 1 and texts != {""}, texts  # every B wrote AR's text
    assert not result.mismatches() and "exactly AR" in sweep.verdict.text()
    forwards = [s.forwards for s in result.summary() if s.block_size]
    assert forwards[0] > forwards[-1]  # larger blocks: fewer forwards on these clean lines
    assert result.best() in (4, 8, 16, 32, 64) and sweep.use_button.isEnabled()
    sweep.use_button.click()
    assert w.settings.get("block_size") == result.best()
    pane.grab().save(str(artifacts_dir / "block_size_sweep.png"))
