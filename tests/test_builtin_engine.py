"""The `builtin` engine: a clear refusal without a model; with the SHIPPED model (models/builtin, fp32 on CPU, nothing
mocked) it reads rendered lines exactly, self-speculative decoding gives the AR output token for token while
accepting drafts, and one region's lines show as one region's events. The earlier vision-tower checkpoints (the
overfit run) still open through the legacy path."""
from __future__ import annotations

from pathlib import Path

import pytest

try:
    from app.core.engines import EngineUnavailable, open_engine
except ImportError:  # before the engines package
    from app.core.engines import EngineUnavailable, open_engine

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
needs_shipped = pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(), reason="no shipped built-in model")


@pytest.fixture
def no_bundled_models(monkeypatch, tmp_path):
    """The manifests without the bundled checkpoint folders."""
    import shutil

    import app.core.loader as loader
    import app.core.paths as paths

    folder = tmp_path / "models"
    folder.mkdir()
    for manifest in paths.models_dir().glob("*.json"):
        shutil.copy(manifest, folder)
    monkeypatch.setattr(paths, "models_dir", lambda: folder)
    if hasattr(loader, "models_dir"):
        monkeypatch.setattr(loader, "models_dir", lambda: folder)


def test_without_a_model_it_says_how_to_train_one(no_bundled_models):
    with pytest.raises(EngineUnavailable) as info:
        open_engine("builtin")
    msg = str(info.value)
    assert "No built-in model is installed" in msg
    assert "python -m app train" in msg and "The built-in model" in msg


def test_a_missing_explicit_folder_is_reported(tmp_path):
    with pytest.raises(EngineUnavailable) as info:
        open_engine("builtin", model_path=tmp_path / "nothing")
    assert "does not exist" in str(info.value)


def region(lines: list[str], size: int = 28):
    """A white region with `lines` printed in DejaVu Sans (about 10-pt text at the engine's 200 DPI)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(DEJAVU, size)
    step = int(size * 1.7)
    img = Image.new("RGB", (int(max(font.getlength(t) for t in lines)) + 40, step * len(lines) + 20), "white")
    draw = ImageDraw.Draw(img)
    for i, t in enumerate(lines):
        draw.text((20, 10 + i * step), t, font=font, fill="black")
    return img


@pytest.fixture(scope="module")
def shipped(one_torch_thread):
    return {mode: open_engine("builtin", device="cpu", mode=mode) for mode in ("selfspec", "ar")}


@needs_shipped
def test_the_shipped_model_is_the_default_builtin_and_small():
    from app.core.training.reader import is_reader_checkpoint

    assert is_reader_checkpoint(SHIPPED)
    assert (SHIPPED / "model.safetensors").stat().st_size <= 30 * 2 ** 20
    card = (SHIPPED / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in card and "PP-OCRv6" in card


@needs_shipped
def test_reads_a_rendered_line_exactly(shipped):
    text = "The invoice of 12 March 2024 totals $1,234.50 (VAT incl.)"
    result = shipped["selfspec"].decode_region(region([text]), "text", region_id="r")
    assert result.text == text
    assert result.stats["lines"] == 1 and result.stats["tpf"] > 2.0


@needs_shipped
def test_selfspec_equals_ar_token_for_token_and_shows_one_region(shipped):
    from app.core.events import RegionFinished, RegionStarted, RoundVerified, TokensCommitted

    lines = ["Scriptorium reads printed pages line by line.", "Order No. 48213, due 2025-01-31: EUR 99.90",
             "quick brown foxes, lazy dogs; 7 + 8 = 15"]
    img = region(lines)
    events = []
    spec = shipped["selfspec"].decode_region(img, "text", region_id="p1-r01", emit=events.append)
    ar_events = []
    ar = shipped["ar"].decode_region(img, "text", region_id="p1-r01", emit=ar_events.append)
    assert spec.tokens == ar.tokens and spec.text == ar.text  # fp32: token for token
    assert len(spec.logprobs) == len(spec.tokens) and spec.logprobs == pytest.approx(ar.logprobs, abs=1e-4)
    assert all(lp <= 0 for lp in ar.logprobs) and min(ar.logprobs) < max(ar.logprobs)  # a confidence per token
    assert spec.text == " ".join(lines)
    assert spec.stats["lines"] == 3 and spec.stats["mode"] == "selfspec" and spec.stats["tpf"] > 2.0
    assert max(spec.stats["accepted"]) >= 4  # real drafts are accepted
    assert [type(e) for e in events].count(RegionStarted) == 1 and isinstance(events[-1], RegionFinished)
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert rounds and all(e.region_id == "p1-r01" for e in rounds)
    assert [e.round_index for e in rounds] == list(range(len(rounds)))  # numbered on across lines
    assert "".join(e.text for e in rounds) == spec.text  # the streamed pieces add up to the region's text
    steps = [e for e in ar_events if isinstance(e, TokensCommitted)]
    assert [e.step for e in steps] == list(range(len(steps))) and "".join(e.text for e in steps) == ar.text


@needs_shipped
def test_a_table_region_becomes_an_html_table(shipped):
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(DEJAVU, 28)
    img = Image.new("RGB", (900, 150), "white")
    draw = ImageDraw.Draw(img)
    for r, (a, b) in enumerate((("Item", "Price"), ("Paper", "4.20"))):
        draw.text((20, 20 + 60 * r), a, font=font, fill="black")
        draw.text((600, 20 + 60 * r), b, font=font, fill="black")
    result = shipped["selfspec"].decode_region(img, "table", region_id="t")
    assert result.text == "<table><tr><td>Item</td><td>Price</td></tr><tr><td>Paper</td><td>4.20</td></tr></table>"


def test_legacy_vision_checkpoint_reads_a_region_line_by_line():
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
    assert [e.round_index for e in rounds] == list(range(len(rounds)))  # one region: numbering runs across lines
    assert "".join(e.text for e in rounds) == result.text

    ar = open_engine("builtin", model_path=folder, device="cpu", mode="ar")
    plain = ar.decode_region(region_image(), "text", region_id="r")
    assert plain.text == result.text and len(result.logprobs) == len(result.tokens)
    assert result.logprobs == pytest.approx(plain.logprobs, abs=1e-4)
