"""The GLM-OCR family as region engines: GravityOCR self-speculative (`open_selfspec`) and greedy AR (`open_ar`, for
GravityOCR or GLM-OCR checkpoints). An engine turns (image crop, task) into text, stats and events.

It owns the glue around the decoders: the prompt (chat template + task prompt), the checkpoint's stop ids, mask id
and block size, the per-task max-new-tokens, streaming token text into events (so a replayed trace needs no
tokenizer), and the post-processing of the decoded text. The decoding itself is autoregressive.py / selfspec.py.

What must never live here: Qt, threads, layout or page assembly.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from app.core.engines.base import EngineUnavailable, Emit, RegionResult, no_emit
from app.core.engines.spec import EngineSpec
from app.core.base.cancel import CancelToken
from app.core.decoding.inspector import InspectOptions
from app.core.decoding.round_events import round_verified, tokens_committed
from app.core.record.events import RegionFinished, RegionStarted
from app.core.checkpoints.loader import ModelError
from app.core.document.regions import MAX_NEW_TOKENS, TASK_PROMPTS

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

    from app.core.checkpoints.loader import LoadedModel

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class ModelUnavailable(EngineUnavailable, ModelError):
    """The engine's weights cannot be loaded (missing, unsafe, incomplete); the message says what to do."""


def clean_text(text: str) -> str:
    """Post-processing of a region's text (docs/architecture.md, The self-speculative round): drop <think>…</think> (and
    an unclosed <think> tail), trim."""
    text = _THINK.sub("", text)
    if "<think>" in text:
        text = text.split("<think>", 1)[0]
    return text.strip()


@dataclass(frozen=True)
class Numbering:
    """Where a region's event numbering stands when a decode continues it (the next line of a built-in region):
    rounds, AR steps and output tokens so far, and the text that joins this decode's first piece to the last."""

    round: int = 0
    step: int = 0
    tokens: int = 0
    lead: str = ""


class TextStream:
    """Turns committed token ids into appended text pieces. Holds back a piece that ends inside a multi-byte
    character (decoded as U+FFFD) until the rest arrives; decoding restarts at every clean boundary, so the cost
    per piece stays small."""

    def __init__(self, tokenizer) -> None:
        self._tok = tokenizer
        self._ids: list[int] = []
        self._start = 0

    def push(self, ids: Sequence[int], *, final: bool = False) -> str:
        """The text `ids` append; `final` flushes whatever is held back."""
        self._ids.extend(int(i) for i in ids)
        text = self._tok.decode(self._ids[self._start:], skip_special_tokens=True)
        if text.endswith("\ufffd") and not final:
            return ""
        self._start = len(self._ids)
        return text


class RegionCrop(NamedTuple):
    """One region for `GlmOcrEngine.decode_batch`."""

    image: "Image.Image"
    task: str
    region_id: str
    page: int = 0


BATCH_SIZE = 8  # regions decoded together by decode_batch (bench batch: tokens/s still rising at 8 on CPU)


