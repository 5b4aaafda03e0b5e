"""The built-in line reader: RapidOCR's PP-OCRv6 recogniser reads each line, a small GlmOcr decoder writes its text.

- `engine`  the region engine (lines found, read, decoded self-speculatively or AR; events; stats);
- `reader`  the decoder's checkpoint, its prefix codec (the recogniser's evidence as embeddings) and its forwards;
- `vocab`   the decoder's character vocabulary.

Training (app.core.training) imports this package to build and save the same model; nothing here imports training.
"""
from __future__ import annotations

from typing import Any

from app.core.engines.base import EngineUnavailable
from app.core.engines.spec import EngineOption, EngineSpec


def open_engine(*, model_path=None, device=None, dtype=None, block_size: int | None = None, mode: str = "selfspec",
                manifest: str = "builtin", engine: str = "builtin", **options: Any):
    """Open the built-in line reader. Raises EngineUnavailable (with how to train a model) when none is installed."""
    from app.core.engines.builtin.engine import TRAIN_HINT, ReaderEngine, no_model_message
    from app.core.engines.builtin.reader import is_reader_checkpoint
    from app.core.checkpoints.loader import ModelError, ModelNotFound, get_manifest, resolve_model_dir

    try:
        folder = resolve_model_dir(get_manifest(manifest or "builtin"), model_path)
    except ModelNotFound as exc:
        if model_path is not None:
            raise EngineUnavailable(f"{exc} {TRAIN_HINT.format(user_dir='<data>/models/builtin')}") from exc
        raise EngineUnavailable(no_model_message()) from exc
    except ModelError as exc:
        raise EngineUnavailable(str(exc)) from exc
    if not is_reader_checkpoint(folder):
        raise EngineUnavailable(f"{folder} is not a built-in reader checkpoint (its block_diffusion.json does not say "
                                f"kind: reader); checkpoints of the earlier vision-tower recipe are no longer read")
    try:
        return ReaderEngine(folder, name=engine or "builtin", mode=mode, device=device, block_size=block_size,
                            threads=options.get("threads"), max_new_tokens=options.get("max_new_tokens"),
                            decoder=options.get("decoder") or "always")
    except (OSError, ValueError, KeyError) as exc:
        raise EngineUnavailable(f"the built-in model in {folder} could not be loaded: {exc}") from exc


def open_ar(**options: Any):
    """The built-in model with greedy AR decoding (the baseline the rounds are measured against)."""
    options["mode"] = "ar"
    return open_engine(**options)


# registrations (pyproject's scriptorium.engines entry points name them); the built-in model reads printed
# lines, not LaTeX: a formula's text-layer text beats its reading
DECODER = EngineOption("decoder", str, "always", "which lines the built-in decoder reads: always (every line; the "
                       "window draws its rounds), unsure (only lines the recogniser was unsure of; the text is the "
                       "same, the arbiter keeps its sure readings; convert's default), never (the recogniser alone)",
                       choices=("always", "unsure", "never"), label="Decoder reads")
BUILTIN = EngineSpec("builtin", "Built-in model (self-speculative)", "region",
                     "app.core.engines.builtin:open_engine", "builtin", "rounds", reads_formulas=False,
                     options=(DECODER,))
BUILTIN_AR = EngineSpec("builtin-ar", "Built-in model, autoregressive", "region",
                        "app.core.engines.builtin:open_ar", "builtin", "", reads_formulas=False)

