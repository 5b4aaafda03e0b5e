"""R-SWA decoding against the real UnlimitedOcrForConditionalGeneration (tiny random checkpoints, no mocks):
cached logits vs an explicit-mask recompute, the bounded cache, window events vs the live cache contents, the
n-gram blocker vs transformers' own processor, and the observer leaving the layer class alone."""
from __future__ import annotations

import random

import pytest
import torch
from PIL import Image

from app.core.decoding.rswa import NgramBlocker, RswaDecoder, WindowObserver, full_attention_twin, make_cache

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def small_window_model(tmp_path_factory):
    """W = 4, so eviction starts at the 5th decode step; a smaller init std keeps fp32 logits near ±3."""
    from app.core.checkpoints.loader import load_model
    from app.core.tiny.unlimited import build

    path = build(tmp_path_factory.mktemp("tiny-unlimited-w4"), seed=1, sliding_window=4, init_std=0.08)
    return load_model("unlimited-ocr", path, device="cpu", dtype="fp32")


@pytest.fixture(scope="module")
def tiny_model(tiny_unlimited_dir):
    from app.core.checkpoints.loader import load_model

    return load_model("unlimited-ocr", tiny_unlimited_dir, device="cpu", dtype="fp32")


def _pages():
    return [Image.new("RGB", (60, 90), (250, 250, 250)), Image.new("RGB", (90, 60), (40, 90, 200))]


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_cached_rswa_logits_equal_explicit_mask_recompute(small_window_model, cache):
    from app.core.engines.unlimited import UnlimitedEngine
    from app.core.tiny.unlimited import IMAGE

    lm = small_window_model
    model, W, T = lm.model, 4, 40
    engine = UnlimitedEngine(lm)
    pages = _pages()
    plans = [engine.plan_page(i, p.width, p.height, crop=False) for i, p in enumerate(pages)]
    feats = [engine.encode_page(p, plan, crop=False) for p, plan in zip(pages, plans)]
    ids, embeds, _ = engine.build_prefix(plans, feats)
    P = len(ids)

    decoder = RswaDecoder(model, cache=cache, max_new_tokens=T, keep_logits=True)
    steps = list(decoder.steps(embeds, ids))
    assert len(steps) == T and any(s.window.evicted is not None for s in steps)
    cached = torch.stack([s.logits for s in steps])

    # one forward without cache over prompt + outputs, built independently through the processor
    inputs = lm.processor(text=IMAGE * 2 + "Multi page parsing.", images=pages, return_tensors="pt",
                          crop_to_patches=False)
    assert inputs["input_ids"][0].tolist() == ids  # the page-wise prefix is the processor's prefix
    full = torch.cat([inputs["input_ids"], torch.tensor([[s.token for s in steps[:-1]]])], dim=1)
    L = full.shape[1]
    q, k = torch.arange(L)[:, None], torch.arange(L)[None]
    causal = k <= q

    def recompute(window):
        allowed = causal & ((k < P) | (q - k < window))  # prefix visible + last `window` outputs incl. the fed one
        with torch.no_grad():
            out = model(input_ids=full, pixel_values=inputs["pixel_values"], use_cache=False,
                        attention_mask={"reference_sliding_attention": allowed[None, None],
                                        "full_attention": causal[None, None]})
        return out.logits[0, P - 1:].float()

    delta = (recompute(W) - cached).abs().max().item()
    assert delta < 1e-5, delta
    assert (recompute(W + 1) - cached).abs().max().item() > 1e-3  # the test tells W from W+1


