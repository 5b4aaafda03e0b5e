"""The page pipeline with the classic engine (RapidOCR, real text) and PyMuPDF's layout: events, outputs, CER
against the text layer, re-decoding a page while keeping edited blocks, chosen regions, cancel, page ranges,
whole-document engines and images."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.core.engines import DocumentResult
from app.core.base.cancel import CancelToken
from app.core.record.events import RegionFinished
from app.core.layout import resolve_layout_name
from app.core.engines import resolve_engine_name
from app.core.pipeline import DocumentOutput, Pipeline, PipelineOptions, parse_pages
from app.core.document.regions import Region
from app.core.document.sample_documents import make_sample_pdf, make_small_report
from doc_inputs import text_image


@pytest.fixture(scope="module")
def report_pdf(tmp_path_factory):
    return make_small_report(tmp_path_factory.mktemp("pipe") / "report.pdf")


def _classic_run(pdf):
    events = []
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf"), emit=events.append)
    return pipe, pipe.run(pdf), events


@pytest.fixture(scope="module")
def classic_run(report_pdf):
    """One run shared by the tests that only read it (read-only: a test that re-reads pages makes its own)."""
    pipe, out, events = _classic_run(report_pdf)
    yield pipe, out, tuple(events)
    pipe.close()


@pytest.fixture
def own_classic_run(report_pdf):
    """A run of this test's own, to read again and edit: whatever it does, the shared run stays as it was."""
    pipe, out, events = _classic_run(report_pdf)
    yield pipe, out, events
    pipe.close()


def test_events_follow_the_vocabulary_in_order(classic_run):
    _, out, events = classic_run
    types = [e.type for e in events]
    assert types[0] == "run_started" and types[-1] == "run_finished"
    assert types.index("document_opened") < types.index("page_rendered") < types.index("layout_done")
    phases = [e.phase for e in events if e.type == "phase_changed"]
    assert phases[:2] == ["opening", "loading_model"] and phases[-1] == "assembling"
    assert {"rendering", "layout", "decoding"} <= set(phases)
    started = [e.region_id for e in events if e.type == "region_started"]
    finished = [e.region_id for e in events if e.type == "region_finished"]
    assert started == finished == ["p1-r01", "p1-r02", "p1-r03", "p2-r01", "p2-r02"]
    assert [e.page for e in events if e.type == "page_finished"] == [0, 1]
    layout = [e for e in events if e.type == "layout_done"]
    assert layout[0].source == "pymupdf" and [r["id"] for r in layout[0].regions][:2] == ["p1-r01", "p1-r02"]
    assert events[-1].stats["regions"] == 6 and events[-1].stats["pictures"] == 1


def test_classic_text_markdown_json_and_cer(classic_run):
    _, out, _ = classic_run
    md = out.to_markdown()
    assert md.startswith('<a id="page-1"></a>\n\n# Field Notes\n\n')
    assert "<table><tr><th>Quarter</th><th>Revenue</th><th>Growth</th></tr>" in md
    assert "\n## 2. Method\n" in md and md.count("\n# ") == 1  # page 2's only heading is a section
    doc = json.loads(out.to_json())
    b = doc["pages"][0]["blocks"][1]
    assert b["id"] == "p1-r02" and b["engine"] == "classic" and b["text"].startswith("Scriptorium reads documents")
    assert b["box_pt"] == pytest.approx([30.0, 63.0, 385.0, 87.5], abs=1)
    assert b["box"] == pytest.approx([v * 2 for v in b["box_pt"]], abs=1)  # 144 DPI = 2 px per point
    assert doc["pages"][0]["has_text_layer"] and doc["pages"][0]["cer"] < 0.1
    assert b["cer"] is not None and b["cer"] < 0.1 and b["reference_chars"] > 50
    assert out.stats["cer"] < 0.1


def test_text_layer_comparison_is_an_event_before_each_page_finishes(classic_run):
    _, out, events = classic_run
    types = [e.type for e in events]
    compared = [e for e in events if e.type == "text_layer_compared"]
    assert [e.page for e in compared] == [0, 1]
    for e in compared:  # announced just before its page is finished, for the GUI's badges and diffs
        assert types[events.index(e) + 1] == "page_finished" and events[events.index(e) + 1].page == e.page
        page = out.page(e.page)
        assert e.cer == pytest.approx(page.cer)
        expected = {r.id: r.extra["cer"] for r in page.regions if r.extra.get("cer") is not None}
        assert {b["region_id"]: b["cer"] for b in e.blocks} == pytest.approx(expected) and expected
    body = next(b for b in compared[0].blocks if b["region_id"] == "p1-r02")
    assert body["reference"].startswith("Scriptorium reads documents")
    # the comparison survives a trace file (what `convert --trace` writes and the GUI replays)
    from app.core.record.events import event_from_json

    assert event_from_json(compared[0].to_json()) == compared[0]


