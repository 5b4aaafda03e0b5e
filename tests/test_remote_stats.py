"""The speculative-decoding statistics parsers on the payload shapes SGLang and vLLM document
(docs/servers.md): per-request SGLang meta_info (old and new counter names, GravityOCR's two forwards a round),
vLLM per-request metrics, Prometheus counters as a delta; nothing reported → None, never a made-up figure."""
from __future__ import annotations

import pytest

from app.core.engines import remote_stats as rs

SGLANG_OLD = {"prompt_tokens": 40, "completion_tokens": 120, "spec_verify_ct": 30, "spec_accept_length": 4.0,
              "spec_accept_rate": 0.6, "spec_accept_token_num": 90, "spec_draft_token_num": 150,
              "spec_accept_histogram": [2, 5, 10, 13]}
SGLANG_NEW = {"completion_tokens": 96, "spec_verify_ct": 12, "spec_accepted_drafts": 84, "spec_proposed_drafts": 96}
VLLM_REQUEST = {"speculative_decoding": {
    "num_spec_steps": 20, "num_draft_tokens": 80, "num_accepted_draft_tokens": 50, "mean_acceptance_length": 3.5,
    "draft_acceptance_rate": 0.625, "acceptance_histogram": [3, 4, 5, 8]}}
VLLM_PROM = """# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="glm"}} {drafts}
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="glm"}} {draft}
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="glm"}} {accepted}
# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per position.
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="glm",position="0"}} 7
# HELP vllm:num_requests_running Running requests.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="glm"}} 3
"""
SGLANG_PROM = """# HELP sglang:spec_accept_length The average acceptance length of speculative decoding.
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{model_name="gravity"} 5.25
# HELP sglang:spec_accept_rate Acceptance rate.
# TYPE sglang:spec_accept_rate gauge
sglang:spec_accept_rate{model_name="gravity"} 0.71
"""


def test_sglang_meta_info_old_and_new_names_and_gravityocr_two_forwards_a_round():
    old = rs.from_sglang_meta(SGLANG_OLD, gravity=True)
    assert old == {"source": "sglang meta_info", "verify_ct": 30, "accept_length": 4.0, "tokens_per_forward": 2.0,
                   "accepted": 90, "drafted": 150, "accept_rate": 0.6, "histogram": [2, 5, 10, 13]}
    new = rs.from_sglang_meta(SGLANG_NEW)
    assert new["accept_length"] == 8.0 and new["accepted"] == 84 and new["drafted"] == 96  # completion / verify
    assert "tokens_per_forward" not in new  # only GravityOCR's worker counts two forwards per round
    assert rs.from_sglang_meta({"completion_tokens": 5}) is None and rs.from_sglang_meta(None) is None


def test_vllm_per_request_metrics():
    got = rs.from_vllm_metrics(VLLM_REQUEST)
    assert got == {"source": "vllm per-request", "steps": 20, "drafted": 80, "accepted": 50, "accept_length": 3.5,
                   "accept_rate": 0.625, "histogram": [3, 4, 5, 8]}
    no_mean = {"speculative_decoding": {"num_spec_steps": 10, "num_draft_tokens": 40, "num_accepted_draft_tokens": 15}}
    assert rs.from_vllm_metrics(no_mean)["accept_length"] == 2.5  # 1 + accepted / steps
    assert rs.from_vllm_metrics({}) is None and rs.from_vllm_metrics(None) is None


def test_prometheus_counters_as_a_delta_and_sglang_gauges():
    before = rs.parse_prometheus(VLLM_PROM.format(drafts=100, draft=400, accepted=250))
    after = rs.parse_prometheus(VLLM_PROM.format(drafts=140, draft=560, accepted=370))
    assert before["vllm:spec_decode_num_drafts"] == 100 and "vllm:num_requests_running" not in before
    got = rs.from_prometheus(before, after)
    assert got == {"source": "vllm /metrics", "steps": 40, "drafted": 160, "accepted": 120, "accept_length": 4.0,
                   "accept_rate": 0.75}
    assert rs.from_prometheus(after, after) is None  # nothing drafted during the run: no figure
    sg = rs.from_prometheus({}, rs.parse_prometheus(SGLANG_PROM))
    assert sg == {"source": "sglang /metrics", "accept_length": 5.25, "accept_rate": 0.71}
    assert rs.from_prometheus({}, rs.parse_prometheus("# nothing\n")) is None


def test_merge_weights_accept_length_by_rounds():
    a = rs.from_sglang_meta(SGLANG_OLD, gravity=True)  # 30 rounds × 4.0
    b = rs.from_sglang_meta({**SGLANG_NEW, "spec_accept_length": 6.0}, gravity=True)  # 12 rounds × 6.0
    merged = rs.merge([a, b])
    assert merged["rounds"] == 42 and merged["accept_length"] == pytest.approx((120 + 72) / 42, abs=1e-4)
    assert merged["tokens_per_forward"] == pytest.approx(merged["accept_length"] / 2, abs=1e-4)
    assert merged["requests"] == 2 and merged["accepted"] == 174 and rs.merge([]) is None


def test_the_rounds_view_statistics_name_the_source_or_say_the_server_reports_none():
    from app.gui.views.server_stats import ServerStats

    quiet = ServerStats()
    assert quiet.add_region({"server": "http://a:1", "tokens": 5}) and not quiet.add_region({"tokens": 5})
    quiet.add_run({"engine_stats": {"servers": [{"url": "http://a:1", "flavour": "openai", "requests": 1,
                                                 "spec": None}]}})
    assert "http://a:1 (openai, 1 requests): reports no speculative-decoding statistics" in quiet.text()
    talking = ServerStats()
    talking.add_region({"server": "http://g:1", "spec": rs.from_sglang_meta(SGLANG_OLD, gravity=True)})
    text = talking.text()
    assert "source: sglang meta_info, per request (1 requests)" in text and "tokens per forward 2.00" in text
    assert "90 of 150 drafted tokens accepted" in text and "reports no" not in text
