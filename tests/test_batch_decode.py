"""Several regions decoded in one forward per step (a padded batch over a static cache with a length per row) give
exactly the tokens each region gives alone, on tiny random GlmOcr models in fp32, with its events and confidence."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.tiny.glm_checkpoint import sample_images  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.usefixtures("one_torch_thread")]


@pytest.fixture(scope="module")
def engine(tiny_glmocr_dir):
    from app.core.engines.glm_engine import open_ar

    return open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", max_new_tokens=30)


def _crops(count, seed):
    from app.core.engines.glm_engine import RegionCrop

    images = sample_images(count, seed=seed)  # different sizes: different prompt lengths and M-RoPE offsets
    tasks = ["text", "table", "formula"]
    return [RegionCrop(im, tasks[i % 3], f"r{i}", page=i // 4) for i, im in enumerate(images)]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_batch_equals_one_at_a_time(tiny_glmocr_dir, engine, attn):
    from app.core.engines.glm_engine import open_ar

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


@pytest.mark.parametrize("block", [1, 4, 32])
def test_batched_selfspec_equals_one_at_a_time(tiny_glmocr_dir, engine, block):
    """Lockstep rounds, each row accepting its own k: the tokens, log-probabilities and rounds of decoding each
    region alone."""
    from app.core.engines.glm_engine import open_selfspec

    spec = open_selfspec(loaded=engine.loaded, block_size=block, max_new_tokens=24)
    crops = _crops(4, seed=4)
    alone = [spec.decode_region(c.image, c.task, region_id=c.region_id) for c in crops]
    events = []
    batched = spec.decode_batch(crops, emit=events.append)
    for crop, a, b in zip(crops, alone, batched):
        assert b.tokens == a.tokens == engine.decode_region(crop.image, crop.task, region_id="x", max_new_tokens=24).tokens
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-4)
        assert b.stats["rounds"] == a.stats["rounds"] and b.stats["accepted"] == a.stats["accepted"]
        rounds = [e for e in events if e.type == "round_verified" and e.region_id == crop.region_id]
        assert [e.round_index for e in rounds] == list(range(a.stats["rounds"]))
        assert [t for e in rounds for t in e.new_tokens] == b.tokens


def test_batched_selfspec_rolls_back_every_row_on_its_own(engine):
    """Oracle drafts with a wrong token at a different place in every row and round: the rows accept different k in
    the same round (0..B+1), so each rolls back its own count; budgets and a stop id end rows at different rounds."""
    from app.core.decoding.autoregressive import ar_decode, prefill
    from app.core.decoding.batch import batch_selfspec_decode

    block = 8
    crops = _crops(3, seed=9)
    inputs = [engine.build_inputs(c.image, c.task) for c in crops]
    truth = [ar_decode(engine.model, prefill(engine.model, i), stop_ids=[], max_new_tokens=90).tokens for i in inputs]
    vocab = engine.model.get_output_embeddings().weight.shape[0]
    schedules = [[9, 0, 3], [5, 9, 9, 1], [2, 7]]  # 9 = no error: the whole block (B+1) is accepted

    def hook(row, index, output, candidates):
        drafted = list(truth[row][len(output):len(output) + len(candidates)])
        error = schedules[row][index % len(schedules[row])]
        if error < len(drafted):
            drafted[error] = (drafted[error] + 1) % vocab
        return drafted

    stop = next(t for t in truth[2][40:] if t not in truth[2][:40])
    budgets = [70, 23, 70]
    got = batch_selfspec_decode(engine.model, [prefill(engine.model, i) for i in inputs], mask_id=engine.mask_id,
                                block_size=block, stop_ids=[stop], budgets=budgets, draft_hook=hook)
    at = truth[2].index(stop)
    assert got[2].tokens == truth[2][:at + 1] and got[2].stopped == "stop"
    assert got[1].tokens == truth[1][:23] and got[1].stopped == "max_new_tokens"
    cut = truth[0].index(stop) + 1 if stop in truth[0][:70] else 70
    assert got[0].tokens == truth[0][:cut]
    for row, d in enumerate(got):
        ks = [r.k for r in d.rounds]
        sched = schedules[row]
        assert ks[:-1] == [sched[i % len(sched)] for i in range(len(ks) - 1)]  # the last round may be cut short


def test_cancel_stops_the_batch_between_two_forwards(engine):
    from app.core.base.cancel import CancelToken

    crops = _crops(3, seed=2)
    token = CancelToken()
    events = []

    def emit(ev):
        events.append(ev)
        if ev.type == "tokens_committed" and ev.step == 4:
            token.cancel()

    results = engine.decode_batch(crops, emit=emit, cancel=token)
    assert all(r.cancelled and 1 <= len(r.tokens) <= 5 for r in results)  # partial, never reported as done
    assert all(len(r.logprobs) == len(r.tokens) for r in results)
    assert [e.region_id for e in events if e.type == "region_finished"] == [c.region_id for c in crops]
    assert all(e.cancelled for e in events if e.type == "region_finished")
