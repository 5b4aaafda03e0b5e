"""What OCR servers said about their speculative decoding during a remote run, for the rounds view's statistics.

A remote run has no rounds of its own to show (the server drafts and verifies); what can be shown is what the
server reports: per request (SGLang `meta_info`, vLLM `metrics`, carried in each region's stats as `spec`) or over
the run (Prometheus `/metrics`, in RunFinished's `engine_stats`), always labelled with where it came from, and a
plain sentence when a server reports nothing.

What must never live here: widgets, HTTP.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.engines.remote_stats import merge


@dataclass
class ServerStats:
    regions: int = 0  # regions a server read in this session's runs
    per_request: list[dict[str, Any]] = field(default_factory=list)
    servers: list[dict[str, Any]] = field(default_factory=list)  # the last run's per-server summary

    def add_region(self, stats: dict[str, Any]) -> bool:
        if not isinstance(stats, dict) or not stats.get("server"):
            return False
        self.regions += 1
        if isinstance(stats.get("spec"), dict):
            self.per_request.append(stats["spec"])
        return True

    def add_run(self, stats: dict[str, Any]) -> bool:
        servers = ((stats or {}).get("engine_stats") or {}).get("servers")
        if not isinstance(servers, list):
            return False
        self.servers = [s for s in servers if isinstance(s, dict)]
        return True

    def text(self) -> str:
        lines = [f"This run's {self.regions} region(s) were read on OCR servers: the drafting and verifying happen "
                 "there, so there are no rounds to draw; this is what the servers reported."]
        merged = merge(self.per_request)
        if merged:
            lines.append(_describe(merged, f"per request ({merged['requests']} requests)"))
        for s in self.servers:
            spec = s.get("spec")
            if spec and spec.get("source") != (merged or {}).get("source"):
                lines.append(f"{s.get('url')}: " + _describe(spec, "over the run"))
            elif not spec and not merged:
                lines.append(f"{s.get('url')} ({s.get('flavour')}, {s.get('requests')} requests): reports no "
                             "speculative-decoding statistics.")
        if not merged and not self.servers:
            lines.append("The servers reported no speculative-decoding statistics.")
        return "\n".join(lines)


def _describe(spec: dict[str, Any], scope: str) -> str:
    parts = [f"source: {spec.get('source')}, {scope}"]
    if spec.get("accept_length") is not None:
        parts.append(f"accept length {spec['accept_length']:.2f}")
    if spec.get("tokens_per_forward") is not None:
        parts.append(f"tokens per forward {spec['tokens_per_forward']:.2f}")
    if spec.get("accept_rate") is not None:
        parts.append(f"acceptance rate {spec['accept_rate']:.0%}")
    if spec.get("accepted") is not None and spec.get("drafted"):
        parts.append(f"{spec['accepted']:,} of {spec['drafted']:,} drafted tokens accepted")
    return " · ".join(parts)
