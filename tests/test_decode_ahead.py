"""A scan's unsure lines decoded while the layout lays the page out (app.core.engines.builtin.ahead, issue #38):
the shipped built-in model (fp32 on CPU, nothing mocked) on real scans of the development set. A line taken from
the lines decoded ahead gives the tokens, text and round events of decoding it where it is read; a whole page
converts to the same Markdown with them as without; the window's decoder ("always") decodes nothing ahead."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "models" / "builtin"
PAGES = ROOT / "corpora" / "realdocs" / "pages"
needs_shipped = pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(),
                                   reason="missing part: no shipped built-in model (models/builtin/model.safetensors)")


def _events(engine, reading, budget):
    from dataclasses import asdict, is_dataclass

    got = []
    decoded, text = engine.read_line(reading, region_id="p1-r01", emit=got.append,
                                     offsets={"round": 0, "step": 0, "tokens": 0}, sep="", budget=budget)
    # the rounds as a listener sees them, their clocks aside
    events = [{k: v for k, v in (asdict(e) if is_dataclass(e) else vars(e)).items() if "ms" not in k} for e in got]
    return list(decoded.tokens), decoded.stopped, text, events


@needs_shipped
@pytest.mark.slow
def test_a_line_decoded_ahead_is_the_line_decoded_where_it_is_read(one_torch_thread):
    from PIL import Image

    from app.core.engines import open_engine
    from app.core.engines.builtin.engine import line_budget
    from app.core.engines.builtin.lexicon import settle_reading
    from app.core.engines.builtin.page_lines import read_page_lines
    from app.core.engines.builtin.sure_lines import skips

    engine = open_engine("builtin", device="cpu", decoder="unsure")
    image = Image.open(PAGES / "s09-kant-20.jpg").convert("RGB")  # Fraktur: the recogniser is unsure of many
    lines = read_page_lines(engine, image, page=3)
    readings = []
    for line in lines:
        readings.append(line.fresh_reading())
        settle_reading(readings[-1])
    unsure = [r for r in readings if not skips("unsure", r) and engine.can_write(r)][:4]
    assert len(unsure) >= 3
    plain = [_events(engine, r, line_budget(r)) for r in unsure]
    assert engine.ahead.run(engine, 3, readings, line_budget) >= len(unsure)
    engine.start_page(3)
    assert all(engine.ahead.take(3, r, line_budget(r)) is not None for r in unsure)
    taken = [_events(engine, r, line_budget(r)) for r in unsure]
    assert taken == plain
    assert all(events for *_, events in taken)  # rounds were replayed to the listener
    # another budget, or another page's cache: decoded where it is read, as before
    assert engine.ahead.take(3, unsure[0], line_budget(unsure[0]) - 1) is None
    assert engine.ahead.take(4, unsure[0], line_budget(unsure[0])) is None
    # the same page of another document (a folder of one-page scans: every one is page 0) starts afresh: nothing
    # kept from the document before, which grew with every document and read a document read again from it
    assert engine.ahead.run(engine, 3, [], line_budget, document=("another", "scan.png")) == 0
    assert engine.ahead.take(3, unsure[0], line_budget(unsure[0])) is None and engine.ahead.done == {}


def _convert(path: Path, decoder: str):
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(engine="builtin", text_layer="prefer", engine_options={"decoder": decoder}))
    try:
        return pipe.run(path).to_markdown(anchors=False)
    finally:
        pipe.close()


@needs_shipped
@pytest.mark.slow
def test_a_page_reads_the_same_with_its_lines_decoded_ahead(monkeypatch):
    from app.core.engines.builtin import ahead
    from app.core.pipeline import page_ocr

    taken = []
    plain_take = ahead.Ahead.take
    monkeypatch.setattr(ahead.Ahead, "take", lambda self, *a: taken.append(plain_take(self, *a)) or taken[-1])
    page = PAGES / "s14-handwritten-page.png"  # handwriting: unsure lines
    with_ahead = _convert(page, "unsure")
    assert any(t is not None for t in taken)
    monkeypatch.setattr(page_ocr.ScanReader, "decode_ahead", lambda self, index: 0)
    taken.clear()
    without = _convert(page, "unsure")
    assert not any(t is not None for t in taken)
    assert with_ahead == without and "doorman" in with_ahead


@needs_shipped
@pytest.mark.slow
def test_the_windows_decoder_decodes_nothing_ahead(monkeypatch):
    from app.core.engines.builtin import ahead

    ran = []
    plain_run = ahead.Ahead.run
    monkeypatch.setattr(ahead.Ahead, "run", lambda self, *a, **k: ran.append(plain_run(self, *a, **k)) or ran[-1])
    _convert(PAGES / "s14-handwritten-page.png", "always")
    assert not ran

