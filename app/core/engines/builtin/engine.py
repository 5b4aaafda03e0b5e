"""The built-in line reader as a region engine (registry name "builtin").

A region image is cut into text lines by RapidOCR's PP-OCRv6 detector (the line boxes the classic engine finds;
multi-column and skewed text included), each line crop is read by the PP-OCRv6 recogniser (ONNX), and the built-in
decoder (a small GlmOcr text decoder, app.core.engines.builtin.reader) turns the recogniser's reading into the line's text
with the app's own decoders: self-speculative by default (`mode="ar"` for the greedy AR baseline). Lines decode one
after another; their events carry the region's id and continue its numbering (round / step indices and output
lengths continue across lines), so the rounds view shows one region, framed by one RegionStarted and one
RegionFinished (with the merged stats and the per-line figures). Pieces of one visual row are joined by a space,
rows by a space (one paragraph, as the classic engine joins them); a table region becomes an HTML table of the
rows' pieces (the classic engine's layout, read by the built-in model); a formula region is read as plain text.

`decode_lines` reads line boxes another step already found (the layout's OCR on a scanned page: one detection pass
per page) through the same recogniser and decoder. On a Latin page the recogniser's CJK classes are masked
(app.core.rapid.script_mask, as in the classic engine). A line or region cut at its token budget says so:
`stopped: "max_new_tokens"` and `truncated` in the stats (app.core.pipeline.quality), never "done".

A line whose reading holds a character the decoder cannot write (outside a first-version model's 300 characters:
Chinese, Japanese, most symbols) is not decoded: the engine takes the recogniser's own reading of it, its
confidences as the line's probabilities, no rounds, and says so (`fallback: "recogniser"` in the line's stats,
`fallback_lines` in the region's). A line whose decoded text differs from the recogniser's reading is marked
`disagrees` (the region counts them in `disagreements`), so the review flow can find where the decoder overruled it.

Before the decoder reads a line, each crop's contrast is stretched for the recogniser, and the Latin words the
recogniser was unsure of are settled by how common each candidate word is (app.core.engines.builtin.lexicon: only
its own alternatives at unsure characters); such a line keeps the recogniser's reading (`recogniser`) and the words
changed (`words_settled`, counted per region), and its block needs review.

The checkpoint is looked for in the user's model folder (<data>/models/builtin) and in the bundled models/builtin/
(the package's `open_engine`).
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Sequence

from app.core.engines.builtin.arbiter import arbitrate
from app.core.engines.builtin.lexicon import settle_reading
from app.core.engines.builtin.line_boxes import group_rows, padded_apart
from app.core.engines.builtin.page_lines import detect, detector, known_rows, read_page_lines
from app.core.engines.builtin.sure_lines import kept_line, skips
from app.core.engines.builtin.ahead import Ahead
from app.core.engines.builtin.routed import reader_stats, reading_rows, route_region, routed_line
from app.core.scripts.router import Routed, ScriptRouter
from app.core.text.tables import from_rows
from app.core.text.hyphens import join_lines
from app.core.engines.base import Emit, RegionResult, no_emit
from app.core.base.cancel import CancelToken
from app.core.base.threads import cpu_threads
from app.core.rapid.script_mask import ScriptMask
from app.core.decoding.inspector import InspectOptions
from app.core.decoding.round_events import round_verified, tokens_committed
from app.core.text.textcheck import MIN_LINE_COVERAGE, line_coverage
from app.core.record.events import RegionFinished, RegionStarted, TokensCommitted

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image

PAD = 24  # white pixels around a crop before detection (text touching the edge is detected poorly)
MAX_LINE_TOKENS = 256


class ReaderEngine:
    """RapidOCR's detector and recogniser + the built-in decoder, one region at a time."""

    kind = "region"
    concurrency = 1
    title = "Built-in model (PP-OCRv6 recogniser + GlmOcr decoder, self-speculative)"
    input_dpi = 200.0  # crops are rendered at this DPI (10-pt text: lines about 28 px high)

    def __init__(self, folder: str | os.PathLike, *, name: str = "builtin", mode: str = "selfspec",
                 device: str | None = None, block_size: int | None = None, threads: int | None = None,
                 max_new_tokens: int | None = None, decoder: str = "always") -> None:
        import torch

        from app.core.engines.builtin.reader import PrefixCodec, load_reader
        from app.core.rapid.recogniser import Recogniser

        self.name = name
        self.mode = mode
        self.device = "cpu" if device in (None, "", "auto") else str(device)
        if self.device != "cpu" and not (self.device.startswith("cuda") and torch.cuda.is_available()):
            self.device = "cpu"
        self.model_path = str(folder)
        self.model, self.tokenizer, self.bd = load_reader(folder, device=self.device)
        self.dtype = str(self.model.dtype).replace("torch.", "")
        self.codec = PrefixCodec(self.tokenizer)
        self.stop_ids = [int(t) for t in self.model.generation_config.eos_token_id]
        self.mask_id = int(self.bd["mask_id"])
        self.block_size = int(block_size or self.bd["bd_size"]) if mode == "selfspec" else 0
        self.max_new_tokens = max_new_tokens
        self.decoder = decoder  # which lines the decoder reads: always | unsure | never (sure_lines.py)
        self.inspect = InspectOptions.from_env()  # the reject inspector in RoundVerified while someone listens (None: never)
        self.script = ScriptMask()  # the page's script: Latin pages read no CJK class
        threads = threads or cpu_threads() or min(2, os.cpu_count() or 1)  # cpu_threads: a --jobs share
        self.recogniser = Recogniser(threads=threads, mask=self.script, stretch=True)
        self._det = None
        self.router = ScriptRouter()  # lines in scripts the recogniser cannot read: another recogniser's
        self.ahead = Ahead()  # lines decoded while their page was laid out (ahead.py)
        self._page: int | None = None
        vocab = self.tokenizer.get_vocab()
        self._texts = {i: (t if len(t) == 1 else "") for t, i in vocab.items()}
        self._names = {i: t for t, i in vocab.items()}

    # --- lines -------------------------------------------------------------------------------------------------

    def find_lines(self, image: "Image.Image"):
        """(box, crop) per detected text piece, grouped in rows: [[(box, crop), ...], ...]; box in region pixels."""
        import numpy as np
        from PIL import ImageOps

        if image.width < 4 or image.height < 4:
            return []
        self._det = self._det or detector()
        padded = np.asarray(ImageOps.expand(image.convert("RGB"), border=PAD, fill=(255, 255, 255)))
        res = self._det(padded, use_det=True, use_cls=False, use_rec=False)
        quads = getattr(res, "boxes", None)
        if quads is None or len(quads) == 0:
            return []
        from rapidocr.utils.process_img import get_rotate_crop_image

        boxes, crops = [], []
        for q in quads:
            q = np.asarray(q, dtype=np.float32)
            xs, ys = q[:, 0] - PAD, q[:, 1] - PAD
            boxes.append((float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())))
            crop = get_rotate_crop_image(padded, q.copy())
            if crop.shape[0] * 1.0 / max(1, crop.shape[1]) >= 1.5:  # a vertical piece: read it rotated, as RapidOCR
                crop = np.rot90(crop)
            crops.append(np.ascontiguousarray(crop[..., ::-1]))  # RGB -> BGR for the recogniser
        return [[(tuple(round(v, 1) for v in boxes[i]), crops[i]) for i in row] for row in group_rows(boxes)]

    def given_lines(self, image: "Image.Image", lines: Sequence[Sequence[float]]):
        """(box, crop) per given line box (x0, y0, x1, y1 in region pixels), grouped in rows as `find_lines` groups
        its own; boxes outside the image or thinner than 4 px are left out."""
        import numpy as np

        rgb = np.asarray(image.convert("RGB"))
        boxes, crops = [], []
        for box in padded_apart(lines, image.width, image.height):
            crop = rgb[int(box[1]):int(round(box[3])), int(box[0]):int(round(box[2]))]
            if crop.shape[0] < 4 or crop.shape[1] < 4:
                continue
            if crop.shape[0] * 1.0 / crop.shape[1] >= 1.5:  # a vertical piece, as find_lines reads it
                crop = np.rot90(crop)
            boxes.append(box)
            crops.append(np.ascontiguousarray(crop[..., ::-1]))
        return [[(tuple(round(v, 1) for v in boxes[i]), crops[i]) for i in row] for row in group_rows(boxes)]

    read_page = read_page_lines  # a scanned page's lines, detected and read once (page_lines.py)
    detect_page = detect  # ... its detector boxes alone (to choose the scale it is read at before reading it)

    def start_page(self, page: int | None) -> None:
        """A new page starts a new script estimate (as the classic engine's)."""
        if page != self._page:
            self._page = page
            self.script.reset()
            self.router.reset()

    # --- decoding ----------------------------------------------------------------------------------------------

    def token_texts(self, ids: Sequence[int]) -> list[str]:
        return [self._names.get(int(i), "") for i in ids]

    def text_of(self, ids: Sequence[int]) -> str:
        return "".join(self._texts.get(int(i), "") for i in ids if int(i) not in self.stop_ids)

    def can_write(self, reading) -> bool:
        """Whether the decoder can write every character of the recogniser's reading (its vocabulary holds them)."""
        return all(ch in self.codec.char for ch in reading.chars)

    def fallback_line(self, reading, *, region_id: str, emit: Emit, offsets: dict, sep: str):
        """The recogniser's own reading of a line the decoder cannot write (a character outside its vocabulary):
        its text, its confidences as the line's probabilities, no rounds. Returns (stats, tokens, logprobs, text)."""
        import math

        text = reading.text
        ids = [int(self.codec.char.get(ch, self.codec.unk)) for ch in reading.chars]
        lps = [math.log(max(1e-6, min(1.0, float(p)))) for p in reading.conf]
        if text:
            emit(TokensCommitted(region_id, offsets["step"], ids, (sep + text) if sep else text, 0.0, 0,
                                 token_texts=list(reading.chars)))
        missing = sorted({ch for ch in reading.chars if ch not in self.codec.char})
        st = {"mode": "recogniser", "fallback": "recogniser", "recogniser": text, "text": text, "stopped": "done",
              "tokens": len(ids), "output_tokens": len(ids), "rounds": 0, "forwards": 0,
              "outside_vocab": "".join(missing[:32])}
        return st, ids, lps, text

    def read_line(self, reading, *, region_id: str, emit: Emit, offsets: dict, sep: str, budget: int,
                  cancel: CancelToken | None = None):
        """Decode one line from the recogniser's reading; events carry the region's running indices."""
        from app.core.decoding.autoregressive import ar_decode
        from app.core.engines.builtin.reader import prefill

        pending = {"sep": sep}

        def lead(text: str) -> str:
            if text and pending["sep"]:
                text, pending["sep"] = pending["sep"] + text, ""
            return text

        if self.mode == "selfspec":
            from app.core.decoding.selfspec import selfspec_decode

            def on_round(rnd) -> None:
                emit(round_verified(region_id, rnd, lead(self.text_of(rnd.new_tokens)), self.token_texts,
                                    block_size=self.block_size, first_round=offsets["round"],
                                    tokens_before=offsets["tokens"]))

            listening = emit is not no_emit
            ahead = self.ahead.take(self._page, reading, budget)  # decoded while the page was laid out (ahead.py)
            decoded = ahead.replay(on_round if listening else None) if ahead is not None else selfspec_decode(
                self.model, prefill(self.model, self.codec, reading), mask_id=self.mask_id,
                block_size=self.block_size, stop_ids=self.stop_ids, max_new_tokens=budget,
                on_round=on_round if listening else None, cancel=cancel, inspect=self.inspect if listening else None)
        else:
            def on_token(step: int, token: int, ms: float, cache_len: int) -> None:
                emit(tokens_committed(region_id, step + offsets["step"], token, lead(self.text_of([token])), ms,
                                      cache_len, self.token_texts))

            decoded = ar_decode(self.model, prefill(self.model, self.codec, reading), stop_ids=self.stop_ids,
                                max_new_tokens=budget, on_token=on_token, cancel=cancel)
        return decoded, self.text_of(decoded.tokens)

    def decode_region(self, image: "Image.Image", task: str, *, region_id: str, emit: Emit = no_emit,
                      cancel: CancelToken | None = None, page: int = 0, max_new_tokens: int | None = None,
                      **_ignored: Any) -> RegionResult:
        from app.core.engines.builtin.reader import one_thread

        with one_thread():
            return self._decode_region(image, task, None, region_id=region_id, emit=emit, cancel=cancel, page=page,
                                       max_new_tokens=max_new_tokens)

    def decode_lines(self, image: "Image.Image", task: str, lines: Sequence[Sequence[float]], *, region_id: str,
                     page: int = 0, emit: Emit = no_emit, cancel: CancelToken | None = None,
                     max_new_tokens: int | None = None, known: Sequence | None = None) -> RegionResult:
        """decode_region on the given line boxes (region pixels) instead of detecting them: the same recogniser,
        decoder, events and stats (`lines_from: "given"`, no detection time). `known`: (box, reading) per line the
        page's one OCR pass already read (read_page): nothing recognised again (`lines_from: "page"`)."""
        from app.core.engines.builtin.reader import one_thread

        with one_thread():
            return self._decode_region(image, task, lines, region_id=region_id, emit=emit, cancel=cancel, page=page,
                                       max_new_tokens=max_new_tokens, known=known)

    def _decode_region(self, image: "Image.Image", task: str, lines: Sequence[Sequence[float]] | None, *,
                       region_id: str, emit: Emit, cancel, page: int, max_new_tokens: int | None,
                       known: Sequence | None = None) -> RegionResult:
        t0 = time.perf_counter()
        self.start_page(page)
        t_det = time.perf_counter()
        if known is not None:  # read with the page (page_lines.py): cut from the image, never recognised again
            rows, readings = known_rows(image, known)
        else:
            rows = self.find_lines(image) if lines is None else self.given_lines(image, lines)
        det_ms = (time.perf_counter() - t_det) * 1e3 if lines is None else 0.0
        t_rec = time.perf_counter()
        flat = [piece for row in rows for piece in row]
        if known is None:
            readings = self.recogniser.read([crop for _, crop in flat]) if flat else []
        fresh = [k for k, rd in enumerate(readings) if rd is None]  # known lines' parts the page did not read
        for k, rd in zip(fresh, self.recogniser.read([flat[k][1] for k in fresh]) if fresh else ()):
            readings[k] = rd
        rec_ms = (time.perf_counter() - t_rec) * 1e3
        t_route = time.perf_counter()  # lines in scripts the recogniser cannot read go to one that can (routed.py)
        rows, flat, readings, routed = route_region(self, image, rows, readings, given=lines is not None,
                                                   known=known is not None, fresh=fresh)
        route_ms = (time.perf_counter() - t_route) * 1e3
        # the words the recogniser was unsure of, settled by how common each candidate word is (lexicon.py); the
        # decoder then reads the settled characters
        plain = [rd.text for rd in readings]
        settled = [settle_reading(rd) for rd in readings]
        # each line has its own budget (a loop cannot run away); the region's is what its lines may take together,
        # unless a budget was asked for: a whole-page region of a long scan is never cut at an arbitrary length
        budget = int(max_new_tokens or self.max_new_tokens or sum(line_budget(r) + 1 for r in readings)
                     + sum(len(r.text) for r in routed if isinstance(r, Routed)) or 1)  # (routed lines' tokens)
        emit(RegionStarted(region_id, page, task, self.name, 0, budget, stop_ids=list(self.stop_ids)))
        texts: list[list[str]] = []
        tokens: list[int] = []
        logprobs: list[float] = []
        per_line: list[dict[str, Any]] = []
        offsets = {"round": 0, "step": 0, "tokens": 0}
        cancelled = cut = False  # cut: a line stopped at its token budget, or lines were left unread for want of it
        k = 0
        for r, row in enumerate(rows):
            texts.append([])
            for j, (box, crop) in enumerate(row):
                if cancel is not None and cancel.cancelled:
                    cancelled = True
                    break
                reading = readings[k]
                # the recogniser's own reading, before the word list settled its unsure words (none: nothing said)
                settled_stats = {"recogniser": plain[k], "words_settled": [list(c) for c in settled[k]]} \
                    if settled[k] else {}
                k += 1
                sep = " " if any(t for done in texts for t in done) else ""
                left = budget - len(tokens)
                if left <= 0:
                    cut = True
                    break
                t_line = time.perf_counter()
                other = routed[k - 1]
                if isinstance(other, Routed):
                    st, line_tokens, line_lps, text = routed_line(self, other, reading.text, region_id=region_id,
                                                                  emit=emit, offsets=offsets, sep=sep)
                if isinstance(other, Routed) or not self.can_write(reading):
                    if not isinstance(other, Routed):
                        st, line_tokens, line_lps, text = self.fallback_line(reading, region_id=region_id,
                                                                             emit=emit, offsets=offsets, sep=sep)
                    st.update(box=list(box), row=r, line_ms=round((time.perf_counter() - t_line) * 1e3, 2))
                    st.update(settled_stats)
                    per_line.append(st)
                    texts[-1].append(text)
                    tokens += line_tokens
                    logprobs += line_lps
                    offsets["step"] += len(line_tokens)
                    offsets["tokens"] += len(line_tokens)
                    continue
                if skips(self.decoder, reading):  # it could not change the text (sure_lines.py)
                    decoded, text = kept_line(self, reading, region_id=region_id, emit=emit, offsets=offsets, sep=sep)
                else:
                    decoded, text = self.read_line(reading, region_id=region_id, emit=emit, offsets=offsets,
                                                   sep=sep, budget=min(left, line_budget(reading)), cancel=cancel)
                st = line_figures(decoded.stats.to_dict())
                if not decoded.stats.forwards:
                    st["decoder"] = "skipped"  # it could not change the text
                st.update(box=list(box), row=r, recogniser=reading.text, text=text, stopped=decoded.stopped,
                          line_ms=round((time.perf_counter() - t_line) * 1e3, 2))
                if text != reading.text and decoded.stopped != "max_new_tokens":
                    st["disagrees"] = True  # the decoder overruled the recogniser: the review flow can find it
                    if rewrote(reading.text, text):  # not a correction but a rewrite: the decoder lost the line
                        st.update(kept_recogniser=True, decoder_text=text, text=reading.text)
                        text = reading.text
                    else:  # the decoder overrules only where the recogniser was unsure (arbiter.py)
                        verdict = arbitrate(reading.chars, reading.conf, text)
                        st.update(decoder_taken=verdict.taken, recogniser_kept=verdict.kept)
                        if verdict.text != text:
                            st.update(kept_recogniser=verdict.text == reading.text, decoder_text=text,
                                      text=verdict.text)
                            text = verdict.text
                if text == reading.text:  # the words the recogniser placed (app.core.formats.geometry)
                    st["words"] = reading.word_boxes(box, (crop.shape[1], crop.shape[0]))
                st.update(settled_stats)
                per_line.append(st)
                texts[-1].append(text)
                tokens += list(decoded.tokens)
                logprobs += decoded.logprobs
                offsets["round"] += len(decoded.rounds)
                offsets["step"] += len(decoded.tokens)
                offsets["tokens"] += len(decoded.tokens)
                cut = cut or decoded.stopped == "max_new_tokens"
                if decoded.cancelled:
                    cancelled = True
                    break
            if cancelled or (cut and budget - len(tokens) <= 0):
                break
        if task == "table":  # cells under the columns the pieces' boxes line up in (as the classic engine's)
            boxed = [[(tuple(st["box"]), t) for st, t in zip([s for s in per_line if s["row"] == r], row) if t]
                     for r, row in enumerate(texts)]
            text = from_rows([row for row in boxed if row])
        else:
            text = join_lines(" ".join(t for t in row if t) for row in reading_rows(texts, per_line))
        stats = merge_stats([s for s in per_line if not s.get("fallback")], self.block_size)
        for s in per_line:  # merged into the region's: a long document's window keeps every line's statistics
            s.pop("accepted", None)
        stats.update(reader_stats(per_line, routed, [b for b, _ in flat]), route_ms=round(route_ms, 2))
        stats.update(fallback_lines=sum(1 for s in per_line if s.get("fallback") == "recogniser"),
                     disagreements=sum(1 for s in per_line if s.get("disagrees")),
                     words_settled=sum(len(s.get("words_settled") or ()) for s in per_line),
                     kept_recogniser=sum(1 for s in per_line if s.get("kept_recogniser")))
        # a line whose text covers little of its box was mostly not read (a script the recogniser lacks)
        coverage = [min(1.0, line_coverage(tuple(s["box"]), s.get("text", ""))) for s in per_line]
        stats.update(line_scores=[round(c, 4) for c in coverage],
                     unreadable_lines=sum(1 for c in coverage if c < MIN_LINE_COVERAGE))
        stats.update(engine=self.name, lines=len(per_line), rows=len(rows), line_boxes=[s["box"] for s in per_line],
                     line_stats=per_line, lines_from="page" if known is not None else "detector" if lines is None
                     else "given", lines_read_again=len(fresh),
                     lines_unread=0 if cancelled else len(flat) - len(per_line), detect_ms=round(det_ms, 2),
                     recognise_ms=round(rec_ms, 2), request_ms=(time.perf_counter() - t0) * 1e3, device=self.device,
                     dtype=self.dtype, stopped="cancelled" if cancelled else "max_new_tokens" if cut else "done")
        if cut and not cancelled:  # cut at the token budget: the block is incomplete (app.core.pipeline.quality)
            stats["truncated"] = True
        if task == "formula":
            stats["note"] = "the built-in model reads printed text lines; the formula region was read as text"
        emit(RegionFinished(region_id, text, stats, cancelled, tokens, logprobs))
        return RegionResult(region_id, text, tokens, stats, cancelled, logprobs=logprobs)

    def close(self) -> None:
        self.model = None  # type: ignore[assignment]


