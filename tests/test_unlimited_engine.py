"""The Unlimited-OCR document engine on the tiny real checkpoint: the same tokens as `model.generate` on the
processor's inputs (multi-page base mode and single-page gundam mode), the event stream, the token budget, the
n-gram blocker's reports and Cancel."""
from __future__ import annotations

import re

import pytest
import torch
from PIL import Image

from app.core.record import events as ev
from app.core.base.cancel import CancelToken

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def loaded(tiny_unlimited_dir):
    from app.core.checkpoints.loader import load_model

    return load_model("unlimited-ocr", tiny_unlimited_dir, device="cpu", dtype="fp32")


def _engine(loaded, **options):
    from app.core.engines.unlimited import open_engine

    return open_engine(loaded=loaded, **options)


def _pages(n, size=(85, 110)):
    colours = [(255, 255, 255), (30, 60, 200), (200, 30, 60), (20, 160, 20)]
    return [Image.new("RGB", size, colours[i % 4]) for i in range(n)]


def _generate(loaded, pages, text, crop, ngram_window, max_new, ngram_size=35):
    from transformers import GenerationConfig

    inputs = loaded.processor(text=text, images=pages, return_tensors="pt", crop_to_patches=crop)
    cfg = GenerationConfig(max_new_tokens=max_new, do_sample=False, no_repeat_ngram_size=ngram_size,
                           eos_token_id=loaded.model.generation_config.eos_token_id,
                           pad_token_id=loaded.model.generation_config.pad_token_id)
    cfg.no_repeat_ngram_window_size = ngram_window
    with torch.no_grad():
        out = loaded.model.generate(**inputs, generation_config=cfg)
    return inputs["input_ids"][0].tolist(), out[0, inputs["input_ids"].shape[1]:].tolist()


def test_registry_opens_the_engine(tiny_unlimited_dir):
    from app.core.engines import open_engine

    engine = open_engine("unlimited", model_path=tiny_unlimited_dir, device="cpu", block_size=4, unknown_option=1)
    assert engine.kind == "document" and engine.name == "unlimited" and engine.window == 8


def test_multi_page_document_in_one_generation_matches_generate(loaded):
    pages = _pages(3)
    events: list[ev.Event] = []
    engine = _engine(loaded, max_new_tokens=120, dpi=150)
    laid = {}  # blocks are handed over as they complete, page by page (the pipeline announces them)
    result = engine.decode_document(pages, emit=events.append,
                                    on_blocks=lambda page, regions: laid.__setitem__(page, [r.id for r in regions]))
    ids, expected = _generate(loaded, pages, "<image>" * 3 + "Multi page parsing.", False, 1024, 120)
    tokens = [e.token for e in events if isinstance(e, ev.WindowStepped)]
    assert tokens == expected  # same tokens as transformers' generate over the processor's inputs
    assert result.stats["prefix_len"] == len(ids) and result.stats["mode"] == "base"
    assert result.stats["ngram_window"] == 1024

    encoded = [e for e in events if isinstance(e, ev.PageEncoded)]
    assert [e.page for e in encoded] == [0, 1, 2] and all(e.tokens == 7 for e in encoded)
    prefix = next(e for e in events if isinstance(e, ev.PrefixLaid))
    kinds = [(s["kind"], s["start"], s["end"]) for s in prefix.segments]
    assert kinds[0] == ("bos", 0, 1) and kinds[1:4] == [("image", 1, 8), ("image", 8, 15), ("image", 15, 22)]
    assert kinds[4][0] == "prompt" and kinds[4][2] == len(ids) == prefix.prefix_len
    assert all(ids[s:e] == [loaded.model.config.image_token_id] * 7 for k, s, e in kinds[1:4])
    # every page is encoded before the first decode step; window events carry sizes from the live cache
    order = [type(e).__name__ for e in events]
    assert order.index("WindowStepped") > max(i for i, n in enumerate(order) if n == "PageEncoded")
    steps = [e for e in events if isinstance(e, ev.WindowStepped)]
    W, P = 8, prefix.prefix_len
    assert [s.step for s in steps] == list(range(len(steps)))
    assert all(s.cache_positions == P + W for s in steps)  # static cache: prefix + W slots, from the start
    assert steps[-1].full_positions == P + len(steps) - 1
    assert steps[-1].cache_bytes == (P + W) * 2 * 2 * 4 * 16 * 4
    assert "".join(s.text for s in steps).replace("\ufffd", "") == result.raw_text.replace("\ufffd", "")
    # region events: every region of the result was announced on its page and finished once
    assert not any(isinstance(e, ev.LayoutDone) for e in events)  # the pipeline's to say
    finished = [e.region_id for e in events if isinstance(e, ev.RegionFinished)]
    assert finished[-1] == "doc" and events[-1].text == result.raw_text and events[-1].stats == result.stats
    finished = finished[:-1]
    assert sorted(finished) == sorted(r.id for r in result.regions) and len(set(finished)) == len(finished)
    assert sorted(i for ids_ in laid.values() for i in ids_) == sorted(r.id for r in result.regions)
    assert not any(isinstance(e, ev.PageFinished) for e in events)  # the pipeline's to say
    for r in result.regions:
        assert r.dpi == 150 and r.box_pt == pytest.approx(tuple(v * 72 / 150 for v in r.box))