def test_cache_stays_at_prefix_plus_window_full_attention_grows(tiny_model):
    model = tiny_model.model
    W = model.config.text_config.sliding_window
    P = 300
    embeds = model.get_input_embeddings()(torch.randint(0, 380, (1, P), generator=torch.Generator().manual_seed(0)))
    for cache, n in (("static", 2000), ("dynamic", 600)):
        decoder = RswaDecoder(model, cache=cache, max_new_tokens=n)  # no EOS: it runs the full length
        peak = 0
        for step in decoder.steps(embeds):
            w = step.window
            assert w.cache_positions <= P + W
            assert w.full_positions == P + step.index
            peak = max(peak, w.cache_positions)
            if step.index % 250 == 1:  # the real cache agrees with the observer's count
                layer = decoder.cache.layers[0]
                held = layer.all_keys if cache == "static" else torch.cat([layer.prefill_keys, layer.keys], dim=-2)
                assert held.shape[-2] == w.cache_positions
        assert step.index == n - 1 and peak >= P + W - 1

    twin = full_attention_twin(model)
    decoder = RswaDecoder(twin, cache="dynamic", max_new_tokens=300)
    sizes = [s.window.cache_positions for s in decoder.steps(embeds)]
    assert sizes == [P + i for i in range(300)]  # full attention: one more position per token


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_window_events_agree_with_live_cache_contents(tiny_model, cache):
    model = tiny_model.model
    W = model.config.text_config.sliding_window
    P, T = 12, 40
    embeds = model.get_input_embeddings()(torch.randint(0, 380, (1, P), generator=torch.Generator().manual_seed(2)))
    decoder = RswaDecoder(model, cache=cache, max_new_tokens=T)
    gen = decoder.steps(embeds)
    first = next(gen)  # prefill done
    layer = decoder.cache.layers[0]
    prefix_keys = (layer.all_keys if cache == "static" else layer.prefill_keys)[0, 0, :P, 0].clone()
    fingerprints: dict[int, float] = {}  # absolute position -> first key value the layer was given for it
    returned: list[int] = []
    observed_update = layer.update  # the observer's wrapper

    def recording_update(key_states, value_states, *args, **kwargs):
        pos = P + first.index + len(fingerprints)
        fingerprints[pos] = float(key_states[0, 0, -1, 0])
        out = observed_update(key_states, value_states, *args, **kwargs)
        returned.append(int(out[0].shape[-2]))
        return out

    layer.update = recording_update
    assert first.window.kind == "prefill" and first.window.prefix_len == P and first.window.attended == (0, 0)
    for step in gen:
        c, w = step.index, step.window
        assert w.kind == "decode" and w.step == c and w.prefix_len == P
        assert w.attended == (max(0, c - W), c)
        assert w.evicted == (c - W - 1 if c > W else None)
        assert w.stored[1] == c and w.attended[0] <= w.stored[0]
        keys = layer.all_keys if cache == "static" else torch.cat([layer.prefill_keys, layer.keys], dim=-2)
        assert torch.equal(keys[0, 0, :P, 0], prefix_keys)  # the prefix is pinned
        held = keys[0, 0, P:, 0]
        for slot, out_index in enumerate(range(*w.stored)):  # the window slots hold exactly these outputs
            assert float(held[slot]) == fingerprints[P + out_index]
        if w.evicted is not None:
            assert all(float(v) != fingerprints[P + w.evicted] for v in held[: w.stored[1] - w.stored[0]])
        if cache == "dynamic":  # what the query attended to: prefix + the outputs in `attended`
            assert returned[-1] == P + (w.attended[1] - w.attended[0])
    assert c == T - 1


def test_observer_shadows_one_instance_only(tiny_model):
    from transformers.models.unlimited_ocr import modeling_unlimited_ocr as m

    cls_update = m.UnlimitedOcrDynamicReferenceSlidingWindowLayer.update
    cache_a = make_cache(tiny_model.model, "dynamic", 0)
    cache_b = make_cache(tiny_model.model, "dynamic", 0)
    with WindowObserver(cache_a):
        assert "update" in vars(cache_a.layers[0])
        assert "update" not in vars(cache_b.layers[0]) and "update" not in vars(cache_a.layers[1])
        assert m.UnlimitedOcrDynamicReferenceSlidingWindowLayer.update is cls_update
    assert "update" not in vars(cache_a.layers[0])


def test_ngram_blocker_matches_transformers_processor():
    from transformers.models.unlimited_ocr.generation_unlimited_ocr import (
        UnlimitedOcrSlidingWindowNoRepeatNgramLogitsProcessor as HFBlocker,
    )

    rng = random.Random(0)
    checked = banned_any = 0
    for _ in range(300):
        n, window = rng.choice([2, 3, 4, 35]), rng.choice([5, 16, 128])
        alphabet = rng.choice([2, 3, 6])
        length = rng.randint(1, 200)
        ids = [rng.randrange(alphabet) for _ in range(length)]
        if n == 35:
            ids = ([1, 2, 3] * 40)[:length]
        ours = NgramBlocker(n, window).banned(ids)
        scores = torch.zeros(1, 8)
        theirs = HFBlocker(n, window)(torch.tensor([ids]), scores.clone())
        assert {b.token for b in ours} == set(torch.nonzero(theirs[0] == float("-inf")).flatten().tolist())
        for b in ours:  # the reported n-gram really is an earlier occurrence inside the window
            assert b.ngram_start >= max(0, len(ids) - window)
            assert ids[b.ngram_start:b.ngram_start + n - 1] == ids[len(ids) - (n - 1):]
            assert ids[b.ngram_start + n - 1] == b.token
        checked += 1
        banned_any += bool(ours)
    assert checked == 300 and banned_any > 50
