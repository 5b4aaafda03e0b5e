"""The built-in line reader as a region engine (registry name "builtin").

A region image is split into printed lines by the projection-profile line finder (app.core.lines), each line is
normalised to the model's input height and decoded by the app's own GLM-OCR engine (self-speculative by default,
`mode="ar"` for greedy AR), and the lines are joined with newlines. Events of the per-line decodes are re-labelled
with the region's id and numbered on (round / step indices continue across lines), so the rounds view shows one
region; one RegionStarted and one RegionFinished (with the merged stats) frame them.

The model is a checkpoint folder produced by `scriptorium train` (README, "Training the built-in model"), looked for
in the user's model folder (<data>/models/builtin) and in the bundled models/builtin/. None ships yet; without one,
opening the engine raises EngineUnavailable saying how to train one.
"""
from __future__ import annotations

import dataclasses
import json
import time
from typing import TYPE_CHECKING, Any

from app.core.engine import CancelToken, EngineUnavailable, Emit, RegionResult, no_emit
from app.core.events import RegionFinished, RegionStarted, RoundVerified, TokensCommitted

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

TRAIN_HINT = (
    "Train one with `python -m app train --device cuda --minutes 10 --out models/builtin` on a machine with a CUDA "
    "GPU (the recipe is sized for about 10 minutes there; not yet verified on a GPU. On CPU the same command runs "
    "but needs many hours), or copy a trained checkpoint folder "
    "to {user_dir}; see the README section \"Training the built-in model\". Meanwhile use the `classic` engine "
    "(RapidOCR) or a GravityOCR / GLM-OCR checkpoint."
)


def no_model_message() -> str:
    from app.core.paths import models_dir, user_models_dir

    return (f"No built-in model is installed (looked in {user_models_dir() / 'builtin'} and {models_dir() / 'builtin'}). "
            + TRAIN_HINT.format(user_dir=user_models_dir() / "builtin"))


class BuiltinEngine:
    """Line finder + per-line decoding with the built-in checkpoint."""

    kind = "region"

    def __init__(self, inner, *, name: str = "builtin", line_height: int = 32) -> None:
        self.inner = inner
        self.name = name
        self.line_height = line_height
        self.block_size = getattr(inner, "block_size", 0)
        self.mode = getattr(inner, "mode", "selfspec")
        self.model_path = getattr(inner, "model_path", "")
        self.device = getattr(inner, "device", "cpu")

    def read_lines(self, image: "Image.Image"):
        from app.core.lines import split_lines

        return split_lines(image, height=self.line_height)

    def decode_region(self, image: "Image.Image", task: str, *, region_id: str, emit: Emit = no_emit,
                      cancel: CancelToken | None = None, page: int = 0, max_new_tokens: int | None = None,
                      **_ignored: Any) -> RegionResult:
        t0 = time.perf_counter()
        lines = self.read_lines(image)
        budget = int(max_new_tokens or 512)
        emit(RegionStarted(region_id, page, task, self.name, 0, budget))
        texts: list[str] = []
        tokens: list[int] = []
        per_line: list[dict[str, Any]] = []
        offsets = {"round": 0, "step": 0, "tokens": 0}
        cancelled = False
        for i, (box, line) in enumerate(lines):
            if cancel is not None and cancel.cancelled:
                cancelled = True
                break
            first = {"pending": i > 0}  # the newline that joins this line to the previous one

            def relay(event, first=first) -> None:
                if isinstance(event, (RegionStarted, RegionFinished)):
                    return
                changes: dict[str, Any] = {"region_id": region_id}
                if isinstance(event, RoundVerified):
                    changes.update(round_index=event.round_index + offsets["round"],
                                   output_len=event.output_len + offsets["tokens"])
                elif isinstance(event, TokensCommitted):
                    changes.update(step=event.step + offsets["step"])
                if first["pending"] and getattr(event, "text", ""):
                    changes["text"] = "\n" + event.text
                    first["pending"] = False
                emit(dataclasses.replace(event, **changes))

            res = self.inner.decode_region(line, "text", region_id=f"{region_id}/line{i}", emit=relay, cancel=cancel,
                                           page=page, max_new_tokens=max(8, budget - len(tokens)))
            texts.append(res.text)
            tokens += list(res.tokens)
            st = dict(res.stats)
            st["box"] = list(box)
            per_line.append(st)
            offsets["round"] += int(st.get("rounds", 0))
            offsets["step"] += int(st.get("output_tokens", len(res.tokens)))
            offsets["tokens"] += len(res.tokens)
            if res.cancelled:
                cancelled = True
                break
        text = "\n".join(t for t in texts if t)
        stats = merge_stats(per_line, self.block_size)
        stats.update(engine=self.name, lines=len(lines), line_boxes=[s["box"] for s in per_line], stopped=(
            "cancelled" if cancelled else "done"), request_ms=(time.perf_counter() - t0) * 1e3, device=self.device)
        if task != "text":
            stats["note"] = f"the built-in model reads printed text lines; the {task} region was read as text"
        emit(RegionFinished(region_id, text, stats, cancelled, tokens))
        return RegionResult(region_id, text, tokens, stats, cancelled)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close:
            close()


