"""One edit distance and CER for the project (app.core.text.textmetrics, on rapidfuzz), and one translation of the
decoders' records into events (app.core.decoding.round_events)."""
from __future__ import annotations

from app.core.decoding.round_events import round_verified, tokens_committed
from app.core.decoding.selfspec import Round
from app.core.text.textmetrics import cer, edit_distance, error_rate, errors


def test_edit_distance_and_cer():
    assert edit_distance("kitten", "sitting") == 3 and errors("kitten", "sitting") == (3, 6)
    assert cer("kitten", "sitting") == 0.5 and cer("", "x") is None and cer("abc", "abc") == 0.0
    assert error_rate("", "") == 0.0 and error_rate("", "ab") == 2.0
    assert edit_distance("Grüße", "Grüsse") == 2  # characters, not bytes (ß → ss)


def test_the_text_layers_cer_normalises_then_measures_the_same_way():
    from app.core.text.textlayer import cer as layer_cer

    assert layer_cer("<b>Field</b>  Notes", "Field Notes") == 0.0
    assert layer_cer("Field Nates", "Field Notes") == cer("Field Notes", "Field Nates") == 1 / 11


def test_a_round_and_an_ar_step_become_their_events_with_the_engines_numbering():
    rnd = Round(index=2, k=1, candidates=[5, 6, 7], verified=[5, 9, 7], bonus=None, new_tokens=[5, 9], draft_ms=1.5,
                verify_ms=2.5, cache_len=40, output_len=6, final=False, forwards=2)
    names = {5: "a", 6: "b", 7: "c", 9: "z"}
    texts = lambda ids: [names[i] for i in ids]  # noqa: E731
    e = round_verified("p1-r01", rnd, "az", texts, block_size=2, first_round=10, tokens_before=100)
    assert (e.region_id, e.round_index, e.k, e.new_tokens, e.text, e.output_len, e.forwards) == \
        ("p1-r01", 12, 1, [5, 9], "az", 106, 2)
    assert e.candidate_texts == ["a", "b", "c"] and e.verified_texts == ["a", "z", "c"] and e.block_size == 2
    t = tokens_committed("p1-r01", 7, 9, "z", 3.0, 41, texts)
    assert (t.step, t.tokens, t.text, t.ms, t.cache_len, t.token_texts) == (7, [9], "z", 3.0, 41, ["z"])
