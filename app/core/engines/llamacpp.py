"""`--engine llamacpp`: GLM-OCR (or another vision GGUF) on llama.cpp's `llama-server`, started by the app itself.

The engine finds the model's GGUF and its vision projector (`--gguf FILE --mmproj FILE`, or a models folder holding
both: `--model DIR`, or the `glm-ocr-gguf` models folder that `python -m app models` lists), finds the
`llama-server` binary (app.core.base.llama_build: `--llama-server PATH`, $SCRIPTORIUM_LLAMA_SERVER, PATH, or the build
`python3 make.py llama-server` cached), starts it on a free local port (app.core.engines.llama_server: no orphan
processes), waits until it is healthy and then reads through the remote engine's OpenAI-compatible path
(app.core.engines.remote), which knows llama-server's answers (log-probabilities, `timings`, its final errors).
`close()` stops the server; so does the end of the app.

The server has `parallel` slots (`-np`): that many regions are read at once, sharing one context of `ctx_size`
tokens (default: `parallel` × SLOT_TOKENS, room for a region's image, prompt and the largest token budget).

A server that dies mid-run is an error on the regions it held and on every later one, at once and without retries
(its exit code and last log lines say why); the run goes on and ends with warnings, and `convert --resume` reads
what is missing.

What must never live here: HTTP requests (the remote engine), the process handling (llama_server), Qt.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.engines.base import EngineUnavailable
from app.core.engines.remote import RemoteEngine, RemoteError, Transient
from app.core.engines.spec import EngineOption, EngineSpec

MANIFEST = "glm-ocr-gguf"
DEFAULT_PARALLEL = 2  # slots: two regions decode in one batch; more helps a GPU, less a small laptop
SLOT_TOKENS = 8192  # a region crop's image tokens + prompt + the largest budget (4096, tables and formulas)

# (option, type, default, flag, help): the engine's options, as its factory takes them and convert offers them


def find_model_files(gguf: str = "", mmproj: str = "", model_path: str | None = None) -> tuple[Path, Path]:
    """(model GGUF, projector GGUF) from the given files, a models folder, or the glm-ocr-gguf manifest's folder."""
    if gguf:
        model = Path(gguf).expanduser()
        if not model.is_file():
            raise EngineUnavailable(f"the GGUF file {model} does not exist")
        folder = model.parent
    else:
        folder = Path(model_path).expanduser() if model_path else _manifest_folder()
        if not folder.is_dir():
            raise EngineUnavailable(f"the models folder {folder} does not exist")
        models = sorted(p for p in folder.glob("*.gguf") if not p.name.lower().startswith("mmproj"))
        if len(models) != 1:
            found = ", ".join(p.name for p in models) or "none"
            raise EngineUnavailable(f"{folder} must hold exactly one model GGUF besides mmproj*.gguf (found: {found}); "
                                    "name it with --gguf FILE")
        model = models[0]
    if mmproj:
        projector = Path(mmproj).expanduser()
        if not projector.is_file():
            raise EngineUnavailable(f"the vision projector {projector} does not exist")
        return model, projector
    projectors = sorted(folder.glob("mmproj*.gguf")) + sorted(folder.glob("MMPROJ*.gguf"))
    if len(projectors) != 1:
        found = ", ".join(p.name for p in projectors) or "none"
        raise EngineUnavailable(f"no single vision projector beside {model.name} in {folder} (mmproj*.gguf found: "
                                f"{found}); an OCR model reads images only with it: name it with --mmproj FILE")
    return model, projectors[0]


def _manifest_folder() -> Path:
    from app.core.checkpoints.loader import ModelError, get_manifest, resolve_model_dir

    try:
        return resolve_model_dir(get_manifest(MANIFEST))
    except ModelError as exc:
        raise EngineUnavailable(f"{exc} Or name the files with --gguf FILE --mmproj FILE.") from None


class LlamaCppEngine(RemoteEngine):
    """The remote engine on a llama-server child it owns."""

    def __init__(self, server, *, name: str = "llamacpp", **remote: Any) -> None:
        self.llama = server
        super().__init__([server.url], model=server.alias, name=name, **remote)
        props = self.servers[0].info  # llama.cpp's /props, read when the engine opened
        self.version, self.quantisation = str(props.get("build_info") or ""), str(props.get("model_ftype") or "")
        self.device = (f"llama.cpp {self.version or '(version unknown)'}: {server.model.name}"
                       f"{f' ({self.quantisation})' if self.quantisation else ''}, {server.parallel} slot(s)"
                       f"{f', {server.threads} threads' if server.threads else ''}, port {server.port}")

    def __repr__(self) -> str:
        return f"LlamaCppEngine({self.llama!r})"

    async def _request(self, server, image, task, region_id, page, emit, t0, attempt, cancel=None):
        if not self.llama.alive:
            raise self._gone()
        try:
            return await super()._request(server, image, task, region_id, page, emit, t0, attempt, cancel)
        except Transient:
            if not self.llama.alive:  # not worth another try: nobody will answer
                raise self._gone() from None
            raise

    def _gone(self) -> RemoteError:
        code = self.llama.process.returncode if self.llama.process is not None else None
        tail = self.llama.log_tail(4)
        return RemoteError(f"llama-server ({self.llama.model.name}) is no longer running (exit code {code})"
                           + (f"; its last lines: {tail}" if tail else ""))

    def server_stats(self) -> list[dict[str, Any]]:
        out = super().server_stats()
        for entry in out:
            entry.update(version=self.version, quantisation=self.quantisation, slots=self.llama.parallel,
                         model_file=self.llama.model.name)
        return out

    def close(self) -> None:
        super().close()
        self.llama.close()