def test_redecode_page_keeps_edited_blocks_and_chosen_regions(own_classic_run):
    pipe, out, events = own_classic_run
    out.region("p1-r02").text = "EDITED BY HAND"
    n0 = len(events)
    pipe.decode_page(0, keep={"p1-r02"})
    again = [e.region_id for e in events[n0:] if e.type == "region_started"]
    assert again == ["p1-r01", "p1-r03"]
    assert out.region("p1-r02").text == "EDITED BY HAND"
    assert out.region("p1-r02").extra["cer"] > 0.5  # now it disagrees with the text layer
    n1 = len(events)
    pipe.decode_regions(["p1-r02"])
    assert [e.region_id for e in events[n1:] if e.type == "region_started"] == ["p1-r02"]
    (compared,) = [e for e in events[n1:] if e.type == "text_layer_compared"]  # the badge follows the new text
    assert compared.page == 0 and dict((b["region_id"], b["cer"]) for b in compared.blocks)["p1-r02"] < 0.1
    assert out.region("p1-r02").text.startswith("Scriptorium")


def test_cancel_between_regions(report_pdf):
    cancel = CancelToken()
    events = []

    def emit(e):
        events.append(e)
        if isinstance(e, RegionFinished):
            cancel.cancel()

    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf"), emit=emit, cancel=cancel)
    out = pipe.run(report_pdf)
    pipe.close()
    assert out.cancelled and events[-1].type == "run_cancelled"
    assert [e.region_id for e in events if e.type == "region_finished"] == ["p1-r01"]


def test_layout_only_keep_headers_and_pages(tmp_path):
    pdf = make_sample_pdf(tmp_path / "s.pdf", pages=3)
    for keep, task in ((False, "skipped"), (True, "text")):
        pipe = Pipeline(PipelineOptions(layout="pymupdf", keep_headers=keep))
        pipe.open(pdf)
        page = pipe.layout_page(2)
        footer = [r for r in page.regions if r.label == "footer"]
        assert footer and footer[0].task == task
        pipe.close()
    assert parse_pages("2-", 3) == [1, 2]
    assert parse_pages("1,3", 3) == [0, 2]
    assert parse_pages(None, 2) == [0, 1]
    with pytest.raises(ValueError, match="page 5 does not exist"):
        parse_pages("5", 3)
    with pytest.raises(ValueError, match="cannot read"):
        parse_pages("x", 3)


def test_auto_choices_without_gravityocr_weights():
    assert resolve_engine_name("auto") == "builtin"  # the built-in model ships in models/builtin/
    assert resolve_layout_name("auto") == "pymupdf"
    assert resolve_engine_name("glm") == "glm"


def test_auto_follows_the_hugging_face_cache_and_each_test_has_an_empty_one_of_its_own():
    """The person's cache never decides a test (conftest gives each test an empty one): GravityOCR weights put in
    this test's cache make "auto" choose GravityOCR here, and only here."""
    from huggingface_hub import constants

    hub = Path(constants.HF_HUB_CACHE)
    assert hub.is_relative_to(os.environ["SCRIPTORIUM_HOME"]), hub  # never the person's own cache
    assert not hub.exists() or not any(hub.iterdir()), hub
    assert resolve_engine_name("auto") == "builtin"
    revision = "0" * 40
    repo = hub / "models--trillionlabs--GravityOCR"
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "block_diffusion.json"):
        (snapshot / name).write_text("{}")
    (snapshot / "model.safetensors").write_bytes(b"")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    assert resolve_engine_name("auto") == "gravity"


class WholeDocument:
    """A stand-in whole-document engine (no model): one region per page, boxes in its own 100-DPI pixels."""

    name = "wholedoc"
    kind = "document"
    device = "cpu"
    input_dpi = 100.0

    def close(self) -> None:
        pass

    def decode_document(self, pages, *, emit, cancel=None, on_blocks=None):
        regions = []
        for n in range(len(pages)):
            img = pages[n]
            regions.append(Region(id=f"x{n}", page=n, box=(0.0, 0.0, img.width / 2, 100.0), label="text",
                                  task="text", order=0, dpi=100.0, text=f"page {n} text"))
        return DocumentResult(regions, stats={"pages": len(pages)})


