"""The decoding lab's core, without Qt: the acceptance report from trace events alone (each judged draft counted
once, by region kind, token class and position), the figures and HTML it is drawn as, `python -m app report` run as
a process on the committed trace, and the block-size sweep on a tiny random GlmOcr model (every B writes AR's
tokens; a decoder that changed one is reported)."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.record.acceptance import analyse, label_kind, token_class
from app.core.record.events import LayoutDone, RegionFinished, RegionStarted, RoundVerified, RunStarted

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "resources" / "traces" / "sample-builtin.jsonl"


def _run(rounds_k: list[int], block: int, texts: str, label: str = "table", task: str = "table"):
    """One region's events whose round i accepts rounds_k[i] candidates, drafted texts taken from `texts`."""
    events = [RunStarted("gravity", "doc.pdf", block_size=block),
              LayoutDone(0, [{"id": "p1-r01", "page": 0, "label": label, "task": task, "box": [10, 10, 200, 60],
                              "box_pt": [5, 5, 100, 30]}], width_px=400, height_px=300, dpi=144),
              RegionStarted("p1-r01", 0, task, "gravity")]
    pos, out = 0, 0
    for i, k in enumerate(rounds_k):
        cands = [ord(c) for c in texts[pos:pos + block + 1]]
        cand_texts = list(texts[pos:pos + block + 1])
        new = cands[:k] + ([cands[k] + 1] if k <= block else [7])
        out += len(new)
        events.append(RoundVerified("p1-r01", i, k, cands, cands, new, "".join(cand_texts[:k]) + "?", 1.0, 1.0, 0,
                                    candidate_texts=cand_texts, block_size=block, output_len=out))
        pos += k
    forwards = 2 * len(rounds_k)
    stats = {"tpf": out / forwards, "forwards": forwards, "tokens": out, "rounds": len(rounds_k),
             "mean_accepted": sum(rounds_k) / len(rounds_k), "block_size": block}
    events.append(RegionFinished("p1-r01", "x", stats))
    return events


def test_each_judged_draft_is_counted_once_and_drafts_after_a_rejection_never():
    rng = random.Random(5)
    for _ in range(50):
        block = rng.choice([4, 8, 16])
        ks = [rng.randint(1, block + 1) for _ in range(rng.randint(1, 12))]
        report = analyse(_run(ks, block, "".join(rng.choice("ab1 <td>\\x,") for _ in range(400))))
        judged = sum(min(k, block) for k in ks)  # drafts 1..k (the k-th rejected) or all B when none was
        accepted = sum(k - 1 for k in ks)
        for buckets in (report.by_kind, report.by_class, report.by_position):
            assert sum(t.judged for t in buckets) == judged and sum(t.accepted for t in buckets) == accepted
        assert report.by_position[0].judged == len(ks)  # every round judges its first draft
        (region,) = report.regions
        assert region.tpf == pytest.approx(report.by_kind[0].tpf) and region.kind == "table"


def test_token_classes_see_markup_and_latex_spelt_one_character_at_a_time():
    assert [token_class("x", c) for c in "a7, "] == ["letters", "digits", "punctuation", "whitespace"]
    assert token_class("<t", "d") == "markup" and token_class("", "<td>") == "markup"
    assert token_class("<td>", "7") == "digits"  # the tag closed
    assert token_class("x + \\fr", "a") == "latex" and token_class("", "\\alpha") == "latex"
    assert token_class("", "") == "other"
    assert label_kind("doc_title", "text") == "title" and label_kind("table", "table") == "table"
    assert label_kind("formula", "formula") == "formula" and label_kind("text", "text") == "text"


def test_the_committed_sample_trace_reports_per_region_figures_equal_to_its_statistics():
    from app.core.record.trace import read_trace

    events = read_trace(TRACE)
    report = analyse(events)
    stats = {e.region_id: e.stats for e in events if isinstance(e, RegionFinished) and e.stats.get("forwards")}
    assert {r.region_id for r in report.regions} == set(stats)
    for r in report.regions:
        assert r.tpf == stats[r.region_id]["tpf"] and r.mean_accepted == stats[r.region_id]["mean_accepted"]
    assert report.region("p1-r06").kind == "table" and report.block_size == 16
    assert 0 < report.page_tpf(0) < max(r.tpf for r in report.regions)