def test_single_page_gundam_matches_generate(loaded):
    page = _pages(1, size=(40, 70))  # larger than the 16 px tile: tiled like a real page in gundam mode
    engine = _engine(loaded, max_new_tokens=60, cache="dynamic", prefill_chunk=16)  # chunked prefill, as on GPU
    events: list[ev.Event] = []
    result = engine.decode_document(page, emit=events.append)
    ids, expected = _generate(loaded, page, "<image>document parsing.", True, 128, 60)
    assert [e.token for e in events if isinstance(e, ev.WindowStepped)] == expected
    static = _engine(loaded, max_new_tokens=60, cache="static", prefill_chunk=5).decode_document(page)
    assert static.raw_text == result.raw_text
    encoded = [e for e in events if isinstance(e, ev.PageEncoded)]
    assert result.stats["mode"] == "gundam" and result.stats["ngram_window"] == 128
    assert encoded[0].tokens > 7 and result.stats["prefix_len"] == len(ids)


def test_document_that_does_not_fit_the_budget_is_refused_before_encoding(loaded):
    from app.core.engines.unlimited import DocumentTooLong

    engine = _engine(loaded, max_total_tokens=400, min_output_tokens=256)
    events: list[ev.Event] = []
    with pytest.raises(DocumentTooLong) as info:
        engine.decode_document(_pages(30), emit=events.append)
    message = str(info.value)
    assert "30 pages" in message and "400" in message
    fit = int(re.search(r"parts of at most (\d+) pages", message).group(1))
    plan = lambda k: [engine.plan_page(i, 85, 110, crop=False) for i in range(k)]  # noqa: E731
    engine.check_budget(plan(fit))  # the advice is right: that many pages fit, one more does not
    with pytest.raises(DocumentTooLong):
        engine.check_budget(plan(fit + 1))
    assert not any(isinstance(e, ev.PageEncoded) for e in events)
    assert not any(isinstance(e, ev.ErrorRaised) for e in events)  # the pipeline reports a refused document


def test_output_stops_at_the_budget_with_a_message(loaded):
    engine = _engine(loaded, max_total_tokens=90, min_output_tokens=10)
    events: list[ev.Event] = []
    result = engine.decode_document(_pages(2), emit=events.append)
    P = result.stats["prefix_len"]
    assert result.stats["budget"] == 90 - P
    assert result.stats["stop"] == "budget"  # these weights emit no EOS within 69 tokens
    assert result.stats["output_tokens"] == 90 - P
    assert any(isinstance(e, ev.ErrorRaised) and not e.fatal and "budget" in e.message for e in events)


def test_ngram_bans_are_reported_where_they_change_the_choice(loaded):
    n = 3
    engine = _engine(loaded, max_new_tokens=150, ngram_size=n, ngram_window=64)
    events: list[ev.Event] = []
    result = engine.decode_document(_pages(1, size=(16, 16)), emit=events.append)
    P = result.stats["prefix_len"]
    steps = [e for e in events if isinstance(e, ev.WindowStepped)]
    bans = [e for e in events if isinstance(e, ev.NgramBanned)]
    assert bans and result.stats["ngram_bans"] == len(bans)
    _, expected = _generate(loaded, _pages(1, size=(16, 16)), "<image>document parsing.", True, 64, 150, ngram_size=n)
    assert [s.token for s in steps] == expected  # transformers' own windowed blocker picks the same tokens
    prefix = next(e for e in events if isinstance(e, ev.PrefixLaid))
    out = [s.token for s in steps]
    for ban in bans:
        assert steps[ban.step].token != ban.token  # the banned token was the greedy pick and was replaced
        start = ban.ngram_start
        assert start >= -P and ban.step - start <= 64
        history = out[:ban.step]
        if start >= 0:  # the earlier n-gram lies in the output: its first n-1 tokens equal the last n-1 tokens
            assert history[start:start + n - 1] == history[-(n - 1):] and history[start + n - 1] == ban.token
    assert prefix.prefix_len == P
    # and no n-gram repeats within the window in the output
    for i in range(len(out) - n + 1):
        gram = out[i:i + n]
        later = [j for j in range(i + 1, min(len(out) - n + 1, i + 64 - n + 1)) if out[j:j + n] == gram]
        assert not later