def test_document_engine_regions_go_straight_to_assembly(report_pdf):
    events = []
    pipe = Pipeline(PipelineOptions(pages="2"), emit=events.append, engine=WholeDocument())
    out = pipe.run(report_pdf)
    pipe.close()
    (page,) = out.pages
    (r,) = page.regions
    assert (r.id, r.page, r.text) == ("p2-r01", 1, "page 0 text")
    assert r.box_pt == pytest.approx((0, 0, 595 / 2, 72), abs=0.5)
    assert r.box == pytest.approx((0, 0, 595, 144), abs=1)  # at the pipeline's 144 DPI
    assert [e.page for e in events if e.type == "layout_done"] == [1]
    assert out.to_markdown() == '<a id="page-2"></a>\n\npage 0 text\n'


def test_image_input_with_classic_engine(tmp_path):
    path = tmp_path / "note.png"
    text_image("Hello 2026").save(path)
    pipe = Pipeline(PipelineOptions(engine="classic", layout="page"))
    out = pipe.run(path)
    files = pipe.write(tmp_path / "out")
    pipe.close()
    assert out.pages[0].dpi == 96 and out.pages[0].regions[0].box == (0.0, 0.0, 360.0, 90.0)
    assert "Hello" in out.region("p1-r01").text
    assert files["markdown"].read_text().startswith('<a id="page-1"></a>')


class BrokenLayout:
    name = "broken"

    def analyse(self, document, index, image, dpi, *, keep_headers=False, cancel=None, timeout=None):
        raise RuntimeError("model exploded")


def test_failing_layout_falls_back_to_the_whole_page(report_pdf):
    events = []
    pipe = Pipeline(PipelineOptions(), emit=events.append, layout=BrokenLayout())
    pipe.open(report_pdf)
    page = pipe.layout_page(0)
    pipe.close()
    assert page.layout == "page" and [(r.id, r.label, r.task) for r in page.regions] == [("p1-r01", "text", "text")]
    (err,) = [e for e in events if e.type == "error"]
    assert not err.fatal and "layout failed on page 1 (model exploded)" in err.message
    assert events[-1].type == "layout_done" and events[-1].source == "page"


def test_pymupdf_layout_reads_a_scanned_page_through_rapidocr(tmp_path, report_pdf):
    from app.core.document import open_document

    with open_document(report_pdf) as doc:
        doc.render(0, 100).save(tmp_path / "scan.png", dpi=(100, 100))
    pipe = Pipeline(PipelineOptions(layout="pymupdf"))
    pipe.open(tmp_path / "scan.png")
    page = pipe.layout_page(0)
    pipe.close()
    assert not page.has_text_layer
    labels = [r.label for r in page.regions]
    assert "text" in labels and "table" in labels and page.layout == "pymupdf"


def test_a_rotated_slide_is_laid_out_where_it_shows():
    """A landscape slide stored as a portrait page with /Rotate 270 (a real one, from the real-document set): the
    layout's boxes land on the page as shown, so each region takes its own text from the layer (they used to be
    turned a second time, off the text, and read as "• • •")."""
    from pathlib import Path

    slide = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "d15-slide-list.pdf"
    pipe = Pipeline(PipelineOptions(layout="pymupdf", engine="classic", text_layer="prefer"))
    try:
        out = pipe.run(slide)
    finally:
        pipe.close()
    page = out.pages[0]
    assert page.layout == "pymupdf" and page.width_px > page.height_px
    read = [r for r in page.regions if r.text]
    assert read and all(r.extra["stats"].get("text_source") == "text-layer" for r in read)
    text = " ".join(r.text for r in read)
    assert "Second slide title" in text and "With foo" in text and "And baz things" in text


def test_page_where_pymupdf_finds_nothing_is_read_whole(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=500, height=300)
    for k in range(40):  # drawings only: no text block for the layout
        page.draw_line((10, 10 + 7 * k), (490, 10 + 7 * k))
    doc.save(str(tmp_path / "lines.pdf"))
    pipe = Pipeline(PipelineOptions(layout="pymupdf"))
    pipe.open(tmp_path / "lines.pdf")
    page = pipe.layout_page(0)
    pipe.close()
    assert page.layout == "page" and page.width_px == 1000 and page.height_px == 600
    assert [(r.id, r.flags, r.box) for r in page.regions] == [("p1-r01", ["fallback"], (0.0, 0.0, 1000.0, 600.0))]


