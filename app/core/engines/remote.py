"""The remote engine: regions read by OpenAI-compatible OCR servers (SGLang, vLLM, `transformers serve`).

One request per region: `POST /v1/chat/completions` with the crop as a base64 PNG data URL and the model family's
prompt (docs/servers.md), temperature 0, the task's token budget, streamed so the text reaches the views as
it is written. `finish_reason == "length"` marks the region truncated (its stats say so; never done). Requests go to
the least busy of the servers; a 429, a 5xx or a broken connection is retried with exponential backoff (tenacity),
on another server when there is one; other failures and exhausted retries raise, and the scheduler flags the region.

The API key is read from an environment variable (its NAME is the setting) and goes into the Authorization header
only: never into stats, events, traces or logs. Servers are checked when the engine opens (`/health`,
`/v1/models`); an unreachable one is an EngineUnavailable that names it.

The unlimited profile reads whole pages, one request each, and parses the `<|det|>` answer into blocks with boxes
(app.core.engines.remote_pages): under it the engine is a document engine (kind "document").

Concurrency: `concurrency` requests per server (the region scheduler keeps that many in flight). The async method
`decode_region_async` is what the scheduler runs; `decode_region` runs it on the host loop (app.core.base.aio).

What must never live here: Qt, the region scheduler (app.core.engines.scheduler), page assembly.
"""
from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.engines import remote_servers, remote_stats
from app.core.engines.base import Emit, EngineUnavailable, RegionResult, no_emit
from app.core.engines.remote_profiles import (  # noqa: F401 - importable from here too
    DEFAULT_CONCURRENCY, DEFAULT_KEY_VARIABLE, DEFAULT_PROFILE, PROFILES, Profile, remote_kind,
)
from app.core.base.cancel import CancelToken
from app.core.engines.glm_engine import clean_text
from app.core.record.events import ErrorRaised, RegionFinished, RegionStarted, TokensCommitted
from app.core.document.regions import MAX_NEW_TOKENS

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

PAGE_TOKENS = 8192  # a whole page's answer (the unlimited profile), unless max_new_tokens says otherwise
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class Transient(RuntimeError):
    """A failure worth another try: 429, a 5xx, a refused or broken connection, a stream cut short."""


class RemoteError(RuntimeError):
    """A server refused the request for good (4xx other than 429, a malformed answer)."""


@dataclass
class Server:
    url: str  # the root, without /v1
    flavour: str = "openai"  # sglang | vllm | llamacpp | ollama | openai (app.core.engines.remote_servers)
    in_flight: int = 0
    requests: int = 0
    failures: int = 0
    metrics_before: dict[str, float] | None = None
    info: dict[str, Any] = field(default_factory=dict)  # what it said about itself (llama.cpp's /props)

    @property
    def chat_url(self) -> str:
        return f"{self.url}/v1/chat/completions"