TRAIN_HINT = (
    "The app ships one in models/builtin/; to make your own, run `python -m app train --out models/builtin` "
    "(CPU, under 2 hours on 2 cores) or copy a trained checkpoint folder to {user_dir}; see docs/built-in-model.md, "
    "Training. Meanwhile use the `classic` engine (RapidOCR) or a "
    "GravityOCR / GLM-OCR checkpoint."
)


def no_model_message() -> str:
    from app.core.base.paths import models_dir, user_models_dir

    return (f"No built-in model is installed (looked in {user_models_dir() / 'builtin'} and {models_dir() / 'builtin'}). "
            + TRAIN_HINT.format(user_dir=user_models_dir() / "builtin"))


REWRITE_SHARE = 0.25  # a decoded line further than this (and 3 edits or more) from the recogniser's is a rewrite


def rewrote(recognised: str, decoded: str) -> bool:
    """Did the decoder rewrite the line rather than correct it? Corrections are a few characters ("tbe" → "the",
    "1O0" → "100"); a line far from what the recogniser saw (a loop, a run of invented characters on handwriting or
    a font nobody trained on) is the decoder losing its way, and the recogniser's reading is kept."""
    from app.core.text.textmetrics import edit_distance

    edits = edit_distance(recognised, decoded)
    return edits >= 3 and edits > REWRITE_SHARE * max(1, len(recognised))


def line_budget(reading) -> int:
    """The most tokens one line may take: about twice what the recogniser read, and never more than MAX_LINE_TOKENS."""
    return min(MAX_LINE_TOKENS, 2 * len(reading.chars) + 32)


# a line's decoding figures that the region's are recomputed from or that repeat them (its rates, its histograms)
_LINE_DERIVED = frozenset({"acceptance_histogram", "per_position_acceptance", "mean_accepted", "mean_accepted_drafts",
                           "total_ms", "decode_tokens_per_s", "tokens_per_s", "ms_per_forward", "regions", "block_size"})


def line_figures(stats: dict[str, Any]) -> dict[str, Any]:
    """What a line keeps of its decode's statistics: the counters and times (`accepted`, each round's, until the
    region's figures are merged from them), not the derived rates and tables the region has for all its lines."""
    return {k: v for k, v in stats.items() if k not in _LINE_DERIVED}


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
