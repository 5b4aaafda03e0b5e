"""One writer: what the window exports and what `convert` writes for the same document, engine and options are the
same Markdown bytes and the same JSON (wall-clock timings aside), and a run's events rebuild the run's output."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.core.record import events as ev
from app.core.pipeline.options import FORMATS
from app.core.pipeline.output import SUFFIXES
from export_kit import assert_valid_alto

TIMINGS = {"ms", "seconds", "tokens_per_s", "total_ms", "request_ms", "draft_ms", "verify_ms", "decode_s", "run_s",
           "first_token_ms", "mean_ms", "stages"}  # stages: a page's milliseconds per stage


def without_timings(value):
    """The JSON with wall-clock measurements blanked (two runs never take the same milliseconds)."""
    if isinstance(value, dict):
        return {k: None if k in TIMINGS or k.endswith(("_ms", "_per_s", "_per_forward")) else without_timings(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_window_export_and_convert_write_the_same_markdown_and_json(qtbot, tmp_path, artifacts_dir):
    from app.cli import main
    from app.core.base.paths import sample_document
    from app.gui.main_window import MainWindow

    pdf = tmp_path / "report.pdf"
    shutil.copyfile(sample_document(), pdf)
    w = MainWindow()
    qtbot.addWidget(w)
    w.engine_bar.set_engine("classic")
    w.settings.set("export_formats", ",".join(FORMATS))  # every format the one writer writes (Preferences → Files)
    w.open_files([str(pdf)], run=True)
    qtbot.waitUntil(lambda: not w.decoder.running and w.work.summary().endswith("blocks"), timeout=120_000)
    w.redraw()
    w.grab().save(str(artifacts_dir / "main_window_parity.png"))
    exported = w.export_current(tmp_path / "gui" / "report.md")
    assert main(["convert", str(pdf), "-o", str(tmp_path / "cli"), "--engine", "classic", "-q",
                 "--text-layer", "compare",  # as the window does; convert prefers the layer (docs/architecture.md)
                 "--formats", ",".join(FORMATS)]) == 0

    gui_md, cli_md = (tmp_path / d / "report.md" for d in ("gui", "cli"))
    assert gui_md.read_bytes() == cli_md.read_bytes()
    assert "<table>" in cli_md.read_text() and '<a id="page-2"></a>' in cli_md.read_text()
    gui, cli = (json.loads((tmp_path / d / "report.json").read_text()) for d in ("gui", "cli"))
    assert without_timings(gui) == without_timings(cli)
    assert cli["stats"]["decoded"] > 10 and cli["pages"][0]["dpi"] == 144 and cli["cer"] is not None
    pictures = sorted(p.name for p in (tmp_path / "gui" / "report_images").iterdir())
    assert pictures == sorted(p.name for p in (tmp_path / "cli" / "report_images").iterdir()) and pictures
    assert sorted(p.name for p in exported) == sorted(f"report{SUFFIXES[f]}" for f in FORMATS)
    for f in FORMATS:  # the searchable PDF, Word, Excel, ALTO, hOCR and Docling JSON too: the same bytes
        if f != "json":
            gui_file, cli_file = (tmp_path / d / f"report{SUFFIXES[f]}" for d in ("gui", "cli"))
            assert gui_file.read_bytes() == cli_file.read_bytes(), f
    gui_pdf, cli_pdf = (tmp_path / d / "report.pdf" for d in ("gui", "cli"))
    assert_valid_alto(cli_pdf.with_suffix(".alto.xml"), 4)
    import pymupdf

    with pymupdf.open(cli_pdf) as doc:  # the reviewed text, searchable where the blocks stand
        found = doc[0].search_for(cli["pages"][0]["blocks"][0]["text"].split()[0])
        assert found and doc.page_count == cli["page_count"]


def test_an_edit_is_the_only_difference_and_is_marked(qtbot, tmp_path):
    from app.core.review.session import Session

    out, events = _run_with_formula_number(tmp_path)
    session = Session()
    work = session.add_document(out.path)
    session.current = 0
    for e in events:
        session.apply(e, work)
    rebuilt = work.to_output()
    assert rebuilt.to_markdown() == out.to_markdown()  # the events carry everything the writer needs
    assert without_timings(rebuilt.to_dict()) == without_timings(out.to_dict())
    assert "\\tag{3}" in out.to_markdown()  # the formula number merged by the one assembler, in both

    first = next(b for b in work.text_blocks() if b.region.task == "text")
    assert session.edit(first.id, "Edited by a person.")
    edited = work.to_output()
    assert "Edited by a person." in edited.to_markdown()
    blocks = [b for p in edited.to_dict()["pages"] for b in p["blocks"]]
    assert [b["id"] for b in blocks if b["edited"]] == [first.id]
    mine = next(b for b in blocks if b["id"] == first.id)
    assert mine["markdown"] == "Edited by a person." and mine["text"] == first.region.text  # the OCR stays too


def _run_with_formula_number(tmp_path: Path):
    """A real pipeline run (classic OCR) over a page whose layout has a formula followed by its number."""
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.document.sample_documents import make_sample_pdf
    from app.core.layout.base import make_regions
    from app.core.layout.postprocess import Detection

    class FormulaLayout:
        """The sample page's real text lines, labelled as a layout model would (this test is about assembly)."""

        name = "fixed"

        def analyse(self, document, index, image, dpi, *, keep_headers=False, cancel=None, timeout=None):
            s = dpi / 72.0
            words = document.text_layer(index)
            lines: dict[float, list] = {}
            for wd in words:
                lines.setdefault(round(wd.box_pt[1]), []).append(wd)
            boxes = [(min(w.box_pt[0] for w in ws) - 2, k - 2, max(w.box_pt[2] for w in ws) + 2,
                      max(w.box_pt[3] for w in ws) + 2) for k, ws in sorted(lines.items())][:4]
            labels = ["doc_title", "text", "formula", "formula_number"]
            dets = [Detection(lab, 0.9, tuple(v * s for v in box), i) for i, (lab, box) in enumerate(zip(labels, boxes))]
            return make_regions(dets, index, dpi, self.name, keep_headers=keep_headers)

    pdf = make_sample_pdf(tmp_path / "formula.pdf")
    events: list[ev.Event] = []
    pipe = Pipeline(PipelineOptions(engine="classic", pages="1"), emit=events.append, layout=FormulaLayout())
    try:
        out = pipe.run(pdf)
    finally:
        pipe.close()
    # the number region reads whatever text sits there: give it a number, as a real page would have
    regions = list(out.regions())
    number = next(r for r in regions if r.label == "formula_number")
    assert number.text
    # and the formula the LaTeX a text layer gives (OCR's reading of a formula is plain text, with no number)
    formula = next(r for r in regions if r.task == "formula")
    for e in events:
        if isinstance(e, ev.RegionFinished) and e.region_id == number.id:
            e.text = "(3)"
        if isinstance(e, ev.RegionFinished) and e.region_id == formula.id:
            e.stats = {**e.stats, "text_source": "text-layer"}
    number.text = "(3)"
    formula.extra["stats"] = {**formula.extra["stats"], "text_source": "text-layer"}
    return out, events