def server_root(url: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise EngineUnavailable(f"server address {url!r} must start with http:// or https://")
    return url.removesuffix("/v1")


def png_data_url(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class RemoteEngine:
    input_dpi = 200.0  # crops are rendered at this DPI, as for the local GLM-OCR engines

    def __init__(self, servers: list[str], *, model: str = "", name: str = "remote", profile: str = "glmocr",
                 concurrency: int = DEFAULT_CONCURRENCY, api_key_env: str = DEFAULT_KEY_VARIABLE,
                 max_new_tokens: int | None = None, stream: bool = True, retries: int = 3, backoff_s: float = 0.5,
                 timeout_s: float = 600.0, check: bool = True, keep_headers: bool = False) -> None:
        if not servers:
            raise EngineUnavailable("the remote engine needs at least one --server URL")
        if profile not in PROFILES:
            raise EngineUnavailable(f"unknown remote profile {profile!r}; choose one of: {', '.join(PROFILES)}")
        self.name = name
        self.profile = PROFILES[profile]
        self.kind = remote_kind({"profile": profile})  # whole pages: blocks with their boxes
        self.keep_headers = keep_headers
        self.servers = [Server(server_root(u)) for u in servers]
        self.model = model
        self.concurrency = max(1, int(concurrency)) * len(self.servers)
        self.device = "remote: " + ", ".join(s.url for s in self.servers)
        self.max_new_tokens = max_new_tokens
        self.stream = stream
        self.retries, self.backoff_s, self.timeout_s = max(0, int(retries)), float(backoff_s), float(timeout_s)
        self.api_key_env = api_key_env
        self._key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.in_flight = self.max_in_flight = 0
        self._client = None
        self._spec: list[dict[str, Any]] = []
        if check:
            self.check_servers()

    def __repr__(self) -> str:  # never the key
        return f"RemoteEngine({[s.url for s in self.servers]}, model={self.model!r}, profile={self.profile.name!r})"

    # --- servers ---------------------------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def check_servers(self) -> None:
        """`/health` and `/v1/models` of every server; the model name from the first server when none is given."""
        import httpx2

        for s in self.servers:
            try:
                with httpx2.Client(timeout=10.0, headers=self._headers()) as client:
                    health = client.get(f"{s.url}/health")
                    models = client.get(f"{s.url}/v1/models")
            except httpx2.HTTPError as exc:
                raise EngineUnavailable(f"the OCR server {s.url} cannot be reached ({type(exc).__name__}: {exc}); "
                                        "is it running, and is the address right?") from None
            if models.status_code in (401, 403):
                raise EngineUnavailable(f"the OCR server {s.url} refused the API key (HTTP {models.status_code}); "
                                        f"set it in the environment variable {self.api_key_env}")
            if health.status_code >= 500 or models.status_code != 200:
                raise EngineUnavailable(f"the OCR server {s.url} is not ready (/health: HTTP {health.status_code}, "
                                        f"/v1/models: HTTP {models.status_code})")
            try:
                listed = models.json().get("data") or []
            except (ValueError, AttributeError):
                raise EngineUnavailable(f"{s.url}/v1/models did not answer with an OpenAI model list; is this an "
                                        "OpenAI-compatible server?") from None
            served = [m for m in listed if isinstance(m, dict)]
            with httpx2.Client(timeout=10.0, headers=self._headers()) as client:
                s.flavour, s.info = remote_servers.detect(client, s.url, served)
            if not self.model and served:
                self.model = str(served[0].get("id", ""))
            names = [str(m.get("id", "")) for m in served]
            if self.model and names and self.model not in names:
                raise EngineUnavailable(f"the OCR server {s.url} does not serve {self.model!r} (it serves: "
                                        f"{', '.join(names)}); name the model with --remote-model")
            if remote_servers.without_vision(served, s.info, self.model):
                raise EngineUnavailable(remote_servers.no_vision_message(s.url, self.model))
            s.info.setdefault("slot_ctx", next((m["meta"].get("n_ctx") for m in served
                                                if isinstance(m.get("meta"), dict)), None))
            s.metrics_before = self._read_metrics(s)
        if not self.model:
            raise EngineUnavailable(f"{self.servers[0].url} lists no model; name one with --remote-model")

    def _read_metrics(self, server: Server) -> dict[str, float] | None:
        import httpx2

        try:
            resp = httpx2.get(f"{server.url}/metrics", timeout=5.0, headers=self._headers())
        except httpx2.HTTPError:
            return None
        return remote_stats.parse_prometheus(resp.text) if resp.status_code == 200 else None

    def _pick(self, avoid: Server | None = None) -> Server:
        pool = [s for s in self.servers if s is not avoid] or self.servers
        return min(pool, key=lambda s: (s.in_flight, s.failures, s.requests))

    def server_stats(self) -> list[dict[str, Any]]:
        """Per server: requests, failures and the speculative statistics it reports (`spec`: None when none)."""
        per_request = remote_stats.merge(self._spec)
        out = []
        for s in self.servers:
            spec = per_request
            if spec is None and s.metrics_before is not None:
                after = self._read_metrics(s)
                spec = remote_stats.from_prometheus(s.metrics_before, after) if after is not None else None
            out.append({"url": s.url, "flavour": s.flavour, "requests": s.requests, "failures": s.failures,
                        "spec": spec})
        return out

    # --- requests --------------------------------------------------------------------------------------------
    def budget(self, task: str) -> int:
        if self.kind == "document":
            return int(self.max_new_tokens or PAGE_TOKENS)
        return int(self.max_new_tokens or MAX_NEW_TOKENS.get(task, 512))

    def request_body(self, image: Image.Image, task: str, server: Server) -> dict[str, Any]:
        prompt = self.profile.prompts.get(task)
        if prompt is None:
            raise ValueError(f"task {task!r} is not read by the {self.profile.title} profile")
        parts = [{"type": "image_url", "image_url": {"url": png_data_url(image)}}, {"type": "text", "text": prompt}]
        if self.profile.text_first:
            parts.reverse()
        body: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": parts}],
                                "temperature": 0, "max_tokens": self.budget(task), "stream": self.stream}
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        if server.flavour in remote_servers.LOGPROB_FLAVOURS:  # → block confidence
            body.update(top_k=1, logprobs=True)
        if server.flavour in ("sglang", "vllm"):
            body.update(self.profile.sglang_extra if server.flavour == "sglang" else self.profile.vllm_extra)
            if server.flavour == "sglang" and not self.stream:
                body["return_meta_info"] = True
        return body

    @asynccontextmanager
    async def session(self):
        """One HTTP connection pool for the requests of a run (on the running loop)."""
        import httpx2

        if self._client is not None:
            yield self
            return
        limits = httpx2.Limits(max_connections=self.concurrency + 4)
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(self.timeout_s, connect=10.0), limits=limits) as client:
            self._client = client
            try:
                yield self
            finally:
                self._client = None

    async def decode_region_async(self, image: Image.Image, task: str, *, region_id: str, page: int = 0,
                                  emit: Emit = no_emit, cancel: CancelToken | None = None) -> RegionResult:
        """Read one region on a server, retrying transient failures; raises when it cannot be read."""
        from tenacity import (
            AsyncRetrying,
            retry_if_exception_type,
            stop_after_attempt,
            wait_exponential_jitter,
        )

        if self._client is None:
            async with self.session():
                return await self.decode_region_async(image, task, region_id=region_id, page=page, emit=emit,
                                                      cancel=cancel)
        t0 = time.perf_counter()
        last: list[Server | None] = [None]
        attempts = 0
        async for attempt in AsyncRetrying(stop=stop_after_attempt(self.retries + 1), reraise=True,
                                           retry=retry_if_exception_type(Transient),
                                           wait=wait_exponential_jitter(multiplier=self.backoff_s, max=30.0)):
            with attempt:
                attempts += 1
                server = self._pick(avoid=last[0])
                last[0] = server
                result = await self._request(server, image, task, region_id, page, emit, t0, attempts, cancel)
        return result

    async def _request(self, server: Server, image, task: str, region_id: str, page: int, emit: Emit, t0: float,
                       attempt: int, cancel: CancelToken | None = None) -> RegionResult:
        import httpx2

        body = self.request_body(image, task, server)
        emit(RegionStarted(region_id, page, task, self.name, 0, body["max_tokens"]))
        reply = _Reply(gravity=self.profile.gravity, server=server)
        server.in_flight += 1
        server.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.stream:
                async with self._client.stream("POST", server.chat_url, json=body, headers=self._headers()) as resp:
                    await _check_status(resp, server)
                    async for line in resp.aiter_lines():
                        if reply.feed_line(line, emit, region_id):
                            break
                        if cancel is not None and cancel.cancelled:  # at once, not at the scheduler's next poll
                            raise asyncio.CancelledError
            else:
                resp = await self._client.post(server.chat_url, json=body, headers=self._headers())
                await _check_status(resp, server)
                reply.feed(resp.json(), emit, region_id)
            if reply.finish is None:
                raise Transient(f"{server.url} closed the answer before it finished")
        except httpx2.TransportError as exc:
            server.failures += 1
            raise Transient(f"{server.url}: {type(exc).__name__}: {exc or 'connection lost'}") from None
        except Transient:
            server.failures += 1
            raise
        except asyncio.CancelledError:  # Cancel: the request is dropped (the server aborts it); report the part read
            emit(RegionFinished(region_id, clean_text(reply.text), self._stats(reply, server, t0, attempt),
                                cancelled=True))
            raise
        finally:
            server.in_flight -= 1
            self.in_flight -= 1
        stats = self._stats(reply, server, t0, attempt)
        if reply.spec:
            self._spec.append(reply.spec)
        text = clean_text(reply.text)
        if stats.get("truncated"):  # incomplete text: a warning, whichever way the region was dispatched
            emit(ErrorRaised(f"region {region_id} was cut at its limit of {stats['tokens']} tokens by {server.url} "
                             "(truncated: its text is incomplete)", where="decoding", region_id=region_id, fatal=False))
        emit(RegionFinished(region_id, text, stats, False, [], list(reply.logprobs)))
        return RegionResult(region_id, text, [], stats, False, logprobs=reply.logprobs)

    def _stats(self, reply: _Reply, server: Server, t0: float, attempt: int) -> dict[str, Any]:
        usage = reply.usage or {}
        stats: dict[str, Any] = {
            "engine": self.name, "server": server.url, "model": self.model, "profile": self.profile.name,
            "stopped": {"stop": "stop", "length": "max_new_tokens"}.get(reply.finish or "", reply.finish or ""),
            "tokens": int(usage.get("completion_tokens") or reply.pieces),
            "prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "request_ms": round((time.perf_counter() - t0) * 1e3, 1), "attempts": attempt, "device": self.device,
        }
        if reply.finish == "length":
            stats["truncated"] = True
        if reply.spec:
            stats["spec"] = reply.spec
        if reply.timings:
            stats["timings"] = reply.timings
        return stats

    def decode_region(self, image: Image.Image, task: str, *, region_id: str, page: int = 0, emit: Emit = no_emit,
                      cancel: CancelToken | None = None) -> RegionResult:
        from app.core.base.aio import run_async

        return run_async(lambda: self.decode_region_async(image, task, region_id=region_id, page=page, emit=emit,
                                                          cancel=cancel))

    def decode_document(self, pages, *, emit: Emit = no_emit, cancel: CancelToken | None = None,
                        on_blocks=None) -> Any:
        """The unlimited profile: every page one request, its `<|det|>` answer parsed into blocks with boxes and
        handed over as they complete (app.core.engines.remote_pages)."""
        from app.core.engines import remote_pages
        from app.core.engines.base import no_blocks

        return remote_pages.decode_document(self, pages, emit=emit, cancel=cancel or CancelToken(),
                                            on_blocks=on_blocks or no_blocks, keep_headers=self.keep_headers)

    def close(self) -> None:
        self._client = None


