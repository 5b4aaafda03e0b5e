"""Self-speculative decoding on tiny random GlmOcr models (no mocks): the invariant against generate(), every
acceptance length through oracle drafts, exact stopping."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.decoding.autoregressive import ar_decode, prefill  # noqa: E402
from app.core.decoding.selfspec import accept, selfspec_decode, truncate, window_mask  # noqa: E402
from app.core.tiny.glm_checkpoint import build, sample_images  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

BLOCKS = (4, 8, 32)
NEW = 40  # tokens per invariant case: long enough for several rounds, short enough for CI


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def engines(tiny_glmocr_dir, tmp_path_factory):
    """Three random models: the session kit (mask = in-vocab row), a resized mask row, and a deeper/wider one."""
    from app.core.engines.glm_engine import open_ar

    root = tmp_path_factory.mktemp("selfspec-models")
    dirs = [
        tiny_glmocr_dir,
        build(root / "resized", seed=1, mask_row="resized"),
        build(root / "wide", seed=2, num_hidden_layers=3, hidden_size=96, num_attention_heads=6, num_key_value_heads=3),
    ]
    return [open_ar(model_path=d, device="cpu", dtype="fp32") for d in dirs]


@pytest.fixture(scope="module")
def images():
    return sample_images(3, seed=7)


def _reference(engine, inputs, max_new_tokens, **kw):
    with torch.no_grad():
        out = engine.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False, **kw)
    return out[0, inputs["input_ids"].shape[1]:].tolist()


def _selfspec(engine, inputs, block, max_new_tokens, stop_ids=None, **kw):
    return selfspec_decode(engine.model, prefill(engine.model, inputs), mask_id=engine.mask_id, block_size=block,
                           stop_ids=engine.stop_ids if stop_ids is None else stop_ids,
                           max_new_tokens=max_new_tokens, **kw)


def test_block_mask_semantics():
    m = window_mask(3, 4, causal_from=1, bidirectional=True, device="cpu")[0, 0]
    assert m.shape == (4, 7) and m[:, :3].all()  # the whole cache is visible to every row
    assert m[0, 3:].tolist() == [True, False, False, False]  # x0 sees only itself in the window
    assert m[1:, 3:].all()  # the masks see x0 and all masks
    causal = window_mask(2, 3, causal_from=3, bidirectional=False, device="cpu")[0, 0]
    assert causal[:, 2:].tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_accept_rule():
    assert accept([5, 6, 7], [5, 6, 7], bonus=9) == (3, [5, 6, 7, 9])
    assert accept([5, 6, 7], [5, 1, 7], bonus=9) == (1, [5, 1])
    assert accept([5, 6, 7], [4, 6, 7], bonus=9) == (0, [4])
    assert truncate([1, 9, 3], 0, [9], 10) == ([1, 9], "stop")  # the stop id is kept, as generate() keeps it
    assert truncate([1, 9, 3], 9, [9], 10) == ([1], "max_new_tokens")  # the budget ends first
    assert truncate([1, 2], 0, [9], 10) == ([1, 2], "")


@pytest.mark.parametrize("model_index", [0, 1, 2])
def test_invariant_equals_generate(engines, images, model_index):
    """For any weights: self-spec == AR == generate(do_sample=False), token for token, fp32, every B."""
    engine = engines[model_index]
    if model_index == 1:
        assert engine.mask_id == engine.model.get_input_embeddings().weight.shape[0] - 1  # the resized row
    else:
        assert engine.mask_id < engine.model.get_input_embeddings().weight.shape[0] - 1  # an in-vocab row
    for image in images:
        inputs = engine.build_inputs(image, "text")
        ref = _reference(engine, inputs, NEW)
        assert len(ref) >= 4
        ar = ar_decode(engine.model, prefill(engine.model, inputs), stop_ids=engine.stop_ids, max_new_tokens=NEW)
        assert ar.tokens == ref
        for block in BLOCKS:
            got = _selfspec(engine, inputs, block, NEW)
            assert got.tokens == ref, f"B={block}"
            assert sum(len(r.new_tokens) for r in got.rounds) == len(ref)


def test_invariant_with_eager_attention(tiny_glmocr_dir, images):
    """The eager backend needs an additive float mask (a bool one silently masks nothing)."""
    from app.core.engines.glm_engine import open_ar

    engine = open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", attn_implementation="eager")
    inputs = engine.build_inputs(images[0], "text")
    ref = _reference(engine, inputs, 24)
    for block in (4, 8):
        assert _selfspec(engine, inputs, block, 24).tokens == ref


def _truth(engine, inputs, length):
    """The model's own greedy continuation with no stop ids (the oracle the drafts are taken from)."""
    return ar_decode(engine.model, prefill(engine.model, inputs), stop_ids=[], max_new_tokens=length).tokens


