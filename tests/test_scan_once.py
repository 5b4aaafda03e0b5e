"""A scanned page is read once (app.core.pipeline.page_ocr): its lines detected once and each line recognised once,
shared by the orientation check, the layout (its OCR text) and the built-in engine (its readings); the engine's
decoder reads only the lines it could change under `--decoder unsure` (convert's default) and the text stays the
same. Real models (the shipped built-in model, RapidOCR's ONNX), nothing mocked: calls are counted on the real
recogniser."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
needs_shipped = pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(),
                                   reason="missing part: no shipped built-in model (models/builtin/model.safetensors)")


@pytest.fixture(scope="module")
def engines(one_torch_thread):
    from app.core.engines import open_engine

    return {d: open_engine("builtin", device="cpu", decoder=d) for d in ("always", "unsure", "never")}


def _scan(tmp_path: Path) -> Path:
    """A one-page scanned PDF (an image, no text layer) of printed lines."""
    from PIL import Image

    from app.bench import documents_corpus as corpus
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    for n, line in enumerate(corpus.SCAN_TEXT):
        page.insert_text((60, 80 + 40 * n), line, fontsize=13, fontname="helv")
    pix = page.get_pixmap(dpi=150)
    scan, _ = corpus._image_pdf([Image.frombytes("RGB", (pix.width, pix.height), pix.samples)])
    scan.save(str(tmp_path / "scan.pdf"))
    return tmp_path / "scan.pdf"


@contextmanager
def _longest_region(engine, tmp_path: Path):
    """(pipeline, OCR DPI, its longest region with text) of `_scan` read by `engine` through PyMuPDF's layout, the
    page's one pass kept; the pipeline is closed after."""
    from app.core.layout import open_layout
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(text_layer="prefer"), engine=engine, layout=open_layout("pymupdf"))
    try:
        out = pipe.run(_scan(tmp_path))
        (dpi, _), = [v for v in pipe.text_source.scan._pages.values()]
        yield pipe, dpi, max((r for r in out.pages[0].regions if r.text), key=lambda r: len(r.text))
    finally:
        pipe.close()


class _Counted:
    """Counts the crops a real recogniser is given (and still runs it)."""

    def __init__(self, recogniser, monkeypatch) -> None:
        self.crops = 0
        real = recogniser.posteriors

        def counted(images):
            self.crops += len(images)
            return real(images)

        monkeypatch.setattr(recogniser, "posteriors", counted)


@needs_shipped
def test_a_scanned_page_is_recognised_once_per_line_through_layout_orientation_and_engine(engines, monkeypatch,
                                                                                           tmp_path):
    from app.core.layout import open_layout, orientation
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.rapid.recogniser import Recogniser

    engine = engines["unsure"]
    seen = _Counted(engine.recogniser, monkeypatch)
    monkeypatch.setattr(orientation, "_RECOGNISER", Recogniser(batch=orientation.LINES))
    turned = _Counted(orientation._RECOGNISER, monkeypatch)
    pipe = Pipeline(PipelineOptions(text_layer="prefer"), engine=engine, layout=open_layout("pymupdf"))
    try:
        out = pipe.run(_scan(tmp_path))
        scan = pipe.text_source.scan
        (dpi, lines), = [v for v in scan._pages.values()]
    finally:
        pipe.close()
    regions = [r for r in out.pages[0].regions if r.text]
    assert scan.reads == 1 and len(lines) >= 3
    assert seen.crops == len(lines)  # every line recognised exactly once, for all three users
    assert turned.crops == 0  # an upright page that reads well needs no orientation check
    read = {line.reading.text for line in lines}
    layout_text = [ln[4] for r in out.pages[0].regions for ln in r.extra.get("ocr_lines") or []]
    assert layout_text and set(layout_text) <= read  # the layout was given the page's lines, not its own OCR's
    assert regions and all(r.extra["stats"]["lines_from"] == "page" for r in regions)
    from rapidfuzz.distance import Levenshtein

    from app.bench import documents_corpus as corpus

    text = " ".join(r.text for r in regions)
    assert Levenshtein.normalized_distance(text, " ".join(corpus.SCAN_TEXT)) < 0.05


def _region(lines: list[str], size: int = 28):
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(DEJAVU, size)
    step = int(size * 1.7)
    img = Image.new("RGB", (int(max(font.getlength(t) for t in lines)) + 40, step * len(lines) + 20), "white")
    draw = ImageDraw.Draw(img)
    boxes = []
    for i, t in enumerate(lines):
        draw.text((20, 10 + i * step), t, font=font, fill="black")
        boxes.append((16, 6 + i * step, 24 + font.getlength(t), 14 + i * step + size))
    return img, boxes