def merge_stats(per_line: list[dict[str, Any]], block_size: int) -> dict[str, Any]:
    """The region's decoding stats from its lines' (summed counters, derived figures recomputed)."""
    from app.core.decoding.stats import summarize  # pure Python: no torch

    keys = ("prefill_ms", "draft_ms", "verify_ms", "step_ms", "forwards", "rounds", "tokens", "output_tokens",
            "decode_ms")
    raw: dict[str, Any] = {k: sum(float(s.get(k, 0) or 0) for s in per_line) for k in keys}
    for k in ("forwards", "rounds", "tokens", "output_tokens"):
        raw[k] = int(raw[k])
    raw["accepted"] = [int(a) for s in per_line for a in s.get("accepted", [])]
    raw["mode"] = per_line[0].get("mode", "") if per_line else ""
    raw["block_size"] = block_size
    raw["regions"] = 1
    return summarize(raw)


def open_engine(*, model_path=None, device=None, dtype=None, block_size: int | None = None, mode: str = "selfspec",
                manifest: str = "builtin", engine: str = "builtin", loaded=None, **options: Any) -> BuiltinEngine:
    """Open the built-in line reader. Raises EngineUnavailable (with how to train a model) when none is installed."""
    from app.core.loader import ModelError, ModelNotFound, get_manifest, load_model, resolve_model_dir

    if loaded is None:
        try:
            folder = resolve_model_dir(get_manifest(manifest or "builtin"), model_path)
        except ModelNotFound as exc:
            if model_path is not None:
                raise EngineUnavailable(f"{exc} {TRAIN_HINT.format(user_dir='<data>/models/builtin')}") from exc
            raise EngineUnavailable(no_model_message()) from exc
        except ModelError as exc:
            raise EngineUnavailable(str(exc)) from exc
        try:
            loaded = load_model(manifest or "builtin", folder, device=device, dtype=dtype)
        except ModelError as exc:
            raise EngineUnavailable(str(exc)) from exc
    line_height = 32
    bd = loaded.path / "block_diffusion.json"
    if bd.is_file():
        line_height = int(json.loads(bd.read_text(encoding="utf-8")).get("line_height", 32))
    try:
        from app.core.decoding import glmocr_engine
    except ImportError as exc:  # pragma: no cover
        raise EngineUnavailable(f"the GLM-OCR decoders are not part of this build ({exc})") from exc
    opener = glmocr_engine.open_ar if mode == "ar" else glmocr_engine.open_selfspec
    inner = opener(loaded=loaded, manifest=manifest or "builtin", engine=f"{engine}-line", block_size=block_size,
                   **options)
    return BuiltinEngine(inner, name=engine or "builtin", line_height=line_height)
