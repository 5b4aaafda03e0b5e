"""The GLM-OCR region engines through the public registry, on the tiny kit: events, stats, cancel, refusal."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.engines import EngineUnavailable, open_engine  # noqa: E402
from app.core.base.cancel import CancelToken
from app.core.record.events import (  # noqa: E402
    RegionFinished, RegionStarted, RoundVerified, TokensCommitted, event_from_json,
)
from app.core.tiny.glm_checkpoint import sample_images  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def gravity(tiny_glmocr_dir):
    torch.set_num_threads(1)
    return open_engine("gravity", model_path=tiny_glmocr_dir, device="cpu", max_new_tokens=48)


@pytest.fixture(scope="module")
def image():
    return sample_images(1, seed=3)[0]


def _oracle_hook(engine, image, length, error_at):
    """Drafts from the model's own continuation, wrong at `error_at` (≥ B+1: never), so rounds commit many tokens."""
    from app.core.decoding.autoregressive import ar_decode, prefill

    truth = ar_decode(engine.model, prefill(engine.model, engine.build_inputs(image, "text")), stop_ids=[],
                      max_new_tokens=length).tokens

    def hook(_round, output, candidates):
        drafted = list(truth[len(output):len(output) + len(candidates)])
        if error_at < len(drafted):
            drafted[error_at] = (drafted[error_at] + 1) % engine.model.config.text_config.vocab_size
        return drafted

    return hook


def test_selfspec_events_tell_the_whole_story(gravity, image):
    events = []
    result = gravity.decode_region(image, "text", region_id="p1-r01", emit=events.append, page=0,
                                   draft_hook=_oracle_hook(gravity, image, 80, error_at=3))
    assert isinstance(events[0], RegionStarted) and events[0].region_id == "p1-r01" and events[0].engine == "gravity"
    assert isinstance(events[-1], RegionFinished) and events[-1].text == result.text and not result.cancelled
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert [r.round_index for r in rounds] == list(range(len(rounds)))
    assert [t for r in rounds for t in r.new_tokens] == result.tokens == events[-1].tokens
    assert "".join(r.text for r in rounds) == gravity.tokenizer.decode(result.tokens, skip_special_tokens=True)
    prompt = events[0].prompt_tokens
    for r in rounds[:-1]:
        assert r.k == 3 and len(r.new_tokens) == 4 and len(r.candidates) == len(r.verified) == gravity.block_size + 1
        assert r.cache_len == prompt + r.output_len - 1  # everything committed is cached except x0
        assert len(r.candidate_texts) == len(r.candidates) and len(r.verified_texts) == len(r.verified)
    assert all(r.draft_ms > 0 and r.verify_ms > 0 for r in rounds)
    assert all(a.cache_len < b.cache_len and a.output_len < b.output_len for a, b in zip(rounds, rounds[1:]))
    assert rounds[-1].output_len == len(result.tokens) == 48
    stats = result.stats
    assert stats["rounds"] == len(rounds) and stats["forwards"] == 2 * len(rounds)
    assert stats["tpf"] == pytest.approx(stats["tokens"] / stats["forwards"]) and stats["tpf"] > 1.9
    assert stats["draft_ms"] == pytest.approx(sum(r.draft_ms for r in rounds))
    assert stats["decode_tokens_per_s"] > 0 and stats["tokens_per_s"] > 0 and stats["stopped"] == "max_new_tokens"
    for event in events:  # trace files need no tokenizer and no model
        assert event_from_json(event.to_json()) == event


def test_selfspec_cancel_stops_within_one_round(gravity, image):
    cancel = CancelToken()
    events = []

    def emit(event):
        events.append(event)
        if isinstance(event, RoundVerified) and event.round_index == 1:
            cancel.cancel()

    result = gravity.decode_region(image, "text", region_id="r", emit=emit, cancel=cancel,
                                   draft_hook=_oracle_hook(gravity, image, 80, error_at=2))
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert len(rounds) == 2 and result.cancelled and events[-1].cancelled
    assert result.tokens == [t for r in rounds for t in r.new_tokens] and len(result.tokens) == 6
    assert result.stats["stopped"] == "cancelled"


