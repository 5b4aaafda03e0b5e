"""Several regions decoded in one forward per step (a padded batch over a static cache with a length per row) give
exactly the tokens each region gives alone, on tiny random GlmOcr models in fp32, with its events and confidence."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.tiny.glmocr import sample_images  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def engine(tiny_glmocr_dir):
    from app.core.engines.glmocr import open_ar

    return open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", max_new_tokens=30)


def _crops(count, seed):
    from app.core.engines.glmocr import RegionCrop

    images = sample_images(count, seed=seed)  # different sizes: different prompt lengths and M-RoPE offsets
    tasks = ["text", "table", "formula"]
    return [RegionCrop(im, tasks[i % 3], f"r{i}", page=i // 4) for i, im in enumerate(images)]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_batch_equals_one_at_a_time(tiny_glmocr_dir, engine, attn):
    from app.core.engines.glmocr import open_ar

    eng = engine if attn == "sdpa" else open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32",
                                                max_new_tokens=30, attn_implementation="eager")
    crops = _crops(6, seed=21)
    alone = [eng.decode_region(c.image, c.task, region_id=c.region_id, page=c.page) for c in crops]
    assert len({len(eng.build_inputs(c.image, c.task)["input_ids"][0]) for c in crops}) > 1  # ragged rows
    batched = eng.decode_batch(crops)
    assert [r.region_id for r in batched] == [c.region_id for c in crops]
    for a, b in zip(alone, batched):
        assert b.tokens == a.tokens and b.text == a.text
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-4)
        assert b.stats["batch"] == 6 and b.stats["tokens"] == a.stats["tokens"]


def test_batch_rows_stop_on_their_own(engine):
    """A declared stop id ends one row early while the others go on; budgets differ per call."""
    crops = _crops(4, seed=8)
    alone = [engine.decode_region(c.image, c.task, region_id=c.region_id) for c in crops]
    stop = alone[1].tokens[5]
    saved = engine.stop_ids
    engine.stop_ids = saved + [stop]
    try:
        short = [engine.decode_region(c.image, c.task, region_id=c.region_id, max_new_tokens=17) for c in crops]
        events = []
        batched = engine.decode_batch(crops, emit=events.append, max_new_tokens=17)
    finally:
        engine.stop_ids = saved
    assert [b.tokens for b in batched] == [s.tokens for s in short]
    assert len(batched[1].tokens) <= 6 and batched[1].stats["stopped"] == "stop"
    for crop, result in zip(crops, batched):
        mine = [e for e in events if getattr(e, "region_id", None) == crop.region_id]
        assert [e.type for e in mine][0] == "region_started" and mine[-1].type == "region_finished"
        steps = [e for e in mine if e.type == "tokens_committed"]
        assert [e.tokens[0] for e in steps] == result.tokens and [e.step for e in steps] == list(range(len(steps)))
        assert "".join(e.text for e in steps).strip() == result.text or result.text in "".join(e.text for e in steps)


def test_selfspec_engine_batches_one_at_a_time(tiny_glmocr_dir, engine):
    from app.core.engines.glmocr import open_selfspec

    spec = open_selfspec(loaded=engine.loaded, block_size=4, max_new_tokens=20)
    assert spec.batch_size == 1 and engine.batch_size > 1
    crops = _crops(2, seed=4)
    got = spec.decode_batch(crops)
    assert [r.tokens for r in got] == [engine.decode_region(c.image, c.task, region_id="x", max_new_tokens=20).tokens
                                       for c in crops]