@needs_shipped
def test_the_decoder_skips_only_lines_it_could_not_change_and_the_text_is_the_same(engines):
    import random

    from PIL import ImageDraw

    from app.core.engines.builtin.arbiter import UNSURE
    from app.core.record.events import RoundVerified

    kinds = set()
    for seed in (0, 1):
        rng = random.Random(seed)
        words = ["invoice", "Scriptorium", "total", "2024-11-03", "EUR", "99.90", "line", "quick", "brown", "fox"]
        lines = [" ".join(rng.choice(words) for _ in range(4)) for _ in range(4)]
        img, boxes = _region(lines)
        draw = ImageDraw.Draw(img)
        for b in boxes[::2]:  # half of a character of every other line rubbed out: the recogniser may be unsure
            x, h = b[0] + 0.3 * (b[2] - b[0]), b[3] - b[1]
            draw.rectangle((x, b[1], x + 0.5 * h, b[1] + 0.5 * h), fill="white")
        results, rounds = {}, {}
        for mode, engine in engines.items():
            events = []
            results[mode] = engine.decode_lines(img, "text", boxes, region_id="p1-r01", emit=events.append)
            rounds[mode] = [e for e in events if isinstance(e, RoundVerified)]
        always, unsure, never = results["always"], results["unsure"], results["never"]
        assert unsure.text == always.text
        assert [s["text"] for s in unsure.stats["line_stats"]] == [s["text"] for s in always.stats["line_stats"]]
        assert not rounds["never"] and never.stats["forwards"] == 0
        # a line is decoded exactly when the recogniser was unsure of one of its characters
        engine = engines["unsure"]
        readings = engine.recogniser.read([crop for row in engine.given_lines(img, boxes) for _, crop in row])
        for line, reading in zip(unsure.stats["line_stats"], readings):
            if line.get("fallback"):
                continue
            skipped = line.get("decoder") == "skipped"
            assert skipped == (min(reading.conf) >= UNSURE), (line["text"], min(reading.conf))
            kinds.add(skipped)
        assert bool(rounds["unsure"]) == (False in {s.get("decoder") == "skipped" for s in unsure.stats["line_stats"]
                                                    if not s.get("fallback")})
    assert kinds == {True, False}  # both kinds of line were met


def test_convert_skips_the_sure_lines_by_default_and_one_flag_forces_either():
    import argparse

    from app.commands.convert import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    assert p.parse_args(["a.pdf", "-o", "out"]).engine_builtin__decoder == "unsure"
    for choice in ("always", "never"):
        assert p.parse_args(["a.pdf", "-o", "out", "--decoder", choice]).engine_builtin__decoder == choice
    from app.core.engines import ENGINES

    (option,) = [o for o in ENGINES["builtin"].options if o.name == "decoder"]
    assert option.default == "always"  # the window (its Preferences) decodes every line and draws the rounds


@needs_shipped
def test_each_page_says_where_its_time_went_in_the_json_and_the_event(engines, tmp_path):
    import json

    from app.core.layout import open_layout
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.record.events import PageFinished

    events = []
    pipe = Pipeline(PipelineOptions(text_layer="prefer"), emit=events.append, engine=engines["unsure"],
                    layout=open_layout("pymupdf"))
    try:
        pipe.run(_scan(tmp_path))
        files = pipe.write(tmp_path / "out")
    finally:
        pipe.close()
    data = json.loads(Path(files["json"]).read_text(encoding="utf-8"))
    stages = data["pages"][0]["stages"]
    assert {"render", "layout", "detector", "recogniser"} <= set(stages) and all(v >= 0 for v in stages.values())
    assert data["stats"]["stages"] == stages  # one page: the document's sum is the page's
    (finished,) = [e for e in events if isinstance(e, PageFinished)]
    assert finished.stages == stages


def test_the_window_status_shows_a_finished_pages_stages(qtbot):
    from app.core.record import events as ev
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    path = "/nonexistent/scan.pdf"
    for e in [ev.RunStarted(engine="builtin", document=path), ev.DocumentOpened(path=path, page_count=1),
              ev.PageFinished(page=0, regions=1, ms=2000.0, stages={"detector": 500.0, "recogniser": 1500.0})]:
        w.handle_event(e)
    shown = w.statusBar().currentMessage()
    assert "Page 1" in shown and "detector 500 ms (25%)" in shown and "recogniser 1500 ms (75%)" in shown


@needs_shipped
def test_a_region_without_the_pages_lines_finds_them_again_and_recognises_none_twice(engines, monkeypatch,
                                                                                   tmp_path):
    """A region that came with no lines of the page's (its layout lines set aside for print outside them: UNLV
    8087's columns; or none fell in it) has its lines detected again over its crop; those the page's one pass read
    keep their readings, only the others would be recognised. It recognised every line again: seconds a page."""
    engine = engines["unsure"]
    with _longest_region(engine, tmp_path) as (pipe, dpi, region):
        before = region.text
        region.extra.pop("ocr_lines")
        region.extra["layout_lines_dropped"] = "a test: the engine finds its lines itself"
        seen = _Counted(engine.recogniser, monkeypatch)
        again = pipe.text_source.read(region, engine, dpi)
    assert seen.crops == 0  # every line it found again was one the page had read
    assert again.stats["lines_from"] == "page" and again.stats["lines"] >= 2
    assert again.text == before


