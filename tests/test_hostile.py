"""The fuzzing habit, CI's quick subset: a hostile corpus built at test time (app.bench.hostile_corpus: truncations,
bit flips, empty and huge images, RC4/AES PDFs, a broken xref, pages of headers only; wrong shapes of the journal,
trace files and settings) through `convert` and the window's open path. The rule for every file: no traceback,
no hang past the budget, a message a person can act on, nothing half-written left. `python -m app bench hostile`
runs the full corpus."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.bench.hostile_corpus import build_documents

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[tuple[Path, str]]:
    return build_documents(tmp_path_factory.mktemp("hostile") / "corpus", quick=True)


def test_the_hostile_corpus_through_convert_gives_a_line_per_file_and_no_traceback(corpus, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(  # the time it takes is `python -m app bench hostile`'s; the timeout ends a hang
        [sys.executable, "-m", "app", "convert", *(str(p) for p, _ in corpus), "-o", str(out), "--engine", "classic",
         "--layout", "page", "--dpi", "40", "--ocr-dpi", "40", "-q"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text, text
    assert proc.returncode == 1, text  # some inputs cannot be read: the worst outcome wins
    lines = proc.stdout.splitlines()
    for path, what in corpus:  # every input gets its summary line: converted, or failed and why (on stderr)
        line = next((ln for ln in lines if ln.startswith(f"{path.name}: ")), None)
        assert line is not None, (path.name, what, text)
        if "failed" in line:
            assert f"error: {path.name}: " in proc.stderr, (path.name, what)
    assert "rc4.pdf: the PDF is encrypted" in proc.stderr and "aes.pdf: the PDF is encrypted" in proc.stderr
    assert "huge.png: the image is 30000 × 30000 px" in proc.stderr
    assert "xref.pdf: the file is damaged" in proc.stderr  # repaired, with a warning
    assert not [p.name for p in out.rglob("*.tmp")]


def test_the_hostile_corpus_through_the_window_open_path(corpus, tmp_path, qapp):
    """Every document opened as File → Open would: it shows its pages or says why not (banner and list); each
    wrong-shape journal and damaged settings file at a start is set aside and told; each bad trace is refused."""
    from app.bench.hostile import run_window

    result = run_window(corpus, tmp_path / "home", budget=30)
    assert result["tracebacks"] == [] and result["over_budget"] == [] and result["unexplained"] == []
    assert result["outcomes"]["opened"] >= 8 and result["outcomes"]["refused"] >= 15
    told, total = map(int, result["journals"].split()[0].split("/"))
    assert told == total >= 15
    assert result["settings"].startswith("3/3") and result["traces"].split()[0] == "8/8"
