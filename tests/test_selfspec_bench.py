"""The self-spec and batch benchmarks in their CI-size form: they run, print their tables and verdict lines, and
their numbers hang together."""
from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_quick_benchmark_prints_both_tables(tiny_glmocr_dir, tmp_path, capsys):
    from app.bench.selfspec import main

    out_json = tmp_path / "bench.json"
    assert main(["--quick", "--model", str(tiny_glmocr_dir), "--json", str(out_json), "--reps", "2"]) == 0
    printed = capsys.readouterr().out
    assert "| self-spec, oracle drafts | 4" in printed and "spec/AR wall" in printed and "events on" in printed
    assert "GLM-OCR dims (1 layer)" in printed and "bfloat16" in printed and "float32" in printed
    last = printed.strip().splitlines()[-1]
    assert re.fullmatch(r"overhead ratio \(measured/ideal\): B=4 \d+\.\d\d", last)
    inspector_line = printed.strip().splitlines()[-2]
    assert re.match(r"inspector overhead \(decode wall, on/off, events on both\): B=4 \d+\.\d\d \[\d+\.\d\d-\d+\.\d\d\]",
                    inspector_line)
    data = json.loads(out_json.read_text())
    ar, spec, inspected, oracle = data["decoding"]
    assert inspected["decoder"] == "self-spec, inspector on" and inspected["identical"] == "2/2"  # changes no token
    assert spec["identical"] == "2/2" and oracle["identical"] == "2/2"  # exact either way
    assert spec["tokens"] == ar["tokens"] == oracle["tokens"] == inspected["tokens"]
    low, median, high = sorted(data["inspector_overhead"]["4"])
    assert 0 < low <= median <= high
    assert oracle["tpf"] > 2.5 and oracle["mean_k"] > 3  # drafts right: up to B+2 tokens per 2 forwards
    for row in data["decoding"]:
        assert row["ratio_low"] <= row["ratio"] <= row["ratio_high"]
        if row["block"]:  # a verdict only where every repetition agrees
            expected = ("faster" if row["ratio_high"] < 1 else "slower" if row["ratio_low"] > 1 else "inconclusive")
            assert row["verdict"] == expected
    costs = data["forward_cost"]
    assert {(c["model"], c["dtype"]) for c in costs} == {
        ("decode model", "float32"), ("GLM-OCR dims (1 layer)", "float32"), ("GLM-OCR dims (1 layer)", "bfloat16")}
    assert all(c["ar_ms"] > 0 and c["round_x"] > 0 and c["context"] == data["context"] for c in costs)
    assert data["context"] > 20 and data["overhead_ratio"]["4"] > 0


def test_quick_batch_benchmark_reports_identical_tokens(tiny_glmocr_dir, tmp_path, capsys):
    from app.bench.batch import main

    out_json = tmp_path / "batch.json"
    assert main(["--quick", "--model", str(tiny_glmocr_dir), "--regions", "4", "--new-tokens", "8", "--reps", "1",
                 "--batches", "1", "4", "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert "| batch 4" in printed and "x sequential" in printed
    data = json.loads(out_json.read_text())
    assert [r["mode"] for r in data["rows"]] == ["sequential", "batch 1", "batch 4"]
    assert all(r["identical"] and r["tokens_per_s"] > 0 for r in data["rows"])


def test_quick_paths_benchmark_compares_dynamic_and_static(capsys):
    from app.bench.paths import main

    assert main(["--quick", "--context", "24", "--new-tokens", "6"]) == 0
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith(("| dynamic", "| static"))]
    assert len(rows) == 5 and all(line.rstrip(" |").endswith(("1/1", "2/2")) for line in rows)  # fp32: identical


def test_gpu_bench_refuses_without_a_gpu(capsys):
    import torch

    from app.bench.gpu import main

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the bench would run for minutes")
    assert main([]) == 2
    assert "no CUDA device" in capsys.readouterr().err