def open_engine(*, gguf: str = "", mmproj: str = "", model_path: str | None = None, llama_server: str = "",
                parallel: int = DEFAULT_PARALLEL, threads: int = 0, ctx_size: int = 0, gpu_layers: int = -1,
                max_new_tokens: int | None = None, engine: str = "llamacpp", ready_timeout_s: float = 600.0,
                log_path: str | None = None, **options: Any) -> LlamaCppEngine:
    """Start llama-server with the model and its projector and open the remote engine on it. Options: see LLAMACPP_OPTIONS below;
    also max_new_tokens, stream, retries, backoff_s, timeout_s (the remote engine's), ready_timeout_s, log_path."""
    from app.core.engines.llama_server import LlamaServer
    from app.core.base.llama_build import HOW_TO_GET, find_binary

    model, projector = find_model_files(gguf, mmproj, model_path)
    binary = find_binary(llama_server or None)
    if binary is None:
        named = f" ({llama_server} is not an executable file)" if llama_server else ""
        raise EngineUnavailable(HOW_TO_GET + named)
    parallel = max(1, int(parallel))
    server = LlamaServer(binary, model, projector, threads=threads, ctx_size=ctx_size or parallel * SLOT_TOKENS,
                         gpu_layers=None if gpu_layers is None or int(gpu_layers) < 0 else int(gpu_layers),
                         parallel=parallel, alias=model.stem, log_path=log_path)
    server.start(ready_timeout_s)
    remote = {k: options[k] for k in ("stream", "retries", "backoff_s", "timeout_s") if k in options}
    try:
        return LlamaCppEngine(server, name=engine or "llamacpp", concurrency=parallel, max_new_tokens=max_new_tokens,
                              api_key_env="", **remote)
    except BaseException:
        server.close()
        raise


LLAMACPP_OPTIONS = (
    EngineOption("gguf", str, "",
                 "the model's GGUF file (default: the one in --model DIR or the glm-ocr-gguf folder)",
                 metavar="FILE", label="Model GGUF file (empty: the glm-ocr-gguf models folder)"),
    EngineOption("mmproj", str, "", "the vision projector's GGUF (default: mmproj*.gguf beside the model)",
                 metavar="FILE", label="Vision projector GGUF (empty: mmproj*.gguf beside the model)"),
    EngineOption("llama_server", str, "", "the llama-server binary (default: $SCRIPTORIUM_LLAMA_SERVER, PATH, "
                 "or the build of `python3 make.py llama-server`)", metavar="FILE", changes_text=False,
                 label="llama-server binary (empty: found or built)"),
    EngineOption("parallel", int, 2, "server slots = regions read at once (default 2)",
                 flag="--llama-parallel", minimum=1, maximum=64, metavar="N", changes_text=False,
                 label="Server slots (regions at once)"),
    EngineOption("threads", int, 0, "CPU threads of the server (default 0: llama.cpp's choice)",
                 flag="--llama-threads", minimum=0, maximum=512, metavar="N", changes_text=False,
                 label="Server CPU threads (0: llama.cpp's choice)"),
    EngineOption("ctx_size", int, 0, "context tokens shared by all slots (default 0: slots x 8192)",
                 flag="--llama-ctx", minimum=0, metavar="N", changes_text=False,
                 label="Context tokens (0: slots x 8192)"),
    EngineOption("gpu_layers", int, -1,
                 "layers offloaded to a GPU (default -1: llama.cpp's choice; 0: CPU only)",
                 flag="--llama-gpu-layers", minimum=-1, metavar="N", changes_text=False,
                 label="GPU layers (-1: llama.cpp's choice)"),
)

LLAMACPP = EngineSpec("llamacpp", "llama.cpp (local)", "region", "app.core.engines.llamacpp:open_engine",
                      "glm-ocr-gguf", options=LLAMACPP_OPTIONS, group="llama.cpp")