async def _check_status(resp, server: Server) -> None:
    if resp.status_code == 200:
        return
    detail = (await resp.aread()).decode("utf-8", "replace")[:300]
    message = f"{server.url} answered HTTP {resp.status_code}: {detail}"
    final = remote_servers.final_error(detail, server.url, server.info.get("total_slots"), server.info.get("slot_ctx"))
    if final:
        raise RemoteError(final)
    if resp.status_code in RETRY_STATUS:
        raise Transient(message)
    raise RemoteError(message)


class _Reply:
    """What one answer said so far: text pieces, finish reason, usage, log-probabilities, speculative stats."""

    def __init__(self, *, gravity: bool = False, server: Server | None = None) -> None:
        self.gravity, self.server = gravity, server
        self.timings: dict[str, Any] | None = None
        self.parts: list[str] = []
        self.pieces = 0
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None
        self.logprobs: list[float] = []
        self.spec: dict[str, Any] | None = None
        self.t_last = time.perf_counter()

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def feed_line(self, line: str, emit: Emit, region_id: str) -> bool:
        """One server-sent-events line; True at the end of the stream."""
        if not line.startswith("data:"):
            return False
        data = line[5:].strip()
        if data == "[DONE]":
            return True
        try:
            chunk = json.loads(data)
        except ValueError:
            raise RemoteError(f"the server sent a line that is not JSON: {data[:120]!r}") from None
        self.feed(chunk, emit, region_id)
        return False

    def feed(self, chunk: dict[str, Any], emit: Emit, region_id: str) -> None:
        if chunk.get("error"):
            error = str(chunk["error"])[:300]
            s = self.server or Server("the server")
            final = remote_servers.final_error(error, s.url, s.info.get("total_slots"), s.info.get("slot_ctx"))
            if final:
                raise RemoteError(final)
            raise Transient(f"the server reported an error: {error[:200]}")
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or choice.get("message") or {}).get("content") or ""
            if piece:
                now = time.perf_counter()
                emit(TokensCommitted(region_id, self.pieces, [], piece, round((now - self.t_last) * 1e3, 2)))
                self.parts.append(piece)
                self.pieces += 1
                self.t_last = now
            content = (choice.get("logprobs") or {}).get("content") or []
            self.logprobs.extend(float(t["logprob"]) for t in content if t.get("logprob") is not None)
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])
            if choice.get("meta_info"):
                self.spec = remote_stats.from_sglang_meta(choice["meta_info"], gravity=self.gravity) or self.spec
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        if chunk.get("timings"):
            self.timings = remote_servers.timings(chunk["timings"]) or self.timings
        if chunk.get("metrics"):
            self.spec = remote_stats.from_vllm_metrics(chunk["metrics"]) or self.spec


