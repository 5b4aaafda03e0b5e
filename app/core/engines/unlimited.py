"""The Unlimited-OCR document engine: whole pages, or a whole PDF, in ONE R-SWA generation (docs/architecture.md, The
R-SWA window).

One page → gundam mode (1024 global view + 640 tiles), prompt `<image>document parsing.`, n-gram window 128.
Several pages → base mode (one 1024 view per page, one `<image>` each), prompt `<image>…<image>Multi page parsing.`,
n-gram window 1024. BOS is prepended, there is no chat markup, `no_repeat_ngram_size` is 35.

Pages are preprocessed and run through the vision tower one at a time (a `PageEncoded` per page; vision memory stays
bounded by one page), their features are put into the prefix embeddings, and the decoder runs over the pinned
prefix with the model's reference-sliding-window cache (`rswa.RswaDecoder`, static by default: no per-step prefix
copy). Prompt + output must fit in 32,768 tokens: a document whose prefix leaves too little room is refused before
any page is encoded, with a message that says how many pages fit.

Events: PhaseChanged (encoding / decoding / assembling), PageEncoded per page, RegionStarted + PrefixLaid for the
generation (region id "doc"), WindowStepped per step (or every `events_every` steps), NgramBanned when the n-gram
blocker changes the greedy choice, LayoutDone (the page's regions so far, source "unlimited") and RegionFinished
per region as blocks complete, and last RegionFinished for "doc" with the raw output and the stats. Region ids are
the layout pipeline's, for the document's page numbers when `pages` carries `indices` (as the pipeline's lazy page
sequence does). The caller (pipeline / worker) owns RunStarted/RunFinished/RunCancelled and PageFinished; a
cancelled run returns what was read so far with `cancelled=True` (the last region flagged cancelled). LayoutDone
boxes are in pixels of the page images given (e.g. 300 DPI); inside the pipeline they never reach a listener as
they are: app.core.pipeline.document_engine converts them to the page view's coordinates. Each region carries its offsets
in the raw output (`extra["raw_span"]`, `extra["raw_text_span"]`), the text the window events stream.

What must never live here: Qt, file writing, PDF rendering (pages arrive as PIL images).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from app.core.record import events as ev
from app.core.engines.base import BlocksCallback, DocumentResult, Emit, no_blocks, no_emit
from app.core.engines.unlimited_live import LiveRegions
from app.core.engines.spec import EngineSpec
from app.core.base.cancel import CancelToken
from app.core.engines.unlimited_output import DET_OPEN, PAGE_MARK
from app.core.base.wording import count

DOC_REGION = "doc"  # region id of the one generation that reads the whole document (window events carry it)
MAX_TOTAL_TOKENS = 32768  # prompt + output, the authors' max_length
SINGLE_PROMPT = "document parsing."
MULTI_PROMPT = "Multi page parsing."
NGRAM_SIZE = 35
NGRAM_WINDOW_SINGLE = 128
NGRAM_WINDOW_MULTI = 1024


class DocumentTooLong(ValueError):
    """The document's prompt does not leave room for the output within the token budget (message for a person)."""


@dataclass
class PagePlan:
    """What one page costs in the prefix, known before any encoding."""

    index: int
    width: int
    height: int
    tokens: int
    grid: tuple[int, int]  # tiles (columns, rows); (1, 1) with no tiles
    tiles: int


def plan_page(processor, index: int, width: int, height: int, crop: bool) -> PagePlan:
    """A page's image-token count by the processor's own formula (tiling as its image processor would tile), without
    preprocessing the image: the budget is checked before anything is rendered or encoded."""
    from transformers.models.unlimited_ocr.image_processing_unlimited_ocr import get_optimal_tiled_canvas

    ip = processor.image_processor
    tile = int(ip.tile_size)
    grid, tiles = (1, 1), 0
    if crop and max(width, height) > tile:
        grid = tuple(get_optimal_tiled_canvas((height, width), (tile, tile), ip.min_patches, ip.max_patches))
        tiles = grid[0] * grid[1]
    fake = {"patches_grid": [list(grid)], "num_local_patches": [tiles]}
    n = len(processor.replace_image_token(fake, 0)) // len(processor.image_token)
    return PagePlan(index, width, height, n, grid, tiles)  # type: ignore[arg-type]