def _oracle(truth, schedule, vocab):
    """Drafts = the true continuation with one wrong token at schedule[round] (no error when it is B+1)."""
    def hook(round_index, output, candidates):
        n, width = len(output), len(candidates)
        drafted = list(truth[n:n + width])
        error = schedule[round_index % len(schedule)]
        if error < width:
            drafted[error] = (drafted[error] + 1) % vocab
        return drafted

    return hook


@pytest.mark.parametrize("block,schedule", [
    (4, [0, 1, 2, 3, 4, 5, 5, 0]),
    (8, list(range(10)) + [9, 0]),
    (32, [33, 0, 1, 7, 16, 31, 32, 33, 33]),
])
def test_oracle_drafts_exercise_every_acceptance_length(engines, images, block, schedule):
    engine = engines[0]
    inputs = engine.build_inputs(images[1], "text")
    need = sum(e + 1 for e in schedule)
    truth = _truth(engine, inputs, need + block + 2)
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    got = _selfspec(engine, inputs, block, need, stop_ids=[], draft_hook=_oracle(truth, schedule, vocab))
    assert [r.k for r in got.rounds] == schedule  # k == the injected position in every round
    assert got.tokens == truth[:need]
    assert max(len(r.new_tokens) for r in got.rounds) == (block + 2 if block + 1 in schedule else max(schedule) + 1)
    full = [r for r in got.rounds if r.k == block + 1]
    assert all(r.bonus is not None and len(r.new_tokens) == block + 2 for r in full)
    stats = got.stats.to_dict()
    assert stats["acceptance_histogram"][0] == schedule.count(0)
    assert stats["per_position_acceptance"][0] == pytest.approx(sum(1 for e in schedule if e > 0) / len(schedule))
    # two forwards a round, but the last round's a0 alone fills the budget when it ends at k = 0: no verify then
    forwards = 2 * len(schedule) - (1 if schedule[-1] == 0 else 0)
    assert stats["forwards"] == forwards and stats["tpf"] == pytest.approx(need / forwards)


def test_stop_inside_an_accepted_block_truncates_exactly(engines, images):
    """Declare a token of the true continuation a stop id; with all drafts right it lands inside a full block."""
    engine = engines[0]
    inputs = engine.build_inputs(images[2], "text")
    block = 8
    truth = _truth(engine, inputs, 60)
    position = next(i for i in range(13, 40) if truth[i] not in truth[:i])  # first occurrence, mid-block
    stop = truth[position]
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    got = _selfspec(engine, inputs, block, 60, stop_ids=[stop], draft_hook=_oracle(truth, [block + 1], vocab))
    assert got.tokens == truth[:position + 1] and got.stopped == "stop"
    assert len(got.rounds[-1].new_tokens) < block + 2  # the last block was cut at the stop id
    assert got.stats.tokens == position  # the stop token is not counted
    # the drafts after the stop token were accepted by the verifier but never output: not counted as accepted
    last = got.rounds[-1]
    assert last.k > len(last.new_tokens) and got.stats.accepted[-1] == len(last.new_tokens)
    ref = _reference(engine, inputs, 60, eos_token_id=stop)
    assert got.tokens == ref


@pytest.mark.parametrize("max_new_tokens", [1, 2, 11, 23])
def test_max_new_tokens_truncates_exactly(engines, images, max_new_tokens):
    engine = engines[1]
    inputs = engine.build_inputs(images[0], "text")
    truth = _truth(engine, inputs, 40)
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    got = _selfspec(engine, inputs, 4, max_new_tokens, stop_ids=[], draft_hook=_oracle(truth, [5], vocab))
    assert got.tokens == truth[:max_new_tokens] and got.stopped == "max_new_tokens"
    plain = _selfspec(engine, inputs, 4, max_new_tokens)
    assert plain.tokens == _reference(engine, inputs, max_new_tokens)
