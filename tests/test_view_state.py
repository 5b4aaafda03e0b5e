"""The views' plain-Python models (app.gui.views.rounds_state): statistics, character spans and window chunks, checked
over many random event streams against direct recomputation."""
from __future__ import annotations

import random

import pytest

from app.core.record.events import NgramBanned, PrefixLaid, RegionFinished, RegionStarted, RoundVerified, RunStarted, TokensCommitted, WindowStepped
from app.gui.views.rounds_state import RoundsModel
from app.gui.views.view_text import engine_hint, visible_whitespace
from app.gui.views.window_state import WindowModel


def random_rounds(rng: random.Random, n_rounds: int, block: int, region: str = "r") -> list[RoundVerified]:
    out = []
    for i in range(n_rounds):
        n = block + 1
        k = rng.randint(0, n)
        cands = [rng.randint(1, 9) for _ in range(n)]
        vers = list(cands)
        if k < n:
            vers[k] = cands[k] + 10
        new = cands[:k] + [vers[k]] if k < n else cands + [99]
        text = "".join(rng.choice(["a", "b", " ", "\n", "é"]) for _ in new) if rng.random() > 0.1 else ""
        out.append(RoundVerified(region, i, k, cands, vers, new, text, rng.uniform(1, 3), rng.uniform(1, 3), 10 + i,
                                 candidate_texts=[str(c) for c in cands], verified_texts=[str(v) for v in vers],
                                 bonus=99 if k == n else None, block_size=block))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_round_statistics_and_spans_match_a_direct_count(seed):
    rng = random.Random(seed)
    block = rng.choice([1, 4, 8, 32])
    events = random_rounds(rng, rng.randint(1, 60), block)
    model = RoundsModel()
    for ev in events:
        model.feed(ev)
    reg = model.regions["r"]
    tokens = sum(len(e.new_tokens) for e in events)
    assert reg.tpf == reg.live_tpf == pytest.approx(tokens / (2 * len(events)))
    assert reg.mean_accepted == pytest.approx(tokens / len(events))
    for i, rate in enumerate(reg.position_rates()):
        assert rate == pytest.approx(sum(e.k > i for e in events) / len(events))
    hist = {}
    for e in events:
        hist[len(e.new_tokens)] = hist.get(len(e.new_tokens), 0) + 1
    assert reg.histogram == hist
    text = "".join(e.text for e in events)
    assert reg.text == text
    for rec in reg.rounds:
        assert text[rec.start : rec.end] == rec.text
        for pos in range(rec.start, rec.end):
            assert reg.round_at(pos) is rec
    assert reg.round_at(len(text)) is None and reg.round_at(-1) is None


def test_regions_engine_and_baseline():
    model = RoundsModel()
    model.feed(RunStarted(engine="gravity"))
    model.feed(RegionStarted(region_id="p1-r2", page=1, task="table", engine="gravity"))
    model.feed(random_rounds(random.Random(0), 1, 4, region="p1-r2")[0])
    reg = model.regions["p1-r2"]
    assert (reg.task, reg.page, reg.engine) == ("table", 1, "gravity") and model.current == "p1-r2"
    for step in range(10):
        model.feed(TokensCommitted(region_id="ar", step=step, tokens=[1], text="x", ms=5.0))
    assert model.baseline_tps == pytest.approx(200.0)
    model.feed(RegionFinished(region_id="ar-region", text="x", stats={"mode": "ar", "decode_tokens_per_s": 123.0}))
    assert model.baseline_tps == pytest.approx(123.0)
    assert "draft" in reg.rounds[0].describe()


def test_window_chunks_map_outputs_to_characters():
    """An engine reporting every 3rd step: each event brings three outputs' text."""
    model = WindowModel()
    model.feed(PrefixLaid(region_id="doc", prefix_len=20, window=6, segments=[{"kind": "bos", "label": "BOS", "start": 0, "end": 1}]))
    pieces = []
    for c in range(0, 30, 3):
        text = "".join(f"<{j}>" for j in range(c, c + 3))
        pieces.append(text)
        decoded = c + 3
        lo = max(0, decoded - 1 - 6)
        model.feed(WindowStepped(region_id="doc", step=c + 2, token=c, text=text, prefix_len=20, decoded=decoded,
                                 attended=(lo, decoded - 1), evicted=None, cache_positions=20 + min(decoded, 6),
                                 cache_bytes=0, full_positions=20 + decoded, full_bytes=0))
    model.feed(NgramBanned(region_id="doc", step=14, token=3, ngram_start=9))
    s = model.streams["doc"]
    assert s.output_len == 30 and s.chunks == 10 and s.bound == 26
    assert max(s.cache_positions) <= s.bound
    text = "".join(pieces)
    assert s.text == text
    a, b = s.span_chars(3, 6)  # exactly chunk 1
    assert text[a:b] == "<3><4><5>"
    a, b = s.span_chars(4, 8)  # rounds out to whole chunks
    assert text[a:b] == "<3><4><5><6><7><8>"
    lo, hi = s.attended
    a, b = s.window_chars()
    assert text[a:b].startswith(f"<{lo - lo % 3}>") and text[a:b].endswith("<29>")
    assert s.chunk_of(14) == 4 and s.bans[0].step == 14


