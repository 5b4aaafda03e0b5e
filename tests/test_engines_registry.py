"""Every engine in the registry is what the Protocol says (the pipeline asks nothing an engine lacks), and a region
engine sends exactly one RegionStarted and one RegionFinished per region it reads."""
from __future__ import annotations

import inspect

import pytest
from PIL import Image, ImageDraw

from app.core.record import events as ev
from app.core.engines import ENGINES, open_engine
from app.core.engines.base import DocumentEngine, RegionEngine

PROTOCOL_MEMBERS = ("name", "kind", "device", "input_dpi", "concurrency", "close")


def _opened(name: str, tiny_glmocr_dir, tiny_unlimited_dir):
    if name in ("gravity", "gravity-ar", "glm"):
        return open_engine(name, model_path=str(tiny_glmocr_dir), device="cpu")
    if name == "unlimited":
        return open_engine(name, model_path=str(tiny_unlimited_dir), device="cpu")
    if name == "llamacpp":
        pytest.skip("it starts a real llama-server: tests/test_llamacpp.py checks it against the Protocol")
    if name == "remote":  # its server is checked in tests/test_remote.py, against a real one
        return open_engine(name, servers=["http://127.0.0.1:9/v1"], remote_model="m", check=False)
    return open_engine(name)


@pytest.mark.parametrize("name", [n for n in ENGINES if n != "builtin"])
def test_every_engine_is_what_the_protocol_says(name, tiny_glmocr_dir, tiny_unlimited_dir, one_torch_thread):
    engine = _opened(name, tiny_glmocr_dir, tiny_unlimited_dir)
    try:
        assert engine.name == name and engine.kind == ENGINES[name].kind_for({})
        assert all(hasattr(engine, m) for m in PROTOCOL_MEMBERS)
        assert isinstance(engine.device, str) and engine.device and engine.input_dpi > 0
        protocol = RegionEngine if engine.kind == "region" else DocumentEngine
        method = "decode_region" if engine.kind == "region" else "decode_document"
        wanted = set(inspect.signature(getattr(protocol, method)).parameters) - {"self"}
        assert wanted <= set(inspect.signature(getattr(engine, method)).parameters)
    finally:
        engine.close()


@pytest.mark.parametrize("name", ["classic", "gravity", "glm"])
def test_a_region_engine_frames_each_region_with_one_start_and_one_finish(name, tiny_glmocr_dir, tiny_unlimited_dir,
                                                                           one_torch_thread):
    image = Image.new("RGB", (240, 48), "white")
    ImageDraw.Draw(image).text((8, 14), "Hello 123", fill="black")
    engine = _opened(name, tiny_glmocr_dir, tiny_unlimited_dir)
    events: list[ev.Event] = []
    result = engine.decode_region(image, "text", region_id="p2-r05", page=1, emit=events.append)
    engine.close()
    starts = [e for e in events if isinstance(e, ev.RegionStarted)]
    ends = [e for e in events if isinstance(e, ev.RegionFinished)]
    assert [(e.region_id, e.page) for e in starts] == [("p2-r05", 1)] and [e.region_id for e in ends] == ["p2-r05"]
    assert events[0] is starts[0] and events[-1] is ends[0] and ends[0].text == result.text
