"""What kind of OCR server answers, what it can read, and which of its errors are final: the remote engine's
knowledge of the servers it talks to (docs/servers.md).

- **Kind** (`Server.flavour`): `/v1/models`' `owned_by` names SGLang, vLLM and llama.cpp (`llamacpp`); a server
  whose list says none of them is asked `/props` (llama.cpp) and `/api/version` (Ollama). Anything else is a plain
  OpenAI-compatible server.
- **Vision**: llama.cpp lists `architecture.input_modalities` per model and says `modalities.vision` in `/props`; a
  server started without its vision projector would answer every region with a 500 (three tries each, blamed on
  the layout): it is refused when the engine opens instead.
- **Final errors**: "image input is not supported" (a 500 from llama.cpp) and an in-stream "Context size has been
  exceeded" are not transient: retrying them costs time and changes nothing. They end the region at once with what
  to do about them.

What must never live here: the requests of a run (app.core.engines.remote), Qt.
"""
from __future__ import annotations

from typing import Any

KNOWN_OWNERS = {"sglang": "sglang", "vllm": "vllm", "llamacpp": "llamacpp", "ollama": "ollama", "library": "ollama"}
LOGPROB_FLAVOURS = frozenset({"sglang", "vllm", "llamacpp"})  # servers that return per-token log-probabilities

NO_VISION = "image input is not supported"
CONTEXT_EXCEEDED = "context size has been exceeded"


def detect(client, url: str, served: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """(flavour, what the server said about itself: llama.cpp's /props, Ollama's version) for the server at `url`
    whose `/v1/models` listed `served`."""
    owners = {str(m.get("owned_by", "")).lower() for m in served}
    flavour = next((kind for owner, kind in KNOWN_OWNERS.items() if owner in owners), "")
    info: dict[str, Any] = {}
    if flavour in ("", "llamacpp"):
        props = _get_json(client, f"{url}/props")
        if isinstance(props, dict) and ("modalities" in props or "total_slots" in props):
            flavour, info = "llamacpp", props
    if flavour in ("", "ollama"):
        version = _get_json(client, f"{url}/api/version")
        if isinstance(version, dict) and version.get("version"):
            flavour, info = "ollama", {"version": str(version["version"])}
    return flavour or "openai", info


def _get_json(client, url: str) -> Any:
    import httpx2

    try:
        resp = client.get(url)
    except httpx2.HTTPError:
        return None
    if resp.status_code != 200:
        return None
    try:
        return resp.json()
    except ValueError:
        return None


def without_vision(served: list[dict[str, Any]], info: dict[str, Any], model: str) -> bool:
    """True when the server says the model cannot read images (it says nothing: False)."""
    modalities = info.get("modalities")
    if isinstance(modalities, dict) and modalities.get("vision") is False:
        return True
    for entry in served:
        if model and str(entry.get("id", "")) != model:
            continue
        inputs = (entry.get("architecture") or {}).get("input_modalities") if isinstance(entry.get("architecture"),
                                                                                       dict) else None
        if isinstance(inputs, list) and inputs and "image" not in inputs:
            return True
    return False


def no_vision_message(url: str, model: str) -> str:
    return (f"the OCR server {url} serves {model or 'its model'} without image input (llama.cpp: started without "
            "--mmproj, the model's vision projector); an OCR model cannot read a region without it. Start the "
            "server with --mmproj FILE, or use --engine llamacpp, which starts it with both files")


def final_error(message: str, url: str, slots: int | None = None, slot_ctx: int | None = None) -> str | None:
    """What to tell a person about an error that another try will not fix, or None for any other error."""
    low = message.lower()
    if NO_VISION in low:
        return no_vision_message(url, "")
    if CONTEXT_EXCEEDED in low:
        shape = f" ({slots} slot(s) of {slot_ctx} tokens each)" if slots and slot_ctx else ""
        return (f"{url} ran out of context{shape}: a region's image, prompt and token budget did not fit. Give "
                "llama-server more context per slot (-c = slots × (image tokens + budget), e.g. -np 2 -c 16384; "
                "--llama-ctx with --engine llamacpp), fewer slots (-np / --llama-parallel), or send fewer requests "
                "at once (--concurrency) or a smaller --max-new-tokens")
    return None


def timings(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """llama.cpp's per-request `timings` in the region stats (prompt and generation time, tokens/s, cached
    tokens), or None when the server sent none."""
    if not isinstance(data, dict):
        return None
    keys = ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "predicted_per_second", "cache_n")
    out = {k: round(float(data[k]), 3) if isinstance(data[k], float) else data[k] for k in keys if k in data}
    return out or None
