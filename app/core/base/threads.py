"""How many CPU threads one process's native kernels may use (onnxruntime, OpenMP, OpenCV, torch).

`convert --jobs N` runs N worker processes (app.commands.convert_jobs); each is given its share of the
machine's cores (`limit_threads(cores // N)`) before it loads a model, so that N workers do not each start a
thread per core and spin against one another. The share travels as an environment variable, so the processes
a worker starts (the layout child) inherit it; the places that open onnxruntime sessions ask `cpu_threads()`.

What must never live here: process pools, scheduling or any model code.
"""
from __future__ import annotations

import os

ENV = "SCRIPTORIUM_THREADS"
_LIBRARY_ENVS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def machine_cores() -> int:
    """The cores this process may run on (its affinity where the system says; else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS and Windows have no affinity call
        return max(1, os.cpu_count() or 1)


def cpu_threads() -> int | None:
    """The threads this process's kernels may use; None: no limit was set (each library's own default)."""
    try:
        value = int(os.environ.get(ENV, ""))
    except ValueError:
        return None
    return value if value > 0 else None


def limit_threads(threads: int) -> None:
    """From now on this process (and the processes it starts) uses at most `threads` threads per kernel. Call
    it before models are loaded: sessions opened earlier keep their pools."""
    threads = max(1, int(threads))
    os.environ[ENV] = str(threads)
    for name in _LIBRARY_ENVS:
        os.environ[name] = str(threads)
    try:
        import cv2

        cv2.setNumThreads(threads)
    except ImportError:  # pragma: no cover - OpenCV comes with rapidocr
        pass


def rapidocr_params() -> dict[str, int]:
    """RapidOCR's parameters for the limit (none without one): its onnxruntime sessions' intra-op threads."""
    n = cpu_threads()
    if not n:
        return {}
    ort = "EngineConfig.onnxruntime"
    return {f"{ort}.intra_op_num_threads": n, f"{ort}.inter_op_num_threads": 1}
