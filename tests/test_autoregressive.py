"""Hand-rolled greedy AR on a tiny random GlmOcr model: equals generate(), stops exactly, explicit positions."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.decoding.autoregressive import ar_decode, prefill, stop_index, text_positions  # noqa: E402
from app.core.tiny.glm_checkpoint import sample_images  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def engine(tiny_glmocr_dir):
    from app.core.engines.glm_engine import open_ar

    torch.set_num_threads(1)
    return open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32")


def test_positions_follow_the_prompt_offset(engine):
    inputs = engine.build_inputs(sample_images(1, seed=4)[0], "text")
    pre = prefill(engine.model, inputs)
    positions, _ = engine.model.model.get_rope_index(inputs["input_ids"], mm_token_type_ids=inputs["mm_token_type_ids"],
                                                     image_grid_thw=inputs["image_grid_thw"])
    assert pre.prompt_len == inputs["input_ids"].shape[1] and pre.cache.get_seq_length() == pre.prompt_len
    assert pre.delta == int(positions.max()) + 1 - pre.prompt_len and pre.delta < 0  # image tokens share positions
    nxt = text_positions(pre.prompt_len, 2, pre.delta, "cpu")
    assert nxt.shape == (3, 1, 2) and nxt[:, 0, 0].tolist() == [int(positions.max()) + 1] * 3


def test_declared_stop_and_budget_truncate_exactly(engine):
    inputs = engine.build_inputs(sample_images(2, seed=5)[1], "text")
    truth = ar_decode(engine.model, prefill(engine.model, inputs), stop_ids=[], max_new_tokens=30).tokens
    position = next(i for i in range(5, 30) if truth[i] not in truth[:i])
    got = ar_decode(engine.model, prefill(engine.model, inputs), stop_ids=[truth[position]], max_new_tokens=30)
    assert got.tokens == truth[:position + 1] and got.stopped == "stop" and got.stats.tokens == position
    with torch.no_grad():
        ref = engine.model.generate(**inputs, max_new_tokens=30, do_sample=False, eos_token_id=truth[position])
    assert got.tokens == ref[0, inputs["input_ids"].shape[1]:].tolist()
    for budget in (0, 1, 7):
        assert ar_decode(engine.model, prefill(engine.model, inputs), stop_ids=[], max_new_tokens=budget).tokens \
            == truth[:budget]
    assert stop_index([4, 5, 6, 5], [5]) == 1 and stop_index([1], [5]) is None
