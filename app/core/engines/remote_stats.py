"""Speculative-decoding statistics as OCR servers report them (docs/servers.md, Speculative-decoding statistics), read
into one plain shape.

Three sources, best first: SGLang's per-request `meta_info` (non-streaming requests with `return_meta_info`),
vLLM's per-request `metrics.speculative_decoding`, and the Prometheus `/metrics` counters of either server, taken
as a delta over a run. Every result says where it came from (`source`); a server that reports nothing gives None,
never a made-up zero.

GravityOCR's SGLang self-spec worker counts one verify per round of two forwards, and its accept length already
includes a0 and the bonus token, so its tokens per forward is `spec_accept_length / 2`.

What must never live here: HTTP, threads, Qt.
"""
from __future__ import annotations

from typing import Any

# SGLang renamed its accepted/drafted counters; read whichever a build sends (older name first)
_SGLANG_ACCEPTED = ("spec_accept_token_num", "spec_accepted_drafts")
_SGLANG_DRAFTED = ("spec_draft_token_num", "spec_proposed_drafts")
VLLM_COUNTERS = {
    "vllm:spec_decode_num_drafts": "drafts",
    "vllm:spec_decode_num_draft_tokens": "draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "accepted_tokens",
}
SGLANG_GAUGES = {"sglang:spec_accept_length": "accept_length", "sglang:spec_accept_rate": "accept_rate"}


def _first(data: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((data[n] for n in names if data.get(n) is not None), None)


def from_sglang_meta(meta: dict[str, Any] | None, *, gravity: bool = False) -> dict[str, Any] | None:
    """SGLang's `choices[i].meta_info` → stats, or None when it holds no speculative counters."""
    if not meta or not meta.get("spec_verify_ct"):
        return None
    verify = int(meta["spec_verify_ct"])
    length = meta.get("spec_accept_length")
    if length is None and meta.get("completion_tokens"):
        length = int(meta["completion_tokens"]) / verify
    out: dict[str, Any] = {"source": "sglang meta_info", "verify_ct": verify}
    if length is not None:
        out["accept_length"] = round(float(length), 4)
        if gravity:  # two forwards (draft + verify) per counted round
            out["tokens_per_forward"] = round(float(length) / 2, 4)
    for key, names in (("accepted", _SGLANG_ACCEPTED), ("drafted", _SGLANG_DRAFTED)):
        value = _first(meta, names)
        if value is not None:
            out[key] = int(value)
    if meta.get("spec_accept_rate") is not None:
        out["accept_rate"] = round(float(meta["spec_accept_rate"]), 4)
    if meta.get("spec_accept_histogram") is not None:
        out["histogram"] = [int(v) for v in meta["spec_accept_histogram"]]
    return out


def from_vllm_metrics(metrics: dict[str, Any] | None) -> dict[str, Any] | None:
    """vLLM's per-request `metrics` (its `speculative_decoding` part) → stats, or None without one."""
    spec = (metrics or {}).get("speculative_decoding")
    if not spec or not spec.get("num_spec_steps"):
        return None
    steps = int(spec["num_spec_steps"])
    accepted = int(spec.get("num_accepted_draft_tokens") or 0)
    out: dict[str, Any] = {
        "source": "vllm per-request", "steps": steps, "drafted": int(spec.get("num_draft_tokens") or 0),
        "accepted": accepted,
        "accept_length": round(float(spec.get("mean_acceptance_length") or 1 + accepted / steps), 4),
    }
    if spec.get("draft_acceptance_rate") is not None:
        out["accept_rate"] = round(float(spec["draft_acceptance_rate"]), 4)
    if spec.get("acceptance_histogram") is not None:
        out["histogram"] = [int(v) for v in spec["acceptance_histogram"]]
    return out


def parse_prometheus(text: str) -> dict[str, float]:
    """The speculative counters and gauges of a Prometheus text page (vLLM's `_total` suffix dropped; samples of
    one metric with several labels summed)."""
    from prometheus_client.parser import text_string_to_metric_families

    wanted = set(VLLM_COUNTERS) | set(SGLANG_GAUGES)
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            name = sample.name.removesuffix("_total")
            if name in wanted:
                out[name] = out.get(name, 0.0) + float(sample.value)
    return out


def from_prometheus(before: dict[str, float], after: dict[str, float]) -> dict[str, Any] | None:
    """Stats over a run from two `parse_prometheus` readings (vLLM counters as a delta, SGLang gauges as read at
    the end), or None when the server exposes neither."""
    if all(name in after for name in VLLM_COUNTERS):
        delta = {key: after[name] - before.get(name, 0.0) for name, key in VLLM_COUNTERS.items()}
        if delta["drafts"] <= 0:
            return None
        return {"source": "vllm /metrics", "steps": int(delta["drafts"]), "drafted": int(delta["draft_tokens"]),
                "accepted": int(delta["accepted_tokens"]),
                "accept_length": round(1 + delta["accepted_tokens"] / delta["drafts"], 4),
                "accept_rate": round(delta["accepted_tokens"] / delta["draft_tokens"], 4)
                if delta["draft_tokens"] else 0.0}
    gauges = {key: after[name] for name, key in SGLANG_GAUGES.items() if name in after}
    if gauges.get("accept_length"):
        return {"source": "sglang /metrics", **{k: round(v, 4) for k, v in gauges.items()}}
    return None


def merge(per_request: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One summary of several requests' stats of the same source: totals and the token-weighted accept length."""
    if not per_request:
        return None
    source = per_request[0]["source"]
    rounds = sum(int(s.get("verify_ct") or s.get("steps") or 0) for s in per_request)
    weighted = sum(float(s.get("accept_length") or 0) * int(s.get("verify_ct") or s.get("steps") or 0)
                   for s in per_request)
    out: dict[str, Any] = {"source": source, "requests": len(per_request), "rounds": rounds}
    if rounds:
        out["accept_length"] = round(weighted / rounds, 4)
    if any("tokens_per_forward" in s for s in per_request) and rounds:
        out["tokens_per_forward"] = round(weighted / rounds / 2, 4)
    for key in ("accepted", "drafted"):
        if any(key in s for s in per_request):
            out[key] = sum(int(s.get(key) or 0) for s in per_request)
    return out
