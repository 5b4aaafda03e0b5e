"""The self-spec benchmark in its CI-size form: it runs, prints both tables, and its numbers hang together."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_quick_benchmark_prints_both_tables(tiny_glmocr_dir, tmp_path, capsys):
    from app.bench.selfspec import main

    out_json = tmp_path / "bench.json"
    assert main(["--quick", "--model", str(tiny_glmocr_dir), "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert "| self-spec, oracle drafts | 4" in printed and "spec/AR wall" in printed
    assert "GLM-OCR dims (1 layer)" in printed and "bfloat16" in printed and "float32" in printed
    data = json.loads(out_json.read_text())
    ar, spec, oracle = data["decoding"]
    assert spec["identical"] == "2/2" and oracle["identical"] == "2/2"  # exact either way
    assert spec["tokens"] == ar["tokens"] == oracle["tokens"]
    assert oracle["tpf"] > 2.5 and oracle["mean_k"] > 3  # drafts right: up to B+2 tokens per 2 forwards
    costs = data["forward_cost"]
    assert {(c["model"], c["dtype"]) for c in costs} == {
        ("tiny kit", "float32"), ("tiny kit", "bfloat16"),
        ("GLM-OCR dims (1 layer)", "float32"), ("GLM-OCR dims (1 layer)", "bfloat16")}
    assert all(c["ar_ms"] > 0 and c["round_x"] > 0 for c in costs)