def test_ar_engine_events_and_cancel(tiny_glmocr_dir, image):
    engine = open_engine("gravity-ar", model_path=tiny_glmocr_dir, device="cpu", max_new_tokens=20)
    assert engine.name == "gravity-ar" and engine.kind == "region"
    events = []
    result = engine.decode_region(image, "formula", region_id="r2", emit=events.append)
    steps = [e for e in events if isinstance(e, TokensCommitted)]
    assert [s.step for s in steps] == list(range(len(result.tokens)))
    assert [t for s in steps for t in s.tokens] == result.tokens
    assert all(a.cache_len < b.cache_len for a, b in zip(steps, steps[1:]))
    assert "".join(s.text for s in steps) == engine.tokenizer.decode(result.tokens, skip_special_tokens=True)
    assert result.stats["mode"] == "ar" and result.stats["forwards"] == len(result.tokens) - 1

    cancel = CancelToken()

    def emit(event):
        if isinstance(event, TokensCommitted) and event.step == 4:
            cancel.cancel()

    partial = engine.decode_region(image, "formula", region_id="r2", emit=emit, cancel=cancel)
    assert partial.cancelled and partial.tokens == result.tokens[:5]


def test_engines_agree_and_selfspec_needs_a_mask(tiny_glmocr_dir, gravity, image):
    ar = open_engine("glm", model_path=tiny_glmocr_dir, device="cpu", max_new_tokens=48)
    assert ar.name == "glm"
    a = ar.decode_region(image, "table", region_id="t")
    b = gravity.decode_region(image, "table", region_id="t")
    assert a.tokens == b.tokens and a.text == b.text
    with pytest.raises(EngineUnavailable, match="mask"):
        open_engine("gravity", manifest="glm-ocr", model_path=tiny_glmocr_dir)  # GLM-OCR has no mask token
    with pytest.raises(ValueError):
        gravity.decode_region(image, "picture", region_id="x")


def test_missing_weights_are_reported(tmp_path):
    from app.core.checkpoints.loader import ModelError

    with pytest.raises(EngineUnavailable, match="block_diffusion.json") as info:
        open_engine("gravity", model_path=tmp_path)
    assert isinstance(info.value, ModelError)  # callers that catch the loader's errors still catch it


def test_block_size_option_and_text_cleanup(tiny_glmocr_dir):
    from app.core.engines.glm_engine import clean_text, open_selfspec

    engine = open_selfspec(model_path=tiny_glmocr_dir, device="cpu", block_size=8, unknown_option=True)
    assert engine.block_size == 8 and engine.name == "gravity"
    assert clean_text("<think>plan</think>\nHello ") == "Hello"
    assert clean_text("A<think>never closed") == "A"


def test_run_stats_merge():
    from app.core.decoding.stats import DecodeStats, merge

    a, b = DecodeStats("selfspec", block_size=4), DecodeStats("selfspec", block_size=4)
    for k in (0, 5, 2):
        a.add_round(k, 1.0, 2.0)
    b.add_round(5, 1.0, 1.0)
    a.finished(list(range(10)), stop_ids=[9])
    b.finished(list(range(6)), stop_ids=[])
    run = merge([a.to_dict(), b.to_dict()])
    assert run["rounds"] == 4 and run["forwards"] == 8 and run["tokens"] == 9 + 6 and run["regions"] == 2
    assert run["tpf"] == pytest.approx(15 / 8)
    assert run["acceptance_histogram"] == [1, 0, 1, 0, 0, 2]
    assert run["per_position_acceptance"] == [0.75, 0.75, 0.5, 0.5, 0.5]
    assert run["mean_accepted"] == pytest.approx(3.0) and run["mean_accepted_drafts"] == pytest.approx(9 / 4)
