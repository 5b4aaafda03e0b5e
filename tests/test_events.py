import json

from app.core.record import events as ev


def _samples():
    return [
        ev.RunStarted(engine="gravity", document="a.pdf"),
        ev.PhaseChanged(phase="decoding", current=3, total=9),
        ev.LayoutDone(page=0, regions=[{"id": "p1-r01", "box": [1, 2, 3, 4]}]),
        ev.RoundVerified(region_id="r", round_index=0, k=2, candidates=[1, 2, 3], verified=[1, 2, 9], new_tokens=[1, 2, 9],
                         text="ab", draft_ms=1.0, verify_ms=2.0, cache_len=10, candidate_texts=["a", "b", "c"]),
        ev.WindowStepped(region_id="doc", step=5, token=7, text="x", prefix_len=100, decoded=6, attended=(0, 6),
                         evicted=None, cache_positions=106, cache_bytes=1000, full_positions=106, full_bytes=1000),
        ev.RegionFinished(region_id="r", text="ab", stats={"tpf": 1.5}),
        ev.ErrorRaised(message="boom"),
    ]


def test_every_event_round_trips_through_json():
    for e in _samples():
        line = e.to_json()
        assert json.loads(line)["type"] == e.type
        assert ev.event_from_json(line) == e


def test_type_names_are_unique_and_past_tense_facts():
    types = ev.all_event_types()
    assert len(types) >= 15
    assert "round_verified" in types and "window_stepped" in types


def test_unknown_type_is_a_clear_error():
    try:
        ev.event_from_dict({"type": "nope"})
    except ValueError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected ValueError")
