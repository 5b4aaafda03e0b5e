"""The decoders' faster paths change nothing a person can see: on tiny random GlmOcr models in fp32, the static KV
cache, the one-read round and the engine's lazy token texts give the dynamic path's tokens, token for token, and the
log-probabilities self-spec reports are AR's."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.decoding.autoregressive import ar_decode, prefill  # noqa: E402
from app.core.decoding.selfspec import selfspec_decode  # noqa: E402
from app.core.decoding.static_cache import resolve_cache_mode, to_static  # noqa: E402
from app.core.tiny.glm_checkpoint import sample_images  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.usefixtures("one_torch_thread")]

NEW = 40


@pytest.fixture(scope="module")
def engine(tiny_glmocr_dir):
    from app.core.engines.glm_engine import open_ar

    return open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32")


@pytest.fixture(scope="module")
def inputs(engine):
    return [engine.build_inputs(image, "text") for image in sample_images(2, seed=5)]


def _prefix(engine, inputs, static: bool, budget: int, block: int = 0):
    prefix = prefill(engine.model, inputs)
    return to_static(engine.model, prefix, budget=budget, block_size=block) if static else prefix


def _spec(engine, prefix, block, budget, **kw):
    return selfspec_decode(engine.model, prefix, mask_id=engine.mask_id, block_size=block,
                           stop_ids=kw.pop("stop_ids", engine.stop_ids), max_new_tokens=budget, **kw)


def test_static_cache_gives_the_dynamic_tokens(engine, inputs):
    for inp in inputs:
        ar = ar_decode(engine.model, _prefix(engine, inp, False, NEW), stop_ids=engine.stop_ids, max_new_tokens=NEW)
        ar_static = ar_decode(engine.model, _prefix(engine, inp, True, NEW), stop_ids=engine.stop_ids,
                              max_new_tokens=NEW)
        assert ar_static.tokens == ar.tokens and len(ar.tokens) >= 4
        for block in (1, 4, 8, 32):
            got = _spec(engine, _prefix(engine, inp, True, NEW, block), block, NEW)
            assert got.tokens == ar.tokens, f"static self-spec, B={block}"


def test_static_cache_rolls_back_rejected_drafts(engine, inputs):
    """Oracle drafts with a wrong token at a varying place: every rollback length, and the stale entries the
    rejected drafts left in the buffer are masked and overwritten, never attended."""
    truth = ar_decode(engine.model, prefill(engine.model, inputs[0]), stop_ids=[], max_new_tokens=80).tokens
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    schedule = [0, 3, 9, 1, 8, 5, 2]

    def hook(index, output, candidates):
        drafted = list(truth[len(output):len(output) + len(candidates)])
        drafted[schedule[index % len(schedule)] % len(candidates)] += 1
        drafted = [t % vocab for t in drafted]
        return drafted

    for static in (False, True):
        got = _spec(engine, _prefix(engine, inputs[0], static, 60, 8), 8, 60, stop_ids=[], draft_hook=hook)
        assert got.tokens == truth[:60]
        assert [r.k for r in got.rounds][:3] == [0, 3, 9 % 9]


def test_one_read_round_equals_the_reading_round(engine, inputs):
    """On an accelerator a round reads its tokens once (a0 is not read before the verify); same tokens."""
    for inp in inputs:
        ref = _spec(engine, prefill(engine.model, inp), 4, NEW, read_a0=True)
        got = _spec(engine, prefill(engine.model, inp), 4, NEW, read_a0=False)
        assert got.tokens == ref.tokens
        assert got.logprobs == pytest.approx(ref.logprobs, abs=1e-6)


def test_selfspec_logprobs_are_ar_logprobs(engine, inputs):
    for inp in inputs:
        ar = ar_decode(engine.model, prefill(engine.model, inp), stop_ids=engine.stop_ids, max_new_tokens=NEW)
        assert len(ar.logprobs) == len(ar.tokens) and all(lp <= 0 for lp in ar.logprobs)
        with torch.no_grad():  # AR's own figure checked against generate()'s raw logits
            out = engine.model.generate(**inp, max_new_tokens=NEW, do_sample=False, output_logits=True,
                                        return_dict_in_generate=True)
        logits = torch.cat(out.logits).float()
        ref = torch.log_softmax(logits, -1)[torch.arange(len(ar.tokens)), torch.tensor(ar.tokens)]
        assert ar.logprobs == pytest.approx(ref.tolist(), abs=1e-4)
        for block in (2, 4, 8, 32):
            got = _spec(engine, prefill(engine.model, inp), block, NEW)
            assert got.tokens == ar.tokens
            assert got.logprobs == pytest.approx(ar.logprobs, abs=1e-4), f"B={block}"


def test_engine_reports_logprobs_and_honours_the_cache_option(tiny_glmocr_dir):
    from app.core.engines.glm_engine import open_ar, open_selfspec

    image = sample_images(1, seed=3)[0]
    ar = open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", max_new_tokens=24)
    assert ar.cache == "dynamic"  # auto on CPU
    static = open_selfspec(loaded=ar.loaded, block_size=4, max_new_tokens=24, cache="static")
    events = []
    a = ar.decode_region(image, "text", region_id="a")
    s = static.decode_region(image, "text", region_id="s", emit=events.append)
    assert s.tokens == a.tokens and len(a.logprobs) == len(a.tokens) == len(s.logprobs)
    assert s.logprobs == pytest.approx(a.logprobs, abs=1e-4)
    rounds = [e for e in events if e.type == "round_verified"]
    assert rounds and all(e.candidate_texts == static.token_texts(e.candidates) for e in rounds)
    assert rounds[0].candidate_texts[0] == static.tokenizer.decode([rounds[0].candidates[0]])
    assert resolve_cache_mode("auto", "cuda:0") == "static"
    with pytest.raises(ValueError, match="dynamic, static"):
        open_ar(loaded=ar.loaded, cache="paged")


def test_compiled_static_forward_gives_the_same_tokens(engine, inputs):
    """The static cache's forward captured by torch.compile (its in-place writes at prepared positions, fixed shapes
    q = 1, B, B+1) decodes what eager does. aot_eager traces and functionalises the very graph inductor and CUDA
    graphs get, without the minute of code generation."""
    from app.core.decoding.static_cache import compiled_logits

    runner = compiled_logits("cpu", backend="aot_eager")
    inp = inputs[0]
    ref = ar_decode(engine.model, prefill(engine.model, inp), stop_ids=engine.stop_ids, max_new_tokens=24)
    got = ar_decode(engine.model, to_static(engine.model, prefill(engine.model, inp), budget=24, runner=runner),
                    stop_ids=engine.stop_ids, max_new_tokens=24)
    assert got.tokens == ref.tokens
    spec = _spec(engine, to_static(engine.model, prefill(engine.model, inp), budget=24, block_size=4, runner=runner),
                 4, 24)
    assert spec.tokens == ref.tokens


def test_a_round_without_verify_is_one_slot_the_views_can_describe(tiny_glmocr_dir):
    """When a0 alone ends the decode (here: the budget), the round has no verify forward and records a0 as its only
    slot; the stats count one forward for it and the rounds view still describes every round."""
    from app.core.engines.glm_engine import open_selfspec
    from app.gui.views.rounds_state import RoundsModel

    spec = open_selfspec(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", block_size=4)
    image = sample_images(1, seed=6)[0]
    free = []
    spec.decode_region(image, "text", region_id="r", emit=free.append, max_new_tokens=30)
    after_three = sum(len(e.new_tokens) for e in free if e.type == "round_verified" and e.round_index < 3)
    for budget in (1, after_three + 1):  # the round after round 3 starts one token short of the budget
        events = []
        result = spec.decode_region(image, "text", region_id="r", emit=events.append, max_new_tokens=budget)
        rounds = [e for e in events if e.type == "round_verified"]
        assert len(result.tokens) == budget and rounds[-1].verify_ms == 0.0
        assert rounds[-1].candidates == rounds[-1].verified == rounds[-1].new_tokens and rounds[-1].k == 1
        assert result.stats["forwards"] == 2 * len(rounds) - (2 if budget == 1 else 1)  # budget 1: no forward
        model = RoundsModel()
        for ev in events:
            model.feed(ev)
        assert all(rec.describe() for rec in model.regions["r"].rounds)
        if result.stats["forwards"]:  # the view's live TPF counts the forwards the rounds really ran
            assert model.regions["r"].live_tpf == pytest.approx(result.stats["tpf"])
