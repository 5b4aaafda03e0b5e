"""llama.cpp's `llama-server` as a child process of the app: started on a free local port with a GGUF model and its
vision projector, waited on until `/health` answers, stopped when the engine closes or the app ends.

No orphan servers:
- the child runs in its own session (a terminal's Ctrl+C reaches the app, which stops the server itself after
  dropping its requests), and on Linux gets PR_SET_PDEATHSIG = SIGKILL, so it ends the moment the app is
  killed (SIGKILL, a crash). SIGKILL, not SIGTERM: a server busy with a request takes SIGTERM as "finish,
  then stop" and was seen alive a minute after its app was gone, holding its port, its memory and the CPU;
  it has nothing of ours to save. The death signal follows the THREAD that started the child, so every
  server is started from one long-lived daemon thread of this module, never from a worker thread that may
  end before the app does. Elsewhere (macOS, Windows) there is no such signal: the handlers below stop it;
- every live server is stopped by an atexit handler, and by a SIGTERM/SIGHUP handler installed when none was (the
  default action would end the app without atexit handlers).

The server's output goes to a log file; when it fails to start or dies, the last lines of that log are in the
message.

What must never live here: HTTP requests of a run (app.core.engines.remote), Qt.
"""
from __future__ import annotations

import atexit
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from app.core.base.children import die_with_parent
from app.core.engines.base import EngineUnavailable

_LIVE: set[LlamaServer] = set()
_LOCK = threading.Lock()
_HOOKED = False


def _free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (the server binds it a moment later; a lost race is retried)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """One `llama-server` child. `start()` launches it, `wait_ready()` waits for /health, `stop()` ends it."""

    def __init__(self, binary: str | Path, model: str | Path, mmproj: str | Path | None = None, *,
                 threads: int = 0, ctx_size: int = 0, gpu_layers: int | None = None, parallel: int = 1,
                 alias: str = "", port: int | None = None, extra: tuple[str, ...] = (),
                 log_path: str | Path | None = None) -> None:
        self.binary, self.model = Path(binary), Path(model)
        self.mmproj = Path(mmproj) if mmproj else None
        self.threads, self.ctx_size, self.gpu_layers = int(threads or 0), int(ctx_size or 0), gpu_layers
        self.parallel = max(1, int(parallel))
        self.alias = alias or self.model.stem
        self.port = port
        self.extra = tuple(extra)
        self._own_log = log_path is None
        self.log_path = Path(log_path) if log_path else Path(tempfile.mkstemp(prefix="scriptorium-llama-server-",
                                                                              suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    def __repr__(self) -> str:
        return f"LlamaServer({self.model.name}, port={self.port}, pid={self.pid})"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        cmd = [str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
               "--alias", self.alias, "-np", str(self.parallel), "--metrics", "--no-webui"]
        if self.mmproj:
            cmd += ["--mmproj", str(self.mmproj)]
        if self.threads > 0:
            cmd += ["-t", str(self.threads)]
        if self.ctx_size > 0:
            cmd += ["-c", str(self.ctx_size)]
        if self.gpu_layers is not None:
            cmd += ["-ngl", str(self.gpu_layers)]
        return cmd + list(self.extra)

    # --- lifecycle ---------------------------------------------------------------------------------------------
    def start(self, timeout_s: float = 600.0) -> LlamaServer:
        """Start the server and wait until it is ready (a port taken in between: another free one, twice)."""
        for attempt in range(3):
            fixed = self.port is not None and attempt == 0
            self.port = self.port if fixed else _free_port()
            self._launch()
            try:
                return self.wait_ready(timeout_s)
            except EngineUnavailable:
                if fixed or self.alive or "bind" not in self.log_tail().lower():
                    self.stop()
                    raise
        raise EngineUnavailable(f"llama-server could not bind a local port:\n{self.log_tail()}")

    def _launch(self) -> None:
        _install_hooks()
        log = open(self.log_path, "ab")
        try:
            self.process = _spawn(self.command(), log)
        except OSError as exc:
            raise EngineUnavailable(f"llama-server could not be started ({self.binary}: {exc.strerror or exc})") from None
        finally:
            log.close()
        with _LOCK:
            _LIVE.add(self)

    def wait_ready(self, timeout_s: float = 600.0) -> LlamaServer:
        """Poll /health until it answers 200 (503 while the model loads); the server's exit is an error."""
        import httpx2

        deadline = time.monotonic() + timeout_s
        while True:
            if not self.alive:
                code = self.process.returncode if self.process is not None else None
                raise EngineUnavailable(f"llama-server exited (code {code}) before it was ready; its last lines:\n"
                                        f"{self.log_tail()}")
            try:
                if httpx2.get(f"{self.url}/health", timeout=2.0).status_code == 200:
                    return self
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise EngineUnavailable(f"llama-server did not become ready within {timeout_s:g} s; its last lines:\n"
                                        f"{self.log_tail()}")
            time.sleep(0.1)

    def stop(self, timeout_s: float = 10.0) -> None:
        """End the server (SIGTERM, then SIGKILL after `timeout_s`) and reap it; safe to call twice."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with _LOCK:
            _LIVE.discard(self)

    def kill(self) -> None:
        """End the server at once, as a crash would (tests)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        self.stop()
        if self._own_log:
            self.log_path.unlink(missing_ok=True)

    # --- what its log says -----------------------------------------------------------------------------------
    def log_tail(self, lines: int = 12) -> str:
        try:
            text = self.log_path.read_text("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


# --- one long-lived thread starts every server (the death signal follows the starting thread) --------------------
_requests: queue.Queue = queue.Queue()
_spawner: threading.Thread | None = None


def _spawn(cmd: list[str], log) -> subprocess.Popen:
    global _spawner
    with _LOCK:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_spawn_loop, name="llama-server-parent", daemon=True)
            _spawner.start()
    done: queue.Queue = queue.Queue(1)
    _requests.put((cmd, log, done))
    ok, value = done.get()
    if not ok:
        raise value
    return value


def _spawn_loop() -> None:
    while True:
        cmd, log, done = _requests.get()
        try:
            done.put((True, subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                             start_new_session=True, preexec_fn=die_with_parent())))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            done.put((False, exc))


# --- stopped with the app ---------------------------------------------------------------------------------------
def live_servers() -> list[LlamaServer]:
    with _LOCK:
        return list(_LIVE)


def stop_all() -> None:
    for server in live_servers():
        server.stop(timeout_s=5.0)


def _install_hooks() -> None:
    global _HOOKED
    if _HOOKED:
        return
    _HOOKED = True
    atexit.register(stop_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set on the main thread; the death signal still covers a kill
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is signal.SIG_DFL:
            signal.signal(number, _stop_and_die)


def _stop_and_die(number, _frame) -> None:
    stop_all()
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)
