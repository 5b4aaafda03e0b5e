"""The `builtin` engine: clear refusal without a model; with a (overfit-trained) model it splits a region into lines,
reads each with self-speculative decoding and joins them, emitting one region's events."""
from __future__ import annotations

import pytest

from app.core.engine import EngineUnavailable, open_engine


def test_without_a_model_it_says_how_to_train_one():
    with pytest.raises(EngineUnavailable) as info:
        open_engine("builtin")
    msg = str(info.value)
    assert "No built-in model is installed" in msg
    assert "python -m app train" in msg and "Training the built-in model" in msg


def test_a_missing_explicit_folder_is_reported(tmp_path):
    with pytest.raises(EngineUnavailable) as info:
        open_engine("builtin", model_path=tmp_path / "nothing")
    assert "does not exist" in str(info.value)


def test_reads_a_region_line_by_line():
    pytest.importorskip("torch")
    from app.core.events import RegionFinished, RegionStarted, RoundVerified
    from app.core.training.overfit import OVERFIT_TEXTS, overfit_checkpoint, region_image

    folder, _ = overfit_checkpoint()
    engine = open_engine("builtin", model_path=folder, device="cpu")
    events = []
    result = engine.decode_region(region_image(), "text", region_id="p1-r01", emit=events.append)
    assert result.text == "\n".join(OVERFIT_TEXTS)
    assert result.stats["lines"] == len(OVERFIT_TEXTS) and len(result.stats["line_boxes"]) == len(OVERFIT_TEXTS)
    assert result.stats["tpf"] > 1.0 and result.stats["mode"] == "selfspec"
    assert [type(e) for e in events].count(RegionStarted) == 1
    assert isinstance(events[-1], RegionFinished) and events[-1].text == result.text
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert rounds and all(e.region_id == "p1-r01" for e in rounds)
    assert [e.round_index for e in rounds] == sorted({e.round_index for e in rounds})  # numbered on across lines
    assert "".join(e.text for e in rounds) == result.text  # the streamed pieces add up to the joined text

    ar = open_engine("builtin", model_path=folder, device="cpu", mode="ar")
    assert ar.decode_region(region_image(), "text", region_id="r").text == result.text
