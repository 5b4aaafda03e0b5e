"""`python -m app bench rswa --quick` runs end to end and its table shows the bounded R-SWA cache."""
from __future__ import annotations

import json


def test_rswa_bench_quick(tmp_path, capsys):
    from app.bench.rswa import main

    out = tmp_path / "rows.json"
    assert main(["--quick", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| R-SWA, static cache | 200 | 216 |" in table and "| full attention | 200 | 399 |" in table
    rows = json.loads(out.read_text())["rows"]
    for name, entries in rows.items():
        for r in entries:
            assert r["bytes"] == r["held_bytes"]  # the formula matches what the cache tensors hold
            if name.startswith("R-SWA"):
                assert r["positions"] <= 200 + 16
            else:
                assert r["positions"] == 200 + r["generated"] - 1
