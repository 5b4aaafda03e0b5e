"""How far a block can be trusted, in the JSON: the model's confidence from the tokens' log-probabilities (none when
the engine reports none), the honest outcome (a read stopped by its token budget is "truncated", not ok), why it
needs review, and whether a person reviewed it — the same through the pipeline's recording and the session's."""
from __future__ import annotations

import math

from app.core.record import events as ev
from app.core.pipeline.output import DocumentOutput, PageOutput
from app.core.pipeline.quality import region_outcome, review_reasons
from app.core.document.regions import Region, record_result, token_confidence


def _region(rid: str = "p1-r01", order: int = 0) -> Region:
    return Region(id=rid, page=0, box=(0, 0, 100, 20), label="text", task="text", order=order, box_pt=(0, 0, 50, 10))


def _json_blocks(regions: list[Region], reviewed: set[str] = frozenset()) -> tuple[dict, dict]:
    page = PageOutput(0, 595, 842, 144, 1190, 1684, regions=regions)
    data = DocumentOutput("doc.pdf", "test", "fixed", 1, pages=[page], reviewed=set(reviewed)).to_dict()
    return {b["id"]: b for b in data["pages"][0]["blocks"]}, data["review"]


def test_block_confidence_is_the_mean_and_minimum_token_probability_or_none():
    assert token_confidence([]) is None
    conf = token_confidence([math.log(0.9), math.log(0.5), 0.0])
    assert conf == {"mean": round((0.9 + 0.5 + 1.0) / 3, 4), "min": 0.5, "tokens": 3}
    sure, unsure, silent = _region("p1-r01", 0), _region("p1-r02", 1), _region("p1-r03", 2)
    record_result(sure, "All clear", {"stopped": "stop"}, cancelled=False, engine="t", logprobs=[-0.01] * 5)
    record_result(unsure, "Blurry", {"stopped": "stop"}, cancelled=False, engine="t",
                  logprobs=[-0.01, math.log(0.1), -0.02])
    record_result(silent, "No numbers", {}, cancelled=False, engine="classic")
    blocks, review = _json_blocks([sure, unsure, silent])
    assert blocks["p1-r01"]["confidence"]["min"] > 0.98 and blocks["p1-r01"]["needs_review"] == []
    assert blocks["p1-r02"]["confidence"]["min"] == 0.1 and blocks["p1-r02"]["needs_review"][0].startswith("low conf")
    assert blocks["p1-r03"]["confidence"] is None and blocks["p1-r03"]["needs_review"] == []  # none, not invented
    assert review["needs_review"] == 1 and review["outcomes"]["ok"] == 3


def test_a_read_stopped_by_its_token_budget_is_truncated_and_an_error_says_why():
    cut, failed = _region("p1-r01", 0), _region("p1-r02", 1)
    record_result(cut, "a a a a", {"stopped": "max_new_tokens"}, cancelled=False, engine="t")
    record_result(failed, "", {"error": "out of memory"}, cancelled=False, engine="t")
    assert region_outcome(cut) == "truncated" and review_reasons(cut) == ["truncated"]
    blocks, review = _json_blocks([cut, failed])
    assert blocks["p1-r01"]["outcome"] == "truncated" and blocks["p1-r02"]["outcome"] == "error"
    assert blocks["p1-r02"]["needs_review"] == ["error: out of memory"]
    assert review["outcomes"]["truncated"] == 1 and review["outcomes"]["error"] == 1 and review["needs_review"] == 2


def test_the_session_carries_logprobs_and_the_reviewed_state_into_the_export_until_the_text_changes():
    from app.core.review.session import Session

    session = Session()
    work = session.add_document("doc.pdf")
    session.current = 0
    session.apply(ev.LayoutDone(page=0, regions=[_region().to_dict()]), work)
    session.apply(ev.RegionFinished("p1-r01", "Hello", {"stopped": "stop"}, logprobs=[math.log(0.6)] * 3), work)
    assert session.set_reviewed("p1-r01")
    out = work.to_output().to_dict()
    block = out["pages"][0]["blocks"][0]
    assert block["reviewed"] is True and block["confidence"]["mean"] == 0.6 and out["review"]["reviewed"] == 1
    assert out["review"]["needs_review"] == 0  # reviewed by a person: no longer waiting for one
    session.apply(ev.RegionFinished("p1-r01", "Hello again", {"stopped": "stop"}), work)  # read again, new text
    block = work.to_output().to_dict()["pages"][0]["blocks"][0]
    assert block["reviewed"] is False and block["confidence"] is None
    # the event travels through a trace unchanged
    e = ev.RegionFinished("p1-r01", "x", logprobs=[-0.5])
    assert ev.event_from_json(e.to_json()).logprobs == [-0.5]


def test_the_page_badge_and_tooltip_say_the_outcome_and_the_confidence(qtbot):
    from app.gui.region_items import RegionItem

    cut = _region()
    record_result(cut, "a a a", {"stopped": "max_new_tokens"}, cancelled=False, engine="t",
                  logprobs=[math.log(0.5)] * 4)
    item = RegionItem(cut)
    item.set_state(status="done")
    assert item.badge_text() == "1 … 50%"
    assert "truncated · confidence 50% mean, 50% min" in item.describe() and "needs review: truncated" in \
        item.describe()
    failed = _region("p1-r02", 1)
    record_result(failed, "", {"error": "out of memory"}, cancelled=False, engine="classic")
    item = RegionItem(failed)
    item.set_state(status="failed", reviewed=True)
    assert item.badge_text() == "2✓ !" and "confidence none reported" in item.describe()
    assert "reviewed; was: error: out of memory" in item.describe()


def test_a_line_where_the_decoder_and_the_recogniser_disagree_needs_review():
    """The built-in engine marks a line whose decoder text differs from the recogniser's reading (`disagrees`); where
    the decoder's version was written, the block is one the review flow stops at, the reason naming both readings."""
    agreed, overruled = _region("p1-r01", 0), _region("p1-r02", 1)
    line = {"text": "the cat", "recogniser": "the cat", "box": [0, 0, 10, 5]}
    record_result(agreed, "the cat", {"stopped": "stop", "line_stats": [line]}, cancelled=False, engine="builtin",
                  logprobs=[-0.01] * 7)
    changed = {"text": "the dog", "recogniser": "tbe dog", "disagrees": True, "decoder_taken": 1}
    record_result(overruled, "the cat the dog", {"stopped": "stop", "line_stats": [line, changed], "disagreements": 1},
                  cancelled=False, engine="builtin", logprobs=[-0.01] * 15)
    assert review_reasons(agreed) == []
    assert review_reasons(overruled) == ["decoder overruled the recogniser on 1 line: recogniser “tbe dog”, "
                                         "written “the dog”"]
    stood = _region("p1-r03", 2)  # the decoder disagreed, but the recogniser was sure and its reading stood
    kept = {"text": "the cat", "recogniser": "the cat", "disagrees": True, "decoder_text": "the cot", "recogniser_kept": 1}
    record_result(stood, "the cat", {"stopped": "stop", "line_stats": [kept], "disagreements": 1}, cancelled=False,
                  engine="builtin", logprobs=[-0.01] * 7)
    assert review_reasons(stood) == []
    blocks, review = _json_blocks([agreed, overruled])
    assert blocks["p1-r02"]["needs_review"] and review["needs_review"] == 1