def test_hints_and_visible_whitespace():
    assert engine_hint("gravity", "rounds") is None and engine_hint("unlimited", "window") is None
    assert "Classic OCR" in engine_hint("classic", "rounds")
    assert "Unlimited-OCR" in engine_hint("gravity", "window")
    assert engine_hint("", "rounds") is None
    assert visible_whitespace("a b\n\t\x1e") == "a·b↵→␞" and visible_whitespace("") == "∅"


def _round(i, k, cands, vers, new, texts, region="r", bonus=None):
    return RoundVerified(region, i, k, cands, vers, new, "x" * len(new), 1.0, 1.0, 10 + i,
                         candidate_texts=[texts.get(c, str(c)) for c in cands],
                         verified_texts=[texts.get(v, str(v)) for v in vers], bonus=bonus, block_size=len(cands) - 1)


def _finish(model, region, events, stop):
    out = sum(len(e.new_tokens) for e in events)
    tokens = out - (1 if stop else 0)
    stats = {"tokens": tokens, "output_tokens": out, "forwards": 2 * len(events), "tpf": tokens / (2 * len(events))}
    model.feed(RegionFinished(region_id=region, text="x", stats=stats, tokens=[t for e in events for t in e.new_tokens]))
    return stats["tpf"]


@pytest.mark.parametrize("case", ["cut_mid_block", "stop_is_the_correction", "learned_id", "budget_cut"])
def test_live_tpf_excludes_the_stop_token_like_the_engine(case):
    """The live figure while a region runs and the engine's figure once it finished must agree: the engine leaves
    a committed stop token out of its TPF, and so must the live view (else the number jumps at the region's end)."""
    model = RoundsModel()
    model.feed(RegionStarted(region_id="r", page=1, task="text", engine="gravity", max_new_tokens=9 if case == "budget_cut" else 100))
    names = {90: "<|user|>", 77: "END"}
    first = _round(0, 4, [1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 4, 6], names)  # k=4: 5 natural tokens
    if case == "cut_mid_block":  # all accepted but the stop id was a draft: cut after it
        last = _round(1, 5, [7, 90, 8, 9, 10], [7, 90, 8, 9, 10], [7, 90], names, bonus=11)
    elif case == "stop_is_the_correction":  # natural length, only the token's text says it is a stop
        last = _round(1, 1, [7, 8, 9, 10, 11], [7, 90, 9, 10, 11], [7, 90], names)
    elif case == "budget_cut":  # the budget (9) cut the round: its last token is a plain token
        last = _round(1, 5, [7, 8, 9, 10, 11], [7, 8, 9, 10, 11], [7, 8, 9, 10], names, bonus=12)
    else:  # a stop id whose text looks ordinary, learned from an earlier region
        model.feed(RegionStarted(region_id="r0", page=1, task="text", engine="gravity", max_new_tokens=100))
        prior = [_round(0, 1, [3, 4, 5], [3, 77, 5], [3, 77], names, region="r0")]
        model.feed(prior[0])
        _finish(model, "r0", prior, stop=True)
        assert 77 in model.stop_ids
        last = _round(1, 1, [7, 8, 9, 10, 11], [7, 77, 9, 10, 11], [7, 77], names)
    for ev in (first, last):
        model.feed(ev)
    reg = model.regions["r"]
    live = reg.tpf
    assert not reg.finished and live == reg.live_tpf
    final = _finish(model, "r", [first, last], stop=case != "budget_cut")
    assert reg.finished and reg.tpf == pytest.approx(final) and live == pytest.approx(final)
    assert reg.tokens == round(final * 2 * len(reg.rounds)) and reg.mean_accepted == pytest.approx(2 * final)


def test_declared_stop_ids_are_exact_where_guessing_would_be_wrong():
    """With the stop ids on RegionStarted the view needs no guess: a stop id with an ordinary text and a natural
    round length counts as a stop, and a round cut short for another reason is not taken for one."""
    model = RoundsModel()
    model.feed(RegionStarted(region_id="r", page=1, task="text", engine="gravity", max_new_tokens=100, stop_ids=[77]))
    names = {77: "END"}
    first = _round(0, 1, [1, 2, 3], [1, 5, 3], [1, 5], names)  # a correction token that is no stop id
    last = _round(1, 1, [7, 8, 9], [7, 77, 9], [7, 77], names)  # natural length, 77 is declared
    model.feed(first)
    model.feed(last)
    reg = model.regions["r"]
    assert reg.output_tokens == 4 and reg.tokens == 3