def test_the_map_and_charts_are_drawn_with_a_colour_per_tpf(tmp_path):
    from app.core.record.acceptance_figures import charts_image, map_image, strip_image, tpf_colour
    from app.core.record.acceptance_html import report_html
    from app.core.record.trace import read_trace

    assert tpf_colour(1.0, 16)[0] > tpf_colour(1.0, 16)[1] and tpf_colour(9.0, 16)[1] > tpf_colour(9.0, 16)[0]
    report = analyse(read_trace(TRACE))
    img = map_image(report, 0)
    assert img.size[0] == report.pages[0].width_px
    table = report.region("p1-r06")
    x, y = int(table.box[0] + 20), int(table.box[3] - 10)  # inside the table's box, under its caption
    r, g, _b = img.getpixel((x, y))
    assert r > g  # TPF 2.25 of a best 9: reddish
    assert charts_image(report).size[1] > 100 and strip_image(report).size == (48, 48)
    html = report_html(report, images=["map-p1.png"])
    assert "<script" not in html and "http" not in html and 'src="map-p1.png"' in html


def test_report_on_the_committed_trace_prints_the_per_kind_table(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "app", "report", str(TRACE), "--out", str(tmp_path), "--no-page"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    for words in ("By region kind", "table", "formula", "By token class", "digits", "By position in the block",
                  "2.25", "p1-r06"):
        assert words in proc.stdout, words
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert {k["name"] for k in data["by_kind"]} == {"text", "title", "table", "formula"}
    assert (tmp_path / "map-p1.png").stat().st_size > 1000
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "app", "report", str(bad)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 2 and "line 1" in proc.stderr


@pytest.fixture(scope="module")
def gravity(tiny_glmocr_dir):
    pytest.importorskip("torch")
    from app.core.engines import open_engine

    return open_engine("gravity", model_path=tiny_glmocr_dir, device="cpu", max_new_tokens=24)


def test_a_sweep_on_a_tiny_glmocr_writes_ar_tokens_at_every_block_size(gravity, one_torch_thread):
    from app.core.engines.block_sweep import SweepItem, sweep
    from app.core.tiny.glm_checkpoint import sample_images

    items = [SweepItem(f"p1-r0{i + 1}", "text", "text", img) for i, img in enumerate(sample_images(2, seed=4))]
    before = (gravity.mode, gravity.block_size)
    seen = []
    result = sweep(gravity, items, (4, 8, 16, 32, 64), reps=2, on_point=lambda p, d, t: seen.append((d, t)))
    assert (gravity.mode, gravity.block_size) == before  # the engine's own setting is put back
    assert seen[-1] == (12, 12) and len(result.points) == 12
    assert not result.mismatches()
    for item in items:
        outputs = {tuple(p.output) for p in result.points if p.region_id == item.region_id}
        assert len(outputs) == 1 and len(next(iter(outputs))) > 0
    rows = result.summary()
    assert [s.block_size for s in rows] == [0, 4, 8, 16, 32, 64]
    assert all(p.mean_accepted == 0 and p.forwards for p in result.points if p.block_size == 0)  # AR: no rounds
    assert all(len(p.wall_ms) == 2 for p in result.points) and result.best() in (4, 8, 16, 32, 64)


def test_a_sweep_reports_a_decoder_that_changed_a_token(gravity, one_torch_thread):
    from app.core.engines.block_sweep import SweepItem, sweep
    from app.core.engines.base import RegionResult
    from app.core.tiny.glm_checkpoint import sample_images

    class Broken:  # the real engine, but its B=8 output loses a token: what a decoder bug looks like
        def __init__(self, engine):
            self.engine = engine

        mode = property(lambda s: s.engine.mode, lambda s, v: setattr(s.engine, "mode", v))
        block_size = property(lambda s: s.engine.block_size, lambda s, v: setattr(s.engine, "block_size", v))

        def decode_region(self, image, task, **kw) -> RegionResult:
            res = self.engine.decode_region(image, task, **kw)
            if self.engine.block_size == 8:
                res.tokens = res.tokens[:1] + [res.tokens[1] + 1] + res.tokens[2:]
            return res

    item = SweepItem("p1-r01", "text", "text", sample_images(1, seed=4)[0])
    result = sweep(Broken(gravity), [item], (4, 8))
    (bad,) = result.mismatches()
    assert bad.block_size == 8 and bad.first_difference == 1 and not result.summary()[2].identical


def test_bench_sweep_prints_tpf_and_wall_time_per_block_size_with_repetitions(capsys):
    if not (ROOT / "models" / "builtin" / "model.safetensors").is_file():
        pytest.skip("missing part: the built-in model (models/builtin)")
    from app.bench.sweep import main

    assert main(["--region", "p1-r02", "--blocks", "4,64", "--reps", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 repetitions" in out and "fastest B overall" in out
    lines = [ln.split() for ln in out.splitlines() if ln.split()[:1] in (["AR"], ["4"], ["64"])]
    assert [ln[0] for ln in lines[:3]] == ["AR", "4", "64"] and all(ln[-1] == "yes" for ln in lines)
    assert float(lines[2][3]) > float(lines[1][3])  # TPF grows with B on a clean title line