def test_a_region_is_detected_again_only_around_the_print_outside_the_pages_lines():
    """The rows to detect again (`_bands`, crop pixels): each line of print outside the page's lines grown by its
    height above and below and out to the page lines it reaches, a page line the crop's edge cuts, merged; the
    whole crop when that print is unknown or the bands would cover most of it."""
    from app.core.document.regions import Region
    from app.core.pipeline.page_ocr import _bands

    def region(outside):
        return Region(id="p0-r0", page=0, order=0, label="text", task="text", score=1.0, box=(0, 0, 1, 1),
                      box_pt=(0, 0, 1, 1), extra={"print_outside": outside} if outside is not None else {})

    lines = [(10, 100 + 40 * k, 700, 130 + 40 * k) for k in range(10)]  # crop pixels, 40 px apart
    origin, size = (50.0, 20.0), (800, 600)
    # 144 DPI: two pixels a point; a line of print at rows 322-346 of the crop
    one = [[300.0, (322 + 20) / 2, 400.0, (346 + 20) / 2]]
    assert _bands(region(one), 144.0, origin, size, lines) == [(298, 370)]  # 298-370: two page lines whole
    assert _bands(region(None), 144.0, origin, size, lines) is None
    assert _bands(region([]), 144.0, origin, size, lines) is None
    cut = [*lines, (10, 585, 700, 615)]  # a page line the crop's bottom edge cuts
    assert _bands(region(one), 144.0, origin, size, cut) == [(298, 370), (585, 600)]
    many = [[300.0, (y + 20) / 2, 400.0, (y + 24 + 20) / 2] for y in range(102, 500, 40)]
    assert _bands(region(many), 144.0, origin, size, lines) is None  # most of the crop: all of it


@needs_shipped
def test_a_region_detected_again_around_its_print_outside_reads_as_the_whole_crop_did(engines, monkeypatch,
                                                                                     tmp_path):
    """With where its print outside the page's lines lies known (lost_lines' `print_outside`), a region is
    detected again only in the rows around it: the detector sees a strip, not the region, and the region reads
    as it did; nothing is recognised twice."""
    engine = engines["unsure"]
    with _longest_region(engine, tmp_path) as (pipe, dpi, region):
        before, own = region.text, region.extra.pop("ocr_lines")
        region.extra["layout_lines_dropped"] = "a test: the engine finds its lines itself"
        x0, y0, x1, y1 = own[1][:4]  # the print of its second line, as lost_lines would see it
        region.extra["print_outside"] = [[x0 + 0.6 * (x1 - x0), y0 + 2, x1, y1 - 2]]
        seen, strips = _Counted(engine.recogniser, monkeypatch), []
        detect = engine.detect_page
        monkeypatch.setattr(engine, "detect_page", lambda image: strips.append(image.size) or detect(image))
        crop = pipe.document.crop(region.page, region.box_pt, dpi)
        again = pipe.text_source.read(region, engine, dpi)
    assert strips and all(h < crop.height / 2 for _, h in strips)
    assert seen.crops == 0 and again.stats["lines_from"] == "page"
    assert again.text == before


def _real_page(engines, name: str) -> str:
    """The Markdown of a scan of the real development set (corpora/realdocs/pages) read by the built-in engine."""
    from pipeline_kit import read

    from app.core.layout import open_layout

    page = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / name
    return read(page, markdown=True, engine=engines["unsure"], layout=open_layout("pymupdf"))


@pytest.mark.slow
def test_a_line_the_regions_own_detection_misses_keeps_the_page_passs_reading(engines):
    """On a real scan (a Russian decree, corpora/realdocs/x13) the body's layout lines are set aside for print
    outside them, so its lines are detected again over its crop; that detection misses six of the 36 lines the
    page's pass found (among them "6. Диссертационные советы несут ответственность"). Those keep their page
    readings instead of vanishing; none is read twice."""
    md = _real_page(engines, "x13-russian-decree-p6.png")
    for line in ("Диссертационные советы несут ответственность", "базе которых могут создаваться",
                 "положение о диссертационном совете"):
        assert line in md, line
    assert md.count("Рассмотрение Комиссией") <= 1 and md.count("кандидатам в члены") == 1


@pytest.mark.slow
def test_a_region_detected_again_leaves_the_lines_of_its_neighbour_to_it(engines):
    """On a real magazine scan (UNLV 8087, corpora/realdocs/s05) the layout's box of the left column reaches into
    the right one; detected again over its crop, it found the first words of the right column's lines cut at its
    edge ("need rece", "mackerel", "One qu") and read them into its own lines. Those are the ends of lines the
    page read whole, most of them outside the region: they are its neighbour's."""
    md = _real_page(engines, "s05-unlv-8087.png")
    assert "take the city. On returning" in md
    assert "need rece " not in md and "One qu " not in md
    assert md.count("need receives flour") == 1