class GlmOcrEngine:
    """A loaded GLM-OCR-family checkpoint decoding regions in `mode` "selfspec" or "ar"."""

    kind = "region"
    concurrency = 1  # one lane owns the model

    def __init__(self, loaded: "LoadedModel", *, name: str, mode: str, block_size: int = 0,
                 max_new_tokens: int | None = None, cache: str = "auto", compile: bool | None = None) -> None:
        from app.core.decoding.static_cache import compiled_logits, resolve_cache_mode

        self.loaded = loaded
        self.name = name
        self.mode = mode
        self.model = loaded.model
        self.processor = loaded.processor
        self.tokenizer = loaded.tokenizer
        self.device = str(loaded.device)
        self.input_dpi = 200.0  # crops are rendered at this DPI
        self.dtype = str(loaded.dtype).replace("torch.", "")
        self.model_path = str(loaded.path)
        self.stop_ids = [int(i) for i in (loaded.special.get("stop_ids") or [self.tokenizer.eos_token_id])]
        self.mask_id = loaded.special.get("mask_token_id")
        self.block_size = int(block_size or loaded.special.get("block_size") or 0) if mode == "selfspec" else 0
        self.max_new_tokens = max_new_tokens
        self.cache = resolve_cache_mode(cache, loaded.device)  # "dynamic" | "static"
        # compiled static forwards (CUDA graphs on CUDA): by default on CUDA with the static cache; on CPU only when
        # asked (inductor's first compile of a shape takes about a minute there, each later decode ~3x faster)
        if compile is None:
            compile = self.cache == "static" and str(loaded.device).startswith("cuda")
        self.compiled = bool(compile)
        self._runner = compiled_logits(loaded.device) if self.compiled else None
        # how many regions `decode_batch` decodes in one forward per step (1: one at a time, as decode_region)
        self.batch_size = BATCH_SIZE
        # the reject inspector's numbers in every RoundVerified while someone listens (None: never)
        self.inspect = InspectOptions.from_env()
        self._texts: dict[int, str] = {}  # one token's text, decoded once per id (events carry them every round)
        if mode == "selfspec":
            self._check_selfspec()

    def _check_selfspec(self) -> None:
        title = self.loaded.manifest.title
        if self.mask_id is None:
            raise EngineUnavailable(f"{title} has no mask token (no block_diffusion.json), so it cannot draft; "
                                    "use the autoregressive engine or a GravityOCR checkpoint")
        rows = self.model.get_input_embeddings().weight.shape[0]
        if not 0 <= int(self.mask_id) < rows:
            raise EngineUnavailable(f"{title}: mask id {self.mask_id} is outside the {rows} embedding rows")
        if self.block_size < 1:
            raise EngineUnavailable(f"{title}: block size {self.block_size} is not positive")
        self.mask_id = int(self.mask_id)

    # --- inputs ---------------------------------------------------------------------------------------------

    def build_inputs(self, image: "Image.Image", task: str) -> dict[str, Any]:
        """The chat-template prompt for one crop and task, as tensors on the model's device."""
        if task not in TASK_PROMPTS:
            raise ValueError(f"task {task!r} is not decoded by {self.name}; choose one of {', '.join(TASK_PROMPTS)}")
        messages = [{"role": "user", "content": [{"type": "image", "image": image.convert("RGB")},
                                                 {"type": "text", "text": TASK_PROMPTS[task]}]}]
        inputs = self.processor.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                                    return_dict=True, return_tensors="pt")
        device, dtype = self.model.device, self.model.dtype
        return {key: value.to(device, dtype) if value.is_floating_point() else value.to(device)  # one copy each
                for key, value in inputs.items()}

    def budget(self, task: str, override: int | None = None) -> int:
        return int(override or self.max_new_tokens or MAX_NEW_TOKENS.get(task, 512))

    # --- decoding -------------------------------------------------------------------------------------------

    def decode_region(
        self,
        image: "Image.Image",
        task: str,
        *,
        region_id: str,
        emit: Emit = no_emit,
        cancel: CancelToken | None = None,
        page: int = 0,
        max_new_tokens: int | None = None,
        draft_hook=None,
    ) -> RegionResult:
        t0 = time.perf_counter()
        inputs = self.build_inputs(image, task)
        budget = self.budget(task, max_new_tokens)
        emit(RegionStarted(region_id, page, task, self.name, int(inputs["input_ids"].shape[1]), budget,
                           stop_ids=[int(t) for t in self.stop_ids]))
        if cancel is not None and cancel.cancelled:
            return self._finish(region_id, [], None, "cancelled", emit, t0)
        decoded = self.decode_inputs(inputs, region_id=region_id, emit=emit, cancel=cancel, budget=budget,
                                     draft_hook=draft_hook)
        return self._finish(region_id, decoded.tokens, decoded.stats, decoded.stopped, emit, t0, decoded.logprobs)

    def decode_batch(self, crops: Sequence[RegionCrop], *, emit: Emit = no_emit, cancel: CancelToken | None = None,
                     max_new_tokens: int | None = None) -> list[RegionResult]:
        """Decode several regions (at most `batch_size` at a time) and return their results in order. The tokens are
        those `decode_region` gives each crop alone; every region gets its RegionStarted, its TokensCommitted (the
        regions' steps interleaved) and its RegionFinished, as from decode_region."""
        if self.batch_size <= 1:
            return [self.decode_region(c.image, c.task, region_id=c.region_id, page=c.page, emit=emit, cancel=cancel,
                                       max_new_tokens=max_new_tokens) for c in crops]
        results: list[RegionResult] = []
        for start in range(0, len(crops), self.batch_size):
            results += self._decode_one_batch(crops[start:start + self.batch_size], emit, cancel, max_new_tokens)
        return results

    def _decode_one_batch(self, crops: Sequence[RegionCrop], emit: Emit, cancel, max_new_tokens) -> list[RegionResult]:
        from app.core.decoding.autoregressive import prefill
        from app.core.decoding.batch import batch_ar_decode, batch_selfspec_decode

        t0 = time.perf_counter()
        prefixes, budgets = [], []
        for crop in crops:
            inputs = self.build_inputs(crop.image, crop.task)
            budgets.append(self.budget(crop.task, max_new_tokens))
            emit(RegionStarted(crop.region_id, crop.page, crop.task, self.name, int(inputs["input_ids"].shape[1]),
                               budgets[-1], stop_ids=[int(t) for t in self.stop_ids]))
            if cancel is not None and cancel.cancelled:
                break
            prefixes.append(prefill(self.model, inputs))
        if len(prefixes) < len(crops):  # cancelled while prefilling: nothing decoded
            return [self._finish(c.region_id, [], None, "cancelled", emit, t0) for c in crops]
        listening = emit is not no_emit
        streams = [TextStream(self.tokenizer) for _ in crops]
        if self.mode == "selfspec":
            def on_round(row: int, rnd) -> None:
                emit(round_verified(crops[row].region_id, rnd, streams[row].push(rnd.new_tokens, final=rnd.final),
                                    self.token_texts, block_size=self.block_size))

            decoded = batch_selfspec_decode(self.model, prefixes, mask_id=self.mask_id, block_size=self.block_size,
                                            stop_ids=self.stop_ids, budgets=budgets, cancel=cancel,
                                            on_round=on_round if listening else None, runner=self._runner,
                                            inspect=self.inspect if listening else None)
        else:
            def on_token(row: int, step: int, token: int, ms: float, cache_len: int) -> None:
                final = token in self.stop_ids or step + 1 >= budgets[row]
                emit(tokens_committed(crops[row].region_id, step, token, streams[row].push([token], final=final), ms,
                                      cache_len, self.token_texts))

            decoded = batch_ar_decode(self.model, prefixes, stop_ids=self.stop_ids, budgets=budgets, cancel=cancel,
                                      on_token=on_token if listening else None, runner=self._runner)
        return [self._finish(crop.region_id, d.tokens, d.stats, d.stopped, emit, t0, d.logprobs, batch=len(crops),
                             cache="static") for crop, d in zip(crops, decoded)]

    def decode_inputs(self, inputs: dict[str, Any], *, region_id: str, emit: Emit, cancel: CancelToken | None,
                      budget: int, numbering: Numbering = Numbering(), draft_hook=None):
        """The decode itself: its rounds (or AR tokens) as events of `region_id`, numbered on from `numbering`;
        no RegionStarted/RegionFinished (whoever reads the region frames it). Returns the decoder's result."""
        from app.core.decoding.autoregressive import ar_decode, prefill

        stream = TextStream(self.tokenizer)
        lead = [numbering.lead]

        def piece(text: str) -> str:
            if text and lead[0]:
                text, lead[0] = lead[0] + text, ""
            return text

        prefix = prefill(self.model, inputs)
        if self.cache == "static":
            from app.core.decoding.static_cache import to_static

            prefix = to_static(self.model, prefix, budget=budget, block_size=self.block_size, runner=self._runner)
        listening = emit is not no_emit  # nobody listens: no event, no token text is built
        if self.mode == "selfspec":
            from app.core.decoding.selfspec import selfspec_decode

            def on_round(rnd) -> None:
                emit(round_verified(region_id, rnd, piece(stream.push(rnd.new_tokens, final=rnd.final)),
                                    self.token_texts, block_size=self.block_size, first_round=numbering.round,
                                    tokens_before=numbering.tokens))

            return selfspec_decode(self.model, prefix, mask_id=self.mask_id, block_size=self.block_size,
                                   stop_ids=self.stop_ids, max_new_tokens=budget,
                                   on_round=on_round if listening else None, cancel=cancel, draft_hook=draft_hook,
                                   inspect=self.inspect if listening else None)

        def on_token(step: int, token: int, ms: float, cache_len: int) -> None:
            final = token in self.stop_ids or step + 1 >= budget
            emit(tokens_committed(region_id, step + numbering.step, token, piece(stream.push([token], final=final)),
                                  ms, cache_len, self.token_texts))

        return ar_decode(self.model, prefix, stop_ids=self.stop_ids, max_new_tokens=budget,
                         on_token=on_token if listening else None, cancel=cancel)

    def text_of(self, tokens: Sequence[int]) -> str:
        """The region text of decoded tokens (stop ids dropped, then `clean_text`)."""
        body = [t for t in tokens if t not in self.stop_ids]
        return clean_text(self.tokenizer.decode(body, skip_special_tokens=True))

    def _finish(self, region_id, tokens, stats, stopped, emit, t0, logprobs=(), **extra: Any) -> RegionResult:
        text = self.text_of(tokens)
        info = stats.to_dict() if stats is not None else {}
        info.update(engine=self.name, stopped=stopped, request_ms=(time.perf_counter() - t0) * 1e3,
                    device=self.device, dtype=self.dtype, cache=self.cache, compiled=self.compiled)
        info.update(extra)
        cancelled = stopped == "cancelled"
        emit(RegionFinished(region_id, text, info, cancelled, list(tokens), list(logprobs)))
        return RegionResult(region_id, text, list(tokens), info, cancelled, logprobs=list(logprobs))

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        """Each token's own text (special tokens spelled out), for the events; decoded once per id and kept (a
        round's 2(B+1) ids are mostly ids seen before)."""
        texts, missing = self._texts, [int(i) for i in ids if int(i) not in self._texts]
        if missing:
            unique = list(dict.fromkeys(missing))
            texts.update(zip(unique, self.tokenizer.batch_decode([[i] for i in unique], skip_special_tokens=False)))
        return [texts[int(i)] for i in ids]

    def close(self) -> None:
        """Drop the model (frees GPU memory once nothing else holds it)."""
        self.model = self.loaded = None  # type: ignore[assignment]