def test_cancel_stops_within_one_step(loaded):
    engine = _engine(loaded, max_new_tokens=500)
    token = CancelToken()
    events: list[ev.Event] = []

    def emit(event):
        events.append(event)
        if isinstance(event, ev.WindowStepped) and event.step == 10:
            token.cancel()

    result = engine.decode_document(_pages(2), emit=emit, cancel=token)
    steps = [e.step for e in events if isinstance(e, ev.WindowStepped)]
    assert steps[-1] == 10 and result.cancelled and result.stats["stop"] == "cancelled"
    assert result.stats["output_tokens"] == 11
    last = events[-1]  # the generation's own record closes the window stream; RunCancelled is the caller's
    assert isinstance(last, ev.RegionFinished) and last.region_id == "doc" and last.cancelled
    assert not any(isinstance(e, ev.RunCancelled) for e in events)
    # cancelling during page encoding stops before the next page
    token2, seen = CancelToken(), []

    def emit2(event):
        seen.append(event)
        if isinstance(event, ev.PageEncoded):
            token2.cancel()

    result2 = engine.decode_document(_pages(3), emit=emit2, cancel=token2)
    assert result2.cancelled and [e.page for e in seen if isinstance(e, ev.PageEncoded)] == [0]
    assert not any(isinstance(e, ev.WindowStepped) for e in seen)
    # ... and during a chunked prefill, before the next chunk
    token3, seen3 = CancelToken(), []

    def emit3(event):
        seen3.append(event)
        if isinstance(event, ev.PrefixLaid):
            token3.cancel()

    chunked = _engine(loaded, max_new_tokens=500, prefill_chunk=4)
    result3 = chunked.decode_document(_pages(2), emit=emit3, cancel=token3)
    assert result3.cancelled and result3.stats["stop"] == "cancelled" and result3.stats["output_tokens"] == 0
    assert not any(isinstance(e, ev.WindowStepped) for e in seen3)


class _DocumentPages(list):
    """A page sequence that knows its document page numbers and resolution, like the pipeline's LazyPages."""

    indices = [4, 7]
    dpi = 150.0


def test_events_name_document_pages_when_the_sequence_has_indices(loaded):
    events: list[ev.Event] = []
    result = _engine(loaded, max_new_tokens=200).decode_document(_DocumentPages(_pages(2)), emit=events.append)
    assert [e.page for e in events if isinstance(e, ev.PageEncoded)] == [4, 7]
    prefix = next(e for e in events if isinstance(e, ev.PrefixLaid))
    assert [s.get("page") for s in prefix.segments if s["kind"] == "image"] == [4, 7]
    assert result.regions and {r.page for r in result.regions} <= {0, 1}  # the result indexes `pages`, as the pipeline expects
    assert all(r.id.startswith(("p5-", "p8-")) and r.dpi == 150.0 for r in result.regions)
    for e in events:
        if isinstance(e, ev.LayoutDone):
            assert e.page in (4, 7) and all(r["page"] == e.page for r in e.regions)


def test_detokenizer_streams_exactly_the_decoded_text(loaded):
    from app.core.engines.unlimited import Detokenizer

    tok = loaded.tokenizer
    text = ("<PAGE><|det|>title [1, 2, 3, 4]<|/det|># Größe – 東京 ∑ x²\n<|det|>text [5, 6, 7, 8]<|/det|>"
            + "naïve café, ünïcödé… " * 6 + "\nend")
    ids = tok(text, add_special_tokens=False)["input_ids"]
    detok = Detokenizer(tok)
    streamed = "".join(detok.push(i) for i in ids)
    assert streamed == detok.text == tok.decode(ids, skip_special_tokens=False) == text


def test_token_plan_at_the_real_processor_settings(loaded):
    """The released processor's defaults (1024 global view, 640 tiles, 16 px patches, 4× downsample) give the
    authors' counts: 273 a page in base mode, 2733 for A4 at 300 dpi in gundam mode (4 × 6 tiles)."""
    from transformers import UnlimitedOcrImageProcessor, UnlimitedOcrProcessor

    from app.core.engines.unlimited import plan_page

    real = UnlimitedOcrProcessor(image_processor=UnlimitedOcrImageProcessor(), tokenizer=loaded.tokenizer)
    assert plan_page(real, 0, 2480, 3508, crop=False).tokens == 273
    a4 = plan_page(real, 0, 2480, 3508, crop=True)
    assert (a4.tokens, a4.grid, a4.tiles) == (2733, (4, 6), 24)
    assert plan_page(real, 0, 2550, 3300, crop=True).tokens == 1513  # US Letter: 3 × 4 tiles
    assert plan_page(real, 0, 600, 400, crop=True).tokens == 273  # not larger than a tile: no tiles
    # the 32,768-token budget at these settings: 119 base-mode pages fit (with room for output), 120 do not
    from dataclasses import replace

    from app.core.engines.unlimited import DocumentTooLong, UnlimitedEngine

    engine = UnlimitedEngine(replace(loaded, processor=real))
    pages = lambda k: [plan_page(real, i, 2480, 3508, crop=False) for i in range(k)]  # noqa: E731
    prefix, budget = engine.check_budget(pages(119))
    assert prefix > 119 * 273 and budget == 32768 - prefix >= 256
    with pytest.raises(DocumentTooLong, match="at most 119 pages"):
        engine.check_budget(pages(120))
