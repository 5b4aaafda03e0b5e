"""The remote engine's unlimited profile: a page's streamed `<|det|>` answer parsed into blocks with boxes, handed
over as they complete, with the local Unlimited engine's parser.

The served tiny checkpoint is a random GlmOcr (app.core.tiny.serving; the tiny Unlimited checkpoint is a DeepSeek-OCR
architecture `transformers serve` does not load), so it never writes `<|det|>` blocks: here a realistic answer is
streamed as transformers serve's server-sent-event lines (its chunk shape) through the engine's own SSE reader
(`_Reply.feed_line`) into the page reader. tests/test_remote.py runs the profile end to end against the real server.
"""
from __future__ import annotations

import json

from app.core.engines.base import RegionResult
from app.core.engines.remote import PROFILES, _Reply
from app.core.engines.remote_pages import PageAnswer, PageReader
from app.core.pipeline.quality import region_status
from app.core.engines.scheduler import Job, Outcome
from app.core.document.regions import Region

ANSWER = ("<|det|>title [52, 40, 610, 92]<|/det|>Field Notes\n"
          "<|det|>text [52, 120, 940, 260]<|/det|>The survey team walked the northern transect twice.\n"
          "<|det|>table [52, 300, 940, 620]<|/det|><table><tr><td>Site</td><td>Count</td></tr></table>\n"
          "<|det|>image [640, 650, 930, 880]<|/det|>\n"
          "<|det|>page_footer [450, 950, 550, 980]<|/det|>1\n"
          "<|det|>equation [60, 890, 600, 940]<|/det|>\\[ E = mc^2 \\]")


def _sse(answer: str, finish: str, size: int = 5) -> list[str]:
    """The answer as transformers serve streams it: a role chunk, content pieces, a finish chunk, usage, [DONE]."""
    def line(delta, reason=None, **extra):
        chunk = {"id": "req_0", "object": "chat.completion.chunk", "created": 1764500000, "model": "tiny",
                 "system_fingerprint": "", "choices": [{"index": 0, "delta": delta, "finish_reason": reason,
                                                        "logprobs": None}], **extra}
        return "data: " + json.dumps(chunk)

    lines = [line({"role": "assistant", "content": ""})]
    lines += [line({"content": answer[k:k + size]}) for k in range(0, len(answer), size)]
    lines += [line({}, finish), "", "data: " + json.dumps({"id": "req_0", "choices": [], "usage": {
        "prompt_tokens": 900, "completion_tokens": len(answer) // 3, "total_tokens": 0}}), "data: [DONE]"]
    return lines


class _Engine:
    name = "remote"


def _read(answer: str, finish: str = "stop", keep_headers: bool = False, error: Exception | None = None):
    events, handed = [], []
    reader = PageReader(_Engine(), events.append, lambda pos, regs: handed.append((pos, regs)), keep_headers)
    stream = "doc-p3"
    page = reader.pages[stream] = PageAnswer(1, 2, (1000, 800), 200.0)
    reply = _Reply()
    for ln in _sse(answer, finish):  # the engine's own SSE reader emits the pieces as it reads them
        if reply.feed_line(ln, reader.take, stream):
            break
    assert reply.finish == finish and "".join(reply.parts) == answer
    stats = {"truncated": True} if finish == "length" else {}
    job = Job((0, 1, 0), Region(stream, 2, (0, 0, 1000, 800), "page", "text", 0), None)
    result = None if error else RegionResult(stream, answer, [], stats)
    assert reader.take(Outcome(job, result, error))
    return page, handed, events


def test_a_streamed_det_answer_becomes_blocks_with_boxes_handed_over_as_they_complete():
    assert PROFILES["unlimited"].whole_page and PROFILES["unlimited"].prompts == {"text": "document parsing."}
    page, handed, events = _read(ANSWER)
    regions = page.regions
    assert [r.extra["native_label"] for r in regions] == ["title", "text", "table", "image", "page_footer",
                                                          "equation"]
    assert [r.label for r in regions] == ["doc_title", "text", "table", "image", "footer", "formula"]
    assert [r.task for r in regions] == ["text", "text", "table", "picture", "skipped", "formula"]
    assert [r.id for r in regions] == [f"p3-r{k:02d}" for k in range(1, 7)]  # the document page's ids
    assert all(r.page == 1 for r in regions)  # the result indexes the page sequence (position 1)
    assert regions[0].text == "Field Notes" and regions[2].text.startswith("<table>")
    x1, y1, x2, y2 = regions[1].box  # 0..999 → page pixels (v / 999 · size)
    assert (round(x1, 1), round(y1, 1), round(x2, 1), round(y2, 1)) == (52.1, 96.1, 940.9, 208.2)
    assert regions[1].box_pt == tuple(v * 72 / 200 for v in regions[1].box)
    assert not any(r.flags for r in regions)
    # handed over as they completed: the first block alone once the second began, one more at a time, all at the end
    counts = [len(regs) for _, regs in handed]
    assert counts[0] == 1 and counts == sorted(counts) and counts[-1] == 6 and len(handed) >= 6
    assert all(pos == 1 and all(r.page == 2 for r in regs) for pos, regs in handed)  # document page on hand-over
    finished = [e.region_id for e in events if e.type == "region_finished"]
    assert finished == [r.id for r in regions]  # each block announced once, in order
    pieces = [e for e in events if e.type == "tokens_committed"]
    assert pieces and all(e.region_id == "doc-p3" for e in pieces)  # the request's own stream, forwarded
    # headers and footers kept on request
    assert _read(ANSWER, keep_headers=True)[0].regions[4].task == "text"


def test_a_page_cut_at_its_budget_keeps_its_blocks_and_flags_the_last_truncated():
    cut = ANSWER[:ANSWER.index("northern") + 3]  # the budget ended inside the second block's text
    page, handed, _ = _read(cut, finish="length")
    assert [r.text for r in page.regions] == ["Field Notes", "The survey team walked the nor"]
    assert [region_status(_done(r)) for r in page.regions] == ["done", "truncated"]  # never done
    assert "truncated" in handed[-1][1][-1].flags
    # a header cut mid-box: its text is kept, flagged malformed, never dropped
    broken, _, _ = _read(ANSWER[:ANSWER.index("[52, 300") + 5], finish="length")
    assert [r.extra["native_label"] for r in broken.regions] == ["title", "text", "table"]
    assert "malformed" in broken.regions[-1].flags and "truncated" in broken.regions[-1].flags
    # the connection lost mid-answer (retries spent): the blocks before stand, the one it was cut in failed
    lost, _, _ = _read(cut, finish="length", error=ConnectionError("closed"))
    assert [region_status(_done(r)) for r in lost.regions] == ["done", "failed"]


def _done(r: Region) -> Region:
    r.extra["stats"] = {}  # what the pipeline records on a block it received (app.core.pipeline.document_engine)
    return r