def _open(mode: str, *, manifest: str = "gravityocr", engine: str = "", model_path=None, device=None, dtype=None,
          block_size: int | None = None, max_new_tokens: int | None = None, loaded: "LoadedModel | None" = None,
          attn_implementation: str = "sdpa", cache: str = "auto", compile: bool | None = None,
          **_ignored: Any) -> GlmOcrEngine:
    if loaded is None:
        from app.core.checkpoints.loader import load_model

        try:
            loaded = load_model(manifest or "gravityocr", model_path, device=device, dtype=dtype,
                                attn_implementation=attn_implementation)
        except ModelError as exc:
            raise ModelUnavailable(str(exc)) from exc
    name = engine or ("gravity" if mode == "selfspec" else "gravity-ar")
    return GlmOcrEngine(loaded, name=name, mode=mode, block_size=int(block_size or 0), max_new_tokens=max_new_tokens,
                        cache=cache or "auto", compile=compile)


def open_selfspec(**options: Any) -> GlmOcrEngine:
    """GravityOCR self-speculative engine. Options: manifest, engine, model_path, device, dtype, block_size
    (default: the checkpoint's bd_size), max_new_tokens (default: per task), loaded (share a LoadedModel), cache
    ("auto" | "dynamic" | "static": the KV cache the decoders use; auto = static on CUDA, dynamic elsewhere),
    compile (torch.compile the static-cache forwards, CUDA graphs on CUDA; default: on CUDA with the static cache)."""
    return _open("selfspec", **options)


def open_ar(**options: Any) -> GlmOcrEngine:
    """Greedy autoregressive engine for GravityOCR or GLM-OCR checkpoints (same options as open_selfspec)."""
    return _open("ar", **options)


# registrations (pyproject's scriptorium.engines entry points name them)
GRAVITY = EngineSpec("gravity", "GravityOCR, self-speculative", "region",
                     "app.core.engines.glm_engine:open_selfspec", "gravityocr", "rounds")
GRAVITY_AR = EngineSpec("gravity-ar", "GravityOCR, autoregressive", "region",
                        "app.core.engines.glm_engine:open_ar", "gravityocr", "")
GLM = EngineSpec("glm", "GLM-OCR, autoregressive", "region", "app.core.engines.glm_engine:open_ar", "glm-ocr",
                 "")

