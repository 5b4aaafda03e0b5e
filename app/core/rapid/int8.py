"""The recogniser with its classifier in 8-bit integers: onnxruntime's dynamic quantisation of the one MatMul
that turns each column's 120 features into scores for the 18,710 characters (its weights stored as int8, its input
scaled to uint8 as it runs). The recogniser is most of a scanned page's time, and that product is the largest
part of it. The rest of the model stays in float32: quantising the sequence encoder's MatMuls as well gained
little more and changed more readings, and onnxruntime's integer convolutions were no faster here and changed
readings again (docs/benchmarks.md).

The quantised copy is made from the wheel's own file the first time it is needed (0.2 s) and kept under the
user's cache folder (`$SCRIPTORIUM_CACHE`, else `$XDG_CACHE_HOME/scriptorium`, else `~/.cache/scriptorium`),
named by the source file's SHA-256, so an updated rapidocr wheel makes a new one. The copy is written to a
temporary file and renamed into place: a crash mid-write leaves none, and one that will not load is made again.
Where it cannot be made (the `onnx` package missing, an unwritable cache, a model the quantiser rejects) the
recogniser reads in float32, as it does when a person sets `SCRIPTORIUM_RECOGNISER=fp32`.

What must never live here: the recogniser's pre- or post-processing (recogniser.py).
"""
from __future__ import annotations

import hashlib
import logging
import os
from functools import lru_cache
from pathlib import Path

from app.core.base.paths import cache_dir

PRECISION_ENV = "SCRIPTORIUM_RECOGNISER"  # "fp32": the wheel's float model as it is; anything else: int8
log = logging.getLogger(__name__)


def wanted() -> bool:
    """Does this process read with the 8-bit copy (unless a person asked for float32)?"""
    return os.environ.get(PRECISION_ENV, "int8").strip().lower() != "fp32"


@lru_cache(maxsize=4)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def int8_path(src: Path, folder: Path | None = None) -> Path:
    """Where the 8-bit copy of `src` lives (whether made yet or not)."""
    st = src.stat()
    digest = _digest(str(src), st.st_size, st.st_mtime_ns)
    return (folder or cache_dir() / "models") / f"{src.stem}.head-int8.{digest}.onnx"


def _classifier(src: Path) -> list[str]:
    """The name of the model's classifier: the MatMul whose weight has the most outputs (one per character)."""
    import onnx

    model = onnx.load(str(src))
    dims = {w.name: list(w.dims) for w in model.graph.initializer}
    outputs = {n.name: max((dims[i][-1] for i in n.input if len(dims.get(i, ())) == 2), default=0)
               for n in model.graph.node if n.op_type == "MatMul"}
    best = max(outputs, key=outputs.get, default=None)
    if best is None or outputs[best] < 1000:
        raise ValueError(f"{src.name} has no classifier MatMul over its characters")
    return [best]


def int8_model(src: Path, folder: Path | None = None) -> Path | None:
    """The 8-bit copy of the ONNX model `src`, made on first use; None where it cannot be made (see the module)."""
    try:
        dest = int8_path(src, folder)
        if dest.is_file():
            return dest
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except (OSError, ImportError) as exc:
        log.info("the recogniser reads in float32: %s", exc)
        return None
    tmp = dest.with_name(f".{dest.stem}.{os.getpid()}.tmp.onnx")
    root = logging.getLogger()  # the quantiser warns on the root logger that a model was not pre-processed
    level = root.level
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        root.setLevel(logging.ERROR)
        quantize_dynamic(str(src), str(tmp), op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8,
                         nodes_to_quantize=_classifier(src))
        os.replace(tmp, dest)
    except Exception as exc:  # noqa: BLE001 - any failure of the quantiser leaves the float model in use
        log.warning("could not make the recogniser's 8-bit copy (%s); it reads in float32", exc)
        return None
    finally:
        root.setLevel(level)
        if tmp.exists():
            tmp.unlink(missing_ok=True)
    return dest


def int8_session(src: Path, options, providers: list[str]):
    """(path, onnxruntime session) of the 8-bit copy of `src`, or None (the caller loads the float model). A copy
    that will not load (damaged on disk) is made again once."""
    import onnxruntime as ort

    for _ in range(2):
        path = int8_model(src)
        if path is None:
            return None
        try:
            return path, ort.InferenceSession(str(path), options, providers=providers)
        except Exception as exc:  # noqa: BLE001 - onnxruntime's load errors have no common base
            log.warning("the recogniser's 8-bit copy %s did not load (%s); making it again", path, exc)
            path.unlink(missing_ok=True)
    return None
