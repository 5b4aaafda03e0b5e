"""Evaluating the built-in reader on held-out lines with the app's own decoders (self-spec always, AR too for the
self-spec == AR check): CER of the model and of the recogniser's greedy reading, per font, per script and per
degradation, with how many lines the decoder corrected (fewer edits than the recogniser) and broke (more).

Held-out features also carry the recogniser's reading of the crop as given ("plain": no contrast stretch, as the
classic engine reads it); its CER is `plain_cer`, the baseline the built-in engine is measured against."""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from app.core.text.textmetrics import errors as cer  # (edit distance, len(ref))


def _bucket() -> dict[str, int]:
    return {"lines": 0, "chars": 0, "errs": 0, "rec_errs": 0, "corrected": 0, "broken": 0, "exact": 0,
            "plain_errs": 0, "plain_chars": 0}


def _summary(b: dict[str, int]) -> dict[str, Any]:
    n = max(1, b["chars"])
    out = {"lines": b["lines"], "chars": b["chars"], "cer": round(b["errs"] / n, 5),
           "rec_cer": round(b["rec_errs"] / n, 5), "corrected": b["corrected"], "broken": b["broken"],
           "exact": round(b["exact"] / max(1, b["lines"]), 4)}
    if b["plain_chars"]:
        out["plain_cer"] = round(b["plain_errs"] / b["plain_chars"], 5)
    return out


def engine_text(reading, decoded: str) -> str:
    """The line's text as the built-in engine writes it from the decoder's `decoded` text (app.core.engines.builtin:
    a rewrite keeps the recogniser's reading; otherwise the decoder overrules it only where it was unsure)."""
    from app.core.engines.builtin.arbiter import arbitrate
    from app.core.engines.builtin.engine import rewrote

    if decoded == reading.text:
        return decoded
    if rewrote(reading.text, decoded):
        return reading.text
    return arbitrate(reading.chars, reading.conf, decoded).text


