"""The tiny GlmOcr checkpoint (app.core.tiny.glm_checkpoint) as GGUF files for llama.cpp: the language model and its vision
projector (mmproj), written by llama.cpp's own converter (`convert_hf_to_gguf.py`, from the source that
`python3 make.py llama-server` unpacks into its cache; app.core.base.llama_build).

The converter runs unchanged in a child process with this interpreter. One thing no freshly trained vocabulary can
match: the converter recognises a BPE pre-tokenizer by the hash of its output on a fixed text, and the tiny
tokenizer is not one it knows (`NotImplementedError` in `get_vocab_base_pre`). Only on that error the answer is
"gpt-2", the pre-tokenizer the tiny tokenizer really uses (GPT-2's split regex); the real GLM-OCR is recognised
as "glm4" without help.

What must never live here: the llama.cpp engine (app.core.engines.llamacpp), test assertions.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# the converter with one fallback: a pre-tokenizer it cannot recognise by hash is GPT-2's (the tiny tokenizer's)
_RUNNER = """
import os, runpy, sys
src, script = sys.argv[1], sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
sys.path.insert(0, src)
if "NO_LOCAL_GGUF" not in os.environ:
    sys.path.insert(1, os.path.join(src, "gguf-py"))
from conversion import base
known = base.TextModel.get_vocab_base_pre
def get_vocab_base_pre(self, tokenizer):
    try:
        return known(self, tokenizer)
    except NotImplementedError:
        return "gpt-2"
base.TextModel.get_vocab_base_pre = get_vocab_base_pre
runpy.run_path(script, run_name="__main__")
"""


class ConversionError(RuntimeError):
    """llama.cpp's converter failed (the tail of its output says why)."""


def convert(checkpoint: str | Path, out_dir: str | Path, *, name: str = "tiny-glmocr", outtype: str = "f32",
            converter: str | Path | None = None, timeout_s: float = 600.0) -> tuple[Path, Path]:
    """Write `<name>.gguf` and `mmproj-<name>.gguf` for the Hugging Face checkpoint folder `checkpoint` into
    `out_dir`; returns their paths. `converter`: convert_hf_to_gguf.py (default: the cached llama.cpp source's)."""
    from app.core.base.llama_build import HOW_TO_GET, converter as cached_converter

    script = Path(converter) if converter else cached_converter()
    if script is None or not script.is_file():
        raise ConversionError("llama.cpp's convert_hf_to_gguf.py was not found: " + HOW_TO_GET)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, mmproj = out / f"{name}.gguf", out / f"mmproj-{name}.gguf"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    for target, extra in ((model, []), (mmproj, ["--mmproj"])):
        cmd = [sys.executable, "-c", _RUNNER, str(script.parent), str(script), str(checkpoint), *extra,
               "--outfile", str(target), "--outtype", outtype]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
        if done.returncode != 0 or not target.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise ConversionError(f"convert_hf_to_gguf.py {' '.join(extra)} failed (exit {done.returncode}):\n{tail}")
    return model, mmproj
