"""`convert --resume` after a run stopped between its last page and its writing: the checkpoint holds every page
(not done), so the resumed run reads nothing and only writes — the formats asked for (not the defaults), and the
pictures at the DPI the engine read at. A real `convert` (classic engine, the pymupdf layout) on a born-digital
report with an embedded picture; the stop is a Ctrl+C landing as the output set is written."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from app.core.document.sample_documents import make_small_report

ROOT = Path(__file__).resolve().parents[1]
ARGS = ("--engine", "classic", "--layout", "pymupdf", "--formats", "md", "-q")

pytestmark = pytest.mark.slow


def _stopped_while_writing(capsys, monkeypatch, inputs: Path, out: Path) -> dict:
    """Convert until every page is read, then Ctrl+C as the files are written: the checkpoint left behind."""
    from app.cli import main
    from app.core.pipeline.run import Pipeline

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(Pipeline, "write", interrupted)
        assert main(["convert", str(inputs), "-o", str(out), *ARGS]) == 130
    capsys.readouterr()
    saved = json.loads((out / ".scriptorium-checkpoint" / "rep.json").read_text(encoding="utf-8"))
    assert not saved["done"] and [p["index"] for p in saved["pages"]] == [0, 1]
    assert saved["input_dpi"] > 0 and not (out / "rep.md").exists()
    return saved


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, Path]:
    """The input folder, and the output of one uninterrupted run (what a resumed run must write)."""
    base = tmp_path_factory.mktemp("resume")
    make_small_report(base / "in" / "rep.pdf")
    r = subprocess.run([sys.executable, "-m", "app", "convert", str(base / "in"), "-o", str(base / "whole"), *ARGS],
                       capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return base / "in", base / "whole"


def _same_output(out: Path, whole: Path) -> None:
    assert (out / "rep.md").read_text(encoding="utf-8") == (whole / "rep.md").read_text(encoding="utf-8")
    assert not (out / "rep.json").exists()  # --formats md: the resumed run keeps the user's formats
    pictures = sorted(p.name for p in (whole / "rep_images").iterdir())
    assert pictures and sorted(p.name for p in (out / "rep_images").iterdir()) == pictures
    for name in pictures:  # cropped at the engine's DPI, as the uninterrupted run cropped them
        assert Image.open(out / "rep_images" / name).size == Image.open(whole / "rep_images" / name).size


def test_resume_with_every_page_read_only_writes_the_asked_formats(report, tmp_path, capsys, monkeypatch):
    from app.cli import main

    inputs, whole = report
    out = tmp_path / "out"
    _stopped_while_writing(capsys, monkeypatch, inputs, out)
    assert main(["convert", str(inputs), "-o", str(out), *ARGS[:-1], "--resume"]) == 0
    stdout = capsys.readouterr().out
    assert "rep.pdf: 2 pages" in stdout and "2 pages from the checkpoint" in stdout, stdout
    _same_output(out, whole)
    assert not (out / ".scriptorium-checkpoint").exists()  # the run went through: nothing is left to resume


def test_resume_with_two_jobs_and_every_page_read_writes_the_same(report, tmp_path, capsys, monkeypatch):
    inputs, whole = report
    out = tmp_path / "out"
    _stopped_while_writing(capsys, monkeypatch, inputs, out)
    r = subprocess.run([sys.executable, "-m", "app", "convert", str(inputs), "-o", str(out), *ARGS, "--resume",
                        "--jobs", "2"], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=600)
    assert r.returncode == 0, r.stderr
    _same_output(out, whole)


@pytest.mark.slow
def test_a_skewed_scans_pictures_written_from_pages_read_elsewhere_are_cut_from_the_page_as_read(tmp_path):
    """`convert --jobs N` and `--resume` write pages read in another process into a document opened afresh, which
    does not know how each page was turned and straightened: a skewed scan's pictures came out of the page as it
    lies (UNLV 8071, skewed 0.3°: its picture's PNG differed between --jobs 1 and --jobs 2)."""
    import copy

    from app.core.pipeline import Pipeline, PipelineOptions

    scan = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "s04-unlv-8071.png"
    here = Pipeline(PipelineOptions(formats=("md",)))  # the default engine (its layout boxes the page's picture)
    try:
        out = here.run(scan)
        assert out.pages[0].skew
        out.pages[0].regions[0].task = "picture"  # its text block as a picture: a crop of the page to write
        here.write(tmp_path / "here", "s04")
        dpi = here.ocr_dpi(0, False)
    finally:
        here.close()
    elsewhere = Pipeline(PipelineOptions(formats=("md",), ocr_dpi=dpi))  # as convert_jobs writes
    try:
        elsewhere.open(scan)
        elsewhere.output = copy.deepcopy(out)
        elsewhere.write(tmp_path / "elsewhere", "s04")
    finally:
        elsewhere.close()
    pictures = sorted((tmp_path / "here" / "s04_images").glob("*.png"))
    assert pictures
    for path in pictures:
        assert (tmp_path / "elsewhere" / "s04_images" / path.name).read_bytes() == path.read_bytes(), path.name