def evaluate_lines(model, tok, codec, rows: list[dict], *, block_size: int, selfspec_check: bool) -> dict[str, Any]:
    import torch

    from app.core.decoding.autoregressive import ar_decode
    from app.core.decoding.selfspec import selfspec_decode
    from app.core.engines.builtin.lexicon import settle_reading
    from app.core.engines.builtin.reader import decode_text, prefill
    from app.core.rapid.recogniser import Reading

    stops = list(model.generation_config.eos_token_id)
    total = _bucket()
    groups: dict[str, dict[str, dict[str, int]]] = {"font": {}, "script": {}, "degradation": {}}
    tokens = forwards = mismatches = 0
    accepted: list[int] = []
    ar_ms = ss_ms = 0.0
    examples: list[dict[str, str]] = []
    fallbacks = 0
    decoder_errs = 0  # the decoder's own text, before the engine settles it with the recogniser's

    def count(row: dict, e: int, re_: int, n: int) -> None:
        keys = [("font", row["font"]), ("script", row.get("script", "latin"))]
        keys += [("degradation", t) for t in row.get("tags", ["clean"])]
        for b in [total] + [groups[g].setdefault(k, _bucket()) for g, k in keys]:
            b["lines"] += 1
            b["chars"] += n
            b["errs"] += e
            b["rec_errs"] += re_
            b["corrected"] += int(e < re_)
            b["broken"] += int(e > re_)
            b["exact"] += int(e == 0)
            if "plain" in row:
                b["plain_errs"] += cer(row["text"], row["plain"])[0]
                b["plain_chars"] += n

    with torch.no_grad():
        for row in rows:
            reading = Reading.from_json(row["reading"])
            recognised = reading.text  # the recogniser's own reading, before the engine's word list
            settle_reading(reading)  # as the engine reads it (app.core.engines.builtin.lexicon)
            if not all(ch in codec.char for ch in reading.chars):  # as the engine: the recogniser's own reading
                fallbacks += 1
                e, n = cer(row["text"], reading.text)
                decoder_errs += e
                count(row, e, cer(row["text"], recognised)[0], n)
                continue
            t0 = time.perf_counter()
            pre = prefill(model, codec, reading)
            budget = min(160, 2 * len(reading.chars) + 16)
            dec = selfspec_decode(model, pre, mask_id=codec.mask, block_size=block_size, stop_ids=stops,
                                  max_new_tokens=budget)
            ss_ms += (time.perf_counter() - t0) * 1e3
            text = decode_text(tok, dec.tokens, stops)
            if selfspec_check:
                t0 = time.perf_counter()
                ar = ar_decode(model, prefill(model, codec, reading), stop_ids=stops, max_new_tokens=budget)
                ar_ms += (time.perf_counter() - t0) * 1e3
                mismatches += int(ar.tokens != dec.tokens)
            raw_e, _ = cer(row["text"], text)
            decoder_errs += raw_e
            text = engine_text(reading, text)  # as the engine settles it (its rewrite rule and arbiter)
            e, n = cer(row["text"], text)
            re_, _ = cer(row["text"], recognised)
            count(row, e, re_, n)
            tokens += len([t for t in dec.tokens if t not in stops])
            forwards += 2 * len(dec.rounds)
            accepted += [r.k for r in dec.rounds]
            if e != re_ and len(examples) < 12:
                examples.append({"text": row["text"], "model": text, "recogniser": recognised})
    s = _summary(total)
    out: dict[str, Any] = {
        "lines": len(rows), "cer": s["cer"], "rec_cer": s["rec_cer"], "exact": s["exact"],
        **({"plain_cer": s["plain_cer"]} if "plain_cer" in s else {}),
        "decoder_cer": round(decoder_errs / max(1, total["chars"]), 5),
        "corrected": s["corrected"], "broken": s["broken"], "fallback_lines": fallbacks,
        "tpf": round(tokens / max(1, forwards), 3),
        "mean_accepted": round(float(np.mean(accepted)) if accepted else 0.0, 3),
        "per_font": {k: _summary(v) for k, v in sorted(groups["font"].items())},
        "per_script": {k: _summary(v) for k, v in sorted(groups["script"].items())},
        "per_degradation": {k: _summary(v) for k, v in sorted(groups["degradation"].items())},
        "examples": examples,
        "selfspec_ms_per_line": round(ss_ms / max(1, len(rows)), 2),
    }
    if selfspec_check:
        out.update(selfspec_equals_ar=mismatches == 0, selfspec_ar_mismatches=mismatches,
                   ar_ms_per_line=round(ar_ms / max(1, len(rows)), 2), speedup=round(ar_ms / max(1e-9, ss_ms), 2))
    return out


def evaluate_checkpoint(folder, heldout: str, *, block_size: int | None = None, selfspec_check: bool = True,
                        limit: int | None = None) -> dict[str, Any]:
    """`evaluate_lines` for the checkpoint in `folder` on the cached held-out lines in `heldout` (a feature folder
    of `linedata.extract`), one torch thread: the same table for any version of the model (a first-version model
    reads the second version's readings through its own codec, the first alternative only)."""
    import glob
    from pathlib import Path

    from app.core.engines.builtin.reader import PrefixCodec, load_reader, one_thread
    from app.core.training.linedata import load_shards

    model, tok, bd = load_reader(folder)
    rows = list(load_shards(sorted(Path(p) for p in glob.glob(str(Path(heldout) / "shard-*.jsonl.gz")))))
    rows = rows[:limit] if limit else rows
    with one_thread():
        out = evaluate_lines(model, tok, PrefixCodec(tok), rows, block_size=int(block_size or bd["bd_size"]),
                             selfspec_check=selfspec_check)
    out["model"] = str(folder)
    return out


if __name__ == "__main__":  # pragma: no cover - `python -m app.core.training.reader_eval <model> <heldout> [out.json]`
    import json
    import sys

    report = evaluate_checkpoint(sys.argv[1], sys.argv[2])
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if len(sys.argv) > 3:
        Path_ = __import__("pathlib").Path
        Path_(sys.argv[3]).write_text(text, encoding="utf-8")
    print(text)