def open_engine(*, servers=None, server=None, model: str = "", remote_model: str = "", profile: str = "glmocr",
                concurrency: int = DEFAULT_CONCURRENCY, api_key_env: str = DEFAULT_KEY_VARIABLE,
                max_new_tokens: int | None = None, engine: str = "remote", **options: Any) -> RemoteEngine:
    """The remote engine. Options: servers (URLs), remote_model (the served model's name; default: the first the
    server lists), profile (glmocr | gravity | unlimited), concurrency (per server), api_key_env, max_new_tokens,
    stream, retries, backoff_s, timeout_s."""
    urls = list(servers or ([server] if server else []))
    extra = {k: options[k] for k in ("stream", "retries", "backoff_s", "timeout_s", "check", "keep_headers")
             if k in options}
    return RemoteEngine(urls, model=remote_model or model, name=engine or "remote", profile=profile,
                        concurrency=concurrency, api_key_env=api_key_env, max_new_tokens=max_new_tokens, **extra)


def check_connection(servers: list[str], model: str = "", api_key_env: str = DEFAULT_KEY_VARIABLE) -> tuple[bool, str]:
    """What Preferences → Servers → Test connection says: (ok, a sentence for a person)."""
    try:
        engine = RemoteEngine(servers, model=model, api_key_env=api_key_env)
    except EngineUnavailable as exc:
        return False, str(exc)
    kinds = ", ".join(f"{s.url} ({s.flavour})" for s in engine.servers)
    key = f"; API key from ${api_key_env}" if engine._key else ""
    return True, f"{len(engine.servers)} server(s) answer: {kinds}; model {engine.model}{key}"