class Detokenizer:
    """Incremental decode: the text each new token adds, holding back partial UTF-8 bytes (byte-level BPE), with a
    bounded cost per token (it re-decodes only since the last committed point)."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.tokens: list[int] = []
        self._start = 0  # first token of the uncommitted chunk
        self._chunk = ""  # text already emitted for tokens[_start:]
        self._held = 0  # token count at the last emission
        # the deltas so far, joined when `text` is read: `self.text += delta` would copy the whole text at every
        # token (CPython's in-place concatenation does not apply to attributes), quadratic over a 32K-token output
        self._pieces: list[str] = []

    @property
    def text(self) -> str:
        """All the text emitted so far."""
        if len(self._pieces) > 1:
            self._pieces[:] = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def push(self, token: int) -> str:
        self.tokens.append(int(token))
        s = self.tokenizer.decode(self.tokens[self._start:], skip_special_tokens=False)
        if s.endswith("\ufffd") and len(self.tokens) - self._held < 4:
            return ""  # an incomplete character: wait for the next byte(s) (not forever: invalid bytes stay "�")
        self._held = len(self.tokens)
        common = len(os.path.commonprefix([s, self._chunk]))
        delta = s[max(common, len(self._chunk)):] if common == len(self._chunk) else s[common:]
        self._chunk = s
        if delta:
            self._pieces.append(delta)
        if "\n" in delta or len(self.tokens) - self._start >= 32:
            self._start, self._chunk = len(self.tokens), ""
        return delta


class UnlimitedEngine:
    kind = "document"
    concurrency = 1

    def __init__(self, loaded, *, name: str = "unlimited", mode: str = "auto", cache: str = "static",
                 max_total_tokens: int = MAX_TOTAL_TOKENS, max_new_tokens: int | None = None,
                 ngram_size: int = NGRAM_SIZE, ngram_window: int | None = None, min_output_tokens: int = 256,
                 prefill_chunk: int | None = None, events_every: int = 1, dpi: float = 72.0,
                 keep_headers: bool = False) -> None:
        if mode not in ("auto", "gundam", "base"):
            raise ValueError(f"mode must be auto, gundam or base, not {mode!r}")
        self.loaded = loaded
        self.model = loaded.model
        self.processor = loaded.processor
        self.tokenizer = loaded.tokenizer
        self.name = name
        self.mode = mode
        self.cache = cache
        self.max_total_tokens = int(max_total_tokens)
        self.max_new_tokens = max_new_tokens
        self.ngram_size = int(ngram_size)
        self.ngram_window = ngram_window
        self.min_output_tokens = int(min_output_tokens)
        self.prefill_chunk = prefill_chunk
        self.events_every = max(1, int(events_every))
        self.dpi = float(dpi)
        self.device = str(loaded.device)
        self.input_dpi = 300.0  # what the pipeline renders pages at for this engine (the authors' PDF setting)
        self.keep_headers = keep_headers
        cfg = self.model.config
        self.image_token_id = int(cfg.image_token_id)
        self.window = int(cfg.get_text_config().sliding_window)
        gen = getattr(self.model, "generation_config", None)
        eos = getattr(gen, "eos_token_id", None) if gen is not None else None
        if eos is None:
            eos = cfg.get_text_config().eos_token_id
        self.eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        bos = self.tokenizer.bos_token_id
        self.bos_id = int(bos if bos is not None else cfg.get_text_config().bos_token_id)

    # --- planning ---------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Drop the model (frees GPU memory once nothing else holds it)."""
        self.model = self.loaded = None  # type: ignore[assignment]

    def crop_for(self, n_pages: int) -> bool:
        """Gundam (tiles) for a single page in auto mode; base mode for several pages (the authors' choice)."""
        return self.mode == "gundam" or (self.mode == "auto" and n_pages == 1)

    def prompt_for(self, n_pages: int) -> str:
        return SINGLE_PROMPT if n_pages == 1 else MULTI_PROMPT

    def plan_page(self, index: int, width: int, height: int, crop: bool) -> PagePlan:
        return plan_page(self.processor, index, width, height, crop)

    def prompt_ids(self, n_pages: int) -> list[int]:
        return list(self.tokenizer(self.prompt_for(n_pages), add_special_tokens=False)["input_ids"])

    def check_budget(self, plans: Sequence[PagePlan]) -> tuple[int, int]:
        """(prefix length, output budget); raises DocumentTooLong with a message that says what fits."""
        prompt = len(self.prompt_ids(len(plans)))
        image = sum(p.tokens for p in plans)
        prefix = 1 + image + prompt
        room = self.max_total_tokens - prefix
        budget = room if self.max_new_tokens is None else min(room, int(self.max_new_tokens))
        if room < self.min_output_tokens:
            per_page = max(1, math.ceil(image / max(1, len(plans))))
            fit = max(0, (self.max_total_tokens - self.min_output_tokens - 1 - prompt) // per_page)
            raise DocumentTooLong(
                f"This document does not fit Unlimited-OCR's budget: its {count(len(plans), 'page')} need {prefix:,} prompt "
                f"tokens ({image:,} image tokens, about {per_page:,} per page, plus {prompt + 1} for the prompt), "
                f"and prompt + output may not exceed {self.max_total_tokens:,} tokens, which leaves {max(0, room):,} "
                f"for the text (at least {self.min_output_tokens:,} needed). Read it in parts of at most {fit} "
                "pages, or choose a layout + region engine."
            )
        return prefix, max(1, budget)

    # --- encoding ---------------------------------------------------------------------------------------------

    def encode_page(self, image, plan: PagePlan, crop: bool):
        """Preprocess and encode one page; returns its (tokens, hidden) features."""
        import torch

        device, dtype = self.loaded.device, self.loaded.dtype
        inputs = self.processor.image_processor(images=[image], crop_to_patches=crop, return_tensors="pt")
        local = inputs.get("pixel_values_local")
        with torch.inference_mode():
            out = self.model.model.get_image_features(
                pixel_values=inputs["pixel_values"].to(device, dtype),
                pixel_values_local=local.to(device, dtype) if local is not None else None,
                num_local_patches=list(inputs["num_local_patches"]),
                patches_grid=[list(g) for g in inputs["patches_grid"]],
            )
        feats = out.pooler_output[0]
        if feats.shape[0] != plan.tokens:
            raise RuntimeError(f"page {plan.index + 1}: the vision tower gave {feats.shape[0]} features for "
                               f"{plan.tokens} image tokens")
        return feats

    def build_prefix(self, plans: Sequence[PagePlan], features: Sequence[Any], numbers: Sequence[int] | None = None):
        """(prefix ids, prefix embeddings, segments): BOS, each page's image tokens, the prompt. Image segments name
        the document page (`numbers[i]`, default i)."""
        import torch

        prompt = self.prompt_ids(len(plans))
        ids = [self.bos_id]
        segments = [{"kind": "bos", "label": "BOS", "start": 0, "end": 1}]
        for plan in plans:
            start = len(ids)
            ids += [self.image_token_id] * plan.tokens
            page = numbers[plan.index] if numbers is not None else plan.index
            segments.append({"kind": "image", "label": f"page {page + 1}", "start": start, "end": len(ids),
                             "page": page, "tiles": plan.tiles, "grid": list(plan.grid)})
        start = len(ids)
        ids += prompt
        segments.append({"kind": "prompt", "label": self.prompt_for(len(plans)), "start": start, "end": len(ids)})
        device = self.loaded.device
        with torch.inference_mode():
            t = torch.tensor([ids], device=device)
            embeds = self.model.get_input_embeddings()(t)
            mask = t[0] == self.image_token_id
            embeds[0, mask] = torch.cat(list(features), dim=0).to(embeds.dtype)
        return ids, embeds, segments

    # --- the run ----------------------------------------------------------------------------------------------

    def decode_document(self, pages: Sequence[Any], *, emit: Emit = no_emit, cancel: CancelToken | None = None,
                        on_blocks: BlocksCallback = no_blocks) -> DocumentResult:
        """Read `pages` in one generation: plan and check the token budget, encode every page, generate over the
        pinned prefix while handing over blocks as they complete, then parse the output into regions."""
        cancel = cancel or CancelToken()
        t_run = time.perf_counter()
        n = len(pages)
        if n == 0:
            return DocumentResult(regions=[], raw_text="", stats={"pages": 0})
        numbers = _page_numbers(pages)
        crop = self.crop_for(n)
        plans = [self.plan_page(i, w, h, crop) for i, (w, h) in enumerate(_page_sizes(pages))]
        self.check_budget(plans)  # before any page is rendered or encoded (DocumentTooLong: the caller reports it)
        encoded = self._encode_pages(pages, plans, crop, numbers, emit, cancel)
        if encoded is None:  # the caller reports the cancelled run (RunCancelled); no page is half-read
            return DocumentResult(regions=[], raw_text="", stats={"pages": n, "stop": "cancelled"}, cancelled=True)
        features, sizes, dpis = encoded
        prefix_len, budget = self.check_budget(plans)
        ids, embeds, segments = self.build_prefix(plans, features, numbers)
        del features
        assert len(ids) == prefix_len, (len(ids), prefix_len)
        live = LiveRegions(self.keep_headers, n, sizes, dpis, numbers, emit, on_blocks)
        run = self._generate(ids, embeds, segments, budget, n, live, emit, cancel)

        emit(ev.PhaseChanged("assembling", "parsing the output into regions"))
        out_tokens = [t for t in run.tokens if t not in self.eos_ids]
        raw = self.tokenizer.decode(out_tokens, skip_special_tokens=False)
        regions = live.update(raw, final=True, cancelled=run.stop == "cancelled")
        if run.stop == "budget":
            emit(ev.ErrorRaised(
                message=(f"The output reached the {self.max_total_tokens:,}-token budget (prompt {prefix_len:,} + "
                         f"output {len(out_tokens):,}) before the model finished; pages after page "
                         f"{max(1, raw.count(PAGE_MARK))} may be missing. Read the document in smaller parts."),
                where=self.name, region_id=DOC_REGION, fatal=False))
        stats = run.stats(self, n, crop, prefix_len, budget, len(out_tokens), time.perf_counter() - t_run)
        stats["malformed"] = sum(1 for r in regions if "malformed" in r.flags)
        # the generation itself is finished (the window view closes its stream; no block has this id)
        emit(ev.RegionFinished(region_id=DOC_REGION, text=raw, stats=stats, cancelled=run.stop == "cancelled",
                               tokens=list(run.tokens)))
        return DocumentResult(regions=regions, raw_text=raw, stats=stats, cancelled=run.stop == "cancelled")

    def _encode_pages(self, pages, plans: list[PagePlan], crop: bool, numbers: list[int], emit: Emit,
                      cancel: CancelToken):
        """Pages through the vision tower, one at a time (each rendered only now, when the sequence renders lazily).
        Returns (features, sizes, dpis), or None when cancelled between two pages."""
        n = len(plans)
        features, sizes, dpis = [], [], []
        for plan in plans:
            if cancel.cancelled:
                return None
            emit(ev.PhaseChanged("encoding", f"page {plan.index + 1} of {n}", plan.index + 1, n))
            t0 = time.perf_counter()
            image = pages[plan.index]
            if (image.width, image.height) != (plan.width, plan.height):  # the estimate was off: plan the real one
                plans[plan.index] = plan = self.plan_page(plan.index, image.width, image.height, crop)
            sizes.append((image.width, image.height))
            dpis.append(self._dpi_of(image, pages))
            features.append(self.encode_page(image.convert("RGB"), plan, crop))
            emit(ev.PageEncoded(page=numbers[plan.index], tokens=plan.tokens, ms=(time.perf_counter() - t0) * 1000.0))
        return features, sizes, dpis

    def _generate(self, ids, embeds, segments, budget: int, n_pages: int, live: "LiveRegions", emit: Emit,
                  cancel: CancelToken) -> "_Generation":
        """One generation over the pinned prefix, streaming window events and handing over completed blocks."""
        from app.core.decoding.rswa import KVGeometry, RswaDecoder

        prefix_len = len(ids)
        geo = KVGeometry.of(self.model, self.loaded.dtype)
        emit(ev.PhaseChanged("decoding", f"{count(n_pages, 'page')}, prefix {prefix_len:,} tokens, up to {budget:,} new"))
        emit(ev.RegionStarted(region_id=DOC_REGION, page=0, task="document", engine=self.name,
                              prompt_tokens=prefix_len, max_new_tokens=budget))
        emit(ev.PrefixLaid(region_id=DOC_REGION, prefix_len=prefix_len, window=self.window, segments=segments,
                           layers=geo.layers, kv_heads=geo.kv_heads, head_dim=geo.head_dim,
                           dtype_bytes=geo.dtype_bytes))
        ngram_window = self.ngram_window or (NGRAM_WINDOW_SINGLE if n_pages == 1 else NGRAM_WINDOW_MULTI)
        chunk = self.prefill_chunk if self.prefill_chunk is not None else (0 if self.loaded.device == "cpu" else 4096)
        decoder = RswaDecoder(self.model, cache=self.cache, eos_ids=self.eos_ids, max_new_tokens=budget,
                              ngram_size=self.ngram_size, ngram_window=ngram_window, prefill_chunk=chunk)
        run = _Generation(bpp=geo.bytes_per_position, ngram_window=ngram_window,
                          stop="max_new_tokens" if budget < self.max_total_tokens - prefix_len else "budget")
        detok = Detokenizer(self.tokenizer)
        pending_text, pending_ms = "", 0.0
        t_dec = time.perf_counter()
        steps = decoder.steps(embeds, ids, should_stop=lambda: cancel.cancelled)
        try:
            for step in steps:
                run.tokens.append(step.token)
                is_eos = step.token in self.eos_ids
                delta = "" if is_eos else detok.push(step.token)
                pending_text += delta
                pending_ms += step.ms
                if step.index == 0:
                    run.first_ms = step.ms
                for ban in step.bans:
                    run.bans += 1
                    emit(ev.NgramBanned(region_id=DOC_REGION, step=step.index, token=ban.token,
                                        ngram_start=ban.ngram_start - prefix_len,
                                        text=self.tokenizer.decode([ban.token], skip_special_tokens=False)))
                w = step.window
                if w is not None and (step.index % self.events_every == 0 or is_eos):
                    emit(ev.WindowStepped(
                        region_id=DOC_REGION, step=step.index, token=step.token, text=pending_text,
                        prefix_len=w.prefix_len, decoded=step.index + 1, attended=w.attended, evicted=w.evicted,
                        cache_positions=w.cache_positions, cache_bytes=w.cache_positions * run.bpp,
                        full_positions=w.full_positions, full_bytes=w.full_positions * run.bpp, ms=pending_ms))
                    pending_text, pending_ms = "", 0.0
                if DET_OPEN in delta or PAGE_MARK in delta:
                    live.update(detok.text, final=False)
                if is_eos or cancel.cancelled:
                    run.stop = "eos" if is_eos else "cancelled"
                    break
            else:
                if not run.tokens and cancel.cancelled:  # stopped between prefill chunks
                    run.stop = "cancelled"
        finally:
            steps.close()  # detaches the observer
        run.decode_s = time.perf_counter() - t_dec
        decoder.release()
        return run

    def _dpi_of(self, image, pages=None) -> float:
        """The page image's resolution: its own `dpi` info, else the page sequence's `dpi`, else the option."""
        dpi = getattr(image, "info", {}).get("dpi") or getattr(pages, "dpi", None)
        if isinstance(dpi, (tuple, list)) and dpi:
            dpi = dpi[0]
        try:
            return float(dpi) if dpi else self.dpi
        except (TypeError, ValueError):
            return self.dpi


def _page_numbers(pages) -> list[int]:
    """Document page numbers (0-based) of `pages`: the pipeline's lazy page sequence carries `indices`."""
    indices = getattr(pages, "indices", None)
    return [int(i) for i in indices] if indices is not None and len(indices) == len(pages) else list(range(len(pages)))


def _page_sizes(pages) -> list[tuple[int, int]]:
    """Pixel sizes of the pages, without rendering them when the sequence can tell (document + indices + dpi)."""
    doc, indices, dpi = (getattr(pages, k, None) for k in ("document", "indices", "dpi"))
    if doc is not None and indices is not None and dpi and hasattr(doc, "page_size_px"):
        return [tuple(doc.page_size_px(i, dpi)) for i in indices]  # type: ignore[misc]
    return [(img.width, img.height) for img in pages]


@dataclass
class _Generation:
    """What one generation produced and how it went."""

    bpp: int  # KV bytes per cached position
    ngram_window: int
    stop: str  # eos | max_new_tokens | budget | cancelled
    tokens: list[int] = field(default_factory=list)
    bans: int = 0
    first_ms: float = 0.0
    decode_s: float = 0.0

    def stats(self, engine: "UnlimitedEngine", pages: int, crop: bool, prefix_len: int, budget: int, n_out: int,
              run_s: float) -> dict[str, Any]:
        return {
            "engine": engine.name, "pages": pages, "mode": "gundam" if crop else "base", "prefix_len": prefix_len,
            "output_tokens": n_out, "budget": budget, "window": engine.window, "cache": engine.cache,
            "ngram_window": self.ngram_window, "ngram_bans": self.bans, "stop": self.stop,
            "cache_positions_max": prefix_len + engine.window,
            "cache_bytes_max": (prefix_len + engine.window) * self.bpp,
            "full_bytes_at_end": (prefix_len + n_out) * self.bpp,
            "first_token_ms": self.first_ms, "decode_s": self.decode_s,
            "tokens_per_s": (n_out - 1) / max(1e-9, self.decode_s - self.first_ms / 1000.0) if n_out > 1 else 0.0,
            "run_s": run_s,
        }


def open_engine(*, manifest: str = "unlimited-ocr", engine: str = "unlimited", model_path=None, device=None,
                dtype=None, loaded=None, **options: Any) -> UnlimitedEngine:
    """Load Unlimited-OCR (or reuse `loaded`, a LoadedModel) and return the document engine. Options: mode
    (auto|gundam|base), cache (static|dynamic), max_total_tokens, max_new_tokens, ngram_size, ngram_window,
    min_output_tokens, prefill_chunk, events_every, dpi, keep_headers; unknown options are ignored."""
    from app.core.checkpoints.loader import load_model

    if loaded is None:
        loaded = load_model(manifest or "unlimited-ocr", model_path, device=device, dtype=dtype)
    known = {"mode", "cache", "max_total_tokens", "max_new_tokens", "ngram_size", "ngram_window",
             "min_output_tokens", "prefill_chunk", "events_every", "dpi", "keep_headers"}
    return UnlimitedEngine(loaded, name=engine or "unlimited",
                           **{k: v for k, v in options.items() if k in known and v is not None})


# its registration (pyproject's scriptorium.engines entry points name it)
UNLIMITED = EngineSpec("unlimited", "Unlimited-OCR, whole document (R-SWA)", "document",
                       "app.core.engines.unlimited:open_engine", "unlimited-ocr", "window")

