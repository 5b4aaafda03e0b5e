"""A tiny GlmOcr checkpoint that `transformers serve` can serve, and the server itself on a free port: a real
OpenAI-compatible server for the remote engine's tests and `bench remote` on a machine without a GPU.

`servable_checkpoint` builds the tiny random checkpoint (app.core.tiny.glm_checkpoint), adds the video processor config that
transformers' GLM-4.6V processor insists on, and can scale the stop token's output row (`stop_boost`) so that
greedy decoding ends on its own after a few dozen tokens, as a real model does, instead of always running into the
token budget. `TransformersServer` starts `transformers serve` on a free port and waits for /health.

What must never live here: the remote engine (app.core.engines.remote), test assertions.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from app.core.base.children import die_with_parent

STOP_ROW = "lm_head.weight"


def servable_checkpoint(out_dir: str | Path, *, seed: int = 0, stop_boost: float = 1.0) -> Path:
    from transformers.models.glm46v.video_processing_glm46v import Glm46VVideoProcessor

    from app.core.tiny.glm_checkpoint import build

    out = build(out_dir, seed=seed)
    Glm46VVideoProcessor().save_pretrained(out)
    if stop_boost != 1.0:
        import json

        from safetensors.torch import load_file, save_file

        stop = json.loads((out / "generation_config.json").read_text())["eos_token_id"][0]
        weights = load_file(out / "model.safetensors")
        weights[STOP_ROW][stop] *= stop_boost
        save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TransformersServer:
    """`transformers serve CHECKPOINT` on 127.0.0.1 and a free port (CPU, continuous batching)."""

    def __init__(self, checkpoint: str | Path, *, port: int | None = None, log: str | Path | None = None) -> None:
        self.checkpoint = str(checkpoint)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._log = open(log, "wb") if log else subprocess.DEVNULL
        cli = shutil.which("transformers", path=os.path.dirname(sys.executable)) or shutil.which("transformers")
        if cli is None:
            raise RuntimeError("`transformers serve` is not installed: pip install 'transformers[serving]'")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        # it ends with the process that started it, even one that crashed (a test run's segfault left two
        # servers of a gigabyte each running)
        self.process = subprocess.Popen(
            [cli, "serve", self.checkpoint, "--device", "cpu", "--host", "127.0.0.1", "--port", str(self.port),
             "--continuous-batching", "--log-level", "warning"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env, preexec_fn=die_with_parent())

    def wait(self, timeout: float = 120.0) -> TransformersServer:
        import httpx2

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"transformers serve exited with {self.process.returncode}")
            try:
                if httpx2.get(f"http://127.0.0.1:{self.port}/health", timeout=1.0).status_code == 200:
                    return self
            except httpx2.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"transformers serve did not answer on port {self.port} within {timeout:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not subprocess.DEVNULL:
            self._log.close()

    def kill(self) -> None:
        """End the server at once, as a crash would."""
        self.process.kill()
        self.process.wait()