def test_pymupdf_headings_only_the_document_title_is_level_one():
    """PyMuPDF ranks headers per page; docs/architecture.md (Assembly) wants `# ` for the document title only. The
    bundled sample: page 1 has the title and "1. Results", page 2 only "2. Results" (level 1 on its own page, yet a
    section)."""
    from app.core.base.paths import sample_document
    from app.core.text.textlayer import reference_text

    pipe = Pipeline(PipelineOptions(layout="pymupdf", dpi=72))
    pipe.open(sample_document())
    pipe.output = DocumentOutput(str(sample_document()), "none", "pymupdf", pipe.document.page_count)
    for i in range(2):
        page = pipe.layout_page(i)
        for r in page.regions:
            r.text = reference_text(pipe.text_words(i), r.box_pt)
        pipe.output.pages.append(page)
    pipe.close()
    heads = [(r.page, r.label, r.text) for r in pipe.output.regions() if r.label.endswith("title")
             and r.extra["native_label"] == "section-header"]
    assert heads == [(0, "doc_title", "Quarterly Report on Reading Machines"), (0, "paragraph_title", "1. Results"),
                     (1, "paragraph_title", "2. Results")]
    md = pipe.output.to_markdown()
    assert "\n# Quarterly Report on Reading Machines\n" in md and "\n## 1. Results\n" in md
    assert "\n## 2. Results\n" in md and md.count("\n# ") == 1


def test_title_rule_needs_the_first_page_and_the_largest_type():
    from app.core.layout.pymupdf_layout import map_boxclass, title_index

    def head(level, size, cls="section-header"):
        return {"boxclass": cls, "header_level": level, "max_fontsize": size}

    body = {"boxclass": "text", "header_level": 0, "max_fontsize": None}
    assert title_index([head(1, 20), head(2, 14), body], 0, later_max_size=14) == 0
    assert title_index([head(1, 20), head(2, 14), body], 1, later_max_size=14) is None  # not the first page
    assert title_index([body, head(1, 14), body], 0, later_max_size=14.0) is None  # "1. Introduction", no title
    assert title_index([head(1, 14), head(1, 14)], 0) is None  # two equal headers: sections, not a title
    assert title_index([body, head(1, 14)], 0) == 1  # a one-page document's only, largest heading
    assert title_index([head(1, None)], 0) == 0  # an OCR'd scan has no sizes: PyMuPDF's ranking decides
    assert title_index([head(2, 12), head(0, 24, "title")], 0, later_max_size=11) == 1
    assert map_boxclass(head(1, 20)) == map_boxclass(head(0, 30, "title")) == "paragraph_title"


def test_picture_dir_saves_crops_at_layout_time_and_layout_done_names_them(tmp_path, report_pdf):
    events = []
    pipe = Pipeline(PipelineOptions(layout="pymupdf", ocr_dpi=200, picture_dir=str(tmp_path / "work")),
                    emit=events.append)
    pipe.open(report_pdf)
    pipe.output = DocumentOutput(str(report_pdf), "none", "pymupdf", pipe.document.page_count)
    pipe.output.pages.append(pipe.layout_page(0))
    (pic,) = [r for r in pipe.output.regions() if r.task == "picture"]
    path = tmp_path / "work" / f"{pic.id}.png"
    assert pic.extra["picture_path"] == str(path) and path.stat().st_size > 100
    (layout,) = [e for e in events if e.type == "layout_done"]
    assert {r["id"]: r["extra"].get("picture_path") for r in layout.regions}[pic.id] == str(path)
    files = pipe.write(tmp_path / "out")  # the export still links its own copy, next to the Markdown
    pipe.close()
    assert f"![Figure {pic.id}](report_images/{pic.id}.png)" in files["markdown"].read_text()
    assert (tmp_path / "out" / "report_images" / f"{pic.id}.png").is_file()


@pytest.mark.parametrize("opts, says", [(dict(dpi=0), "rendering DPI must be above 0, not 0"),
                                        (dict(ocr_dpi=-3), "OCR DPI must be above 0, not -3")])
def test_non_positive_dpi_is_an_options_error(tmp_path, opts, says):
    from app.core.pipeline import PipelineError

    pdf = make_sample_pdf(tmp_path / "d.pdf")
    with pytest.raises(PipelineError) as info:
        Pipeline(PipelineOptions(engine="classic", layout="page", **opts)).run(pdf)
    assert info.value.kind == "options" and says in str(info.value) and "d.pdf" in str(info.value)