def test_confidence_is_the_same_in_the_window_and_in_convert(qtbot, tmp_path):
    """The built-in engine reports a log-probability per token: the window records it from the events, convert from
    the engine's results; both must give every read block the same confidence."""
    from app.cli import main
    from app.core.document.sample_documents import make_sample_pdf
    from app.gui.main_window import MainWindow

    pdf = make_sample_pdf(tmp_path / "one.pdf", pages=1)
    w = MainWindow()
    qtbot.addWidget(w)
    w.engine_bar.set_engine("builtin")
    w.open_files([str(pdf)], run=True)
    qtbot.waitUntil(lambda: not w.decoder.running and w.work.summary().endswith("blocks"), timeout=180_000)
    w.export_current(tmp_path / "gui" / "one.md")
    # the window decodes every line (its rounds are drawn); convert skips the sure ones unless told: same settings
    assert main(["convert", str(pdf), "-o", str(tmp_path / "cli"), "--engine", "builtin", "-q",
                 "--text-layer", "compare", "--decoder", "always"]) in (0, 4)
    gui, cli = (json.loads((tmp_path / d / "one.json").read_text()) for d in ("gui", "cli"))
    blocks = [b for p in cli["pages"] for b in p["blocks"] if b.get("text")]
    confident = [b["confidence"] for b in blocks if b.get("confidence")]
    assert confident and all(0.0 < c["min"] <= c["mean"] <= 1.0 for c in confident), blocks[:2]
    assert without_timings(gui) == without_timings(cli)
