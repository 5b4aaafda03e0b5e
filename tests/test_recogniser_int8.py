"""The recogniser's 8-bit copy (app.core.rapid.int8, issue #38): made once from the wheel's model and kept by its
digest, read like the float model on a real scan's lines, and the float model wherever the copy cannot be made or
loaded, or a person asks for float32."""
from __future__ import annotations

from pathlib import Path

import pytest

PAGES = [Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / name
         for name in ("s06-eurotext.png", "s12-newspaper.jpg")]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRIPTORIUM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SCRIPTORIUM_RECOGNISER", raising=False)
    return tmp_path / "cache" / "models"


def _lines(pages=PAGES):
    """The detector's line crops of real scans (Eurotext: English, German, French; a newspaper column)."""
    from PIL import Image

    from app.core.engines.builtin import page_lines

    class Holder:
        _det = None

    out = []
    for page in pages:
        image = Image.open(page).convert("RGB")
        out += [c for _, c in filter(None, page_lines.crops(image, page_lines.detect(Holder(), image)))]
    return out


def test_the_copy_is_made_once_and_named_by_the_models_digest(cache):
    from app.core.rapid.int8 import int8_model
    from app.core.rapid.recogniser import model_path

    made = int8_model(model_path())
    assert made is not None and made.parent == cache and made.is_file()
    assert made.stat().st_size < model_path().stat().st_size  # its MatMul weights are int8 now
    stamp = made.stat().st_mtime_ns
    assert int8_model(model_path()) == made and made.stat().st_mtime_ns == stamp  # kept, not made again
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp.onnx")]  # no temporary left behind


def test_the_8_bit_recogniser_reads_a_real_scan_as_the_float_one(cache):
    from app.core.rapid.recogniser import Recogniser, model_path

    crops = _lines()
    assert len(crops) >= 60
    fast, plain = Recogniser(threads=1, stretch=True), Recogniser(threads=1, stretch=True, path=model_path())
    assert fast.path.parent == cache and plain.path == model_path()
    a, b = fast.read(crops), plain.read(crops)
    same = sum(x.text == y.text for x, y in zip(a, b))
    assert same >= 0.95 * len(crops), [(x.text, y.text) for x, y in zip(a, b) if x.text != y.text]
    # the confidences the decoder and the arbiter read stay where they were, character by character
    gaps = [abs(p - q) for x, y in zip(a, b) if x.text == y.text for p, q in zip(x.conf, y.conf)]
    assert sum(gaps) / len(gaps) < 0.01 and max(gaps) < 0.2


def test_float32_on_request_and_where_the_copy_cannot_be_made(cache, monkeypatch):
    import sys

    from app.core.rapid.recogniser import Recogniser, model_path

    monkeypatch.setenv("SCRIPTORIUM_RECOGNISER", "fp32")
    assert Recogniser(threads=1).path == model_path()
    assert not cache.exists()
    monkeypatch.delenv("SCRIPTORIUM_RECOGNISER")
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)  # the quantiser not installed
    assert Recogniser(threads=1).path == model_path()


def test_a_damaged_copy_is_set_aside_and_made_again(cache):
    from app.core.rapid.int8 import int8_path
    from app.core.rapid.recogniser import Recogniser, model_path

    damaged = int8_path(model_path())
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"not an onnx model")
    rec = Recogniser(threads=1)
    assert rec.path == damaged and damaged.stat().st_size > 1000  # made again over the damaged one
    assert rec.read(_lines(PAGES[:1])[:3])
