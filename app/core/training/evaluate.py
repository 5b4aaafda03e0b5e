"""Reading lines with a trained checkpoint and scoring them: batched AR greedy decoding (`model.generate`, the
reference the app's decoders must equal) and the character error rate."""
from __future__ import annotations

import numpy as np


def cer(refs: list[str], hyps: list[str]) -> float:
    """Total edit distance / total reference characters."""
    from rapidfuzz.distance import Levenshtein

    total = sum(len(r) for r in refs)
    return sum(Levenshtein.distance(r, h) for r, h in zip(refs, hyps)) / max(1, total)


def pad_to_width(images: list[np.ndarray], width: int) -> np.ndarray:
    out = np.empty((len(images), images[0].shape[0], width), dtype=np.uint8)
    for i, im in enumerate(images):
        w = im.shape[1]
        out[i, :, :w] = im
        out[i, :, w:] = int(np.median(np.concatenate([im[:, 0], im[:, -1]])))  # background
    return out


def read_lines(model, tokenizer, images: list[np.ndarray], *, device="cpu", batch_size: int = 64,
               max_new_tokens: int = 160, exact_width: bool = True) -> list[str]:
    """AR greedy reading of line images (LINE_HEIGHT × w, w a multiple of 16). `exact_width`: batch only lines of
    the same width, so each line is read unpadded exactly as the engine reads it; otherwise lines sorted by width
    are padded with their background to the widest of their batch (fast; what training batches look like)."""
    import torch

    from app.core.training.batches import make_prefix

    if exact_width:
        groups: dict[int, list[int]] = {}
        for i, im in enumerate(images):
            groups.setdefault(im.shape[1], []).append(i)
        chunks = [idx[s:s + batch_size] for idx in groups.values() for s in range(0, len(idx), batch_size)]
    else:
        order = sorted(range(len(images)), key=lambda i: images[i].shape[1])
        chunks = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    out: list[str] = [""] * len(images)
    eos = model.generation_config.eos_token_id
    for idx in chunks:
        width = max(images[i].shape[1] for i in idx)
        prefix = make_prefix(tokenizer, pad_to_width([images[i] for i in idx], width), device=device)
        with torch.no_grad():
            gen = model.generate(input_ids=prefix.input_ids, attention_mask=torch.ones_like(prefix.input_ids),
                                 mm_token_type_ids=prefix.mm_token_type_ids, pixel_values=prefix.pixel_values,
                                 image_grid_thw=prefix.image_grid_thw, max_new_tokens=max_new_tokens,
                                 do_sample=False, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
        new = gen[:, prefix.input_ids.shape[1]:]
        for i, row in zip(idx, new.tolist()):
            stop = next((k for k, t in enumerate(row) if t in (eos if isinstance(eos, list) else [eos])), len(row))
            out[i] = tokenizer.decode(row[:stop], skip_special_tokens=True)
    return out


def pdf_lines(pdf_path=None, *, dpi: int = 200, limit: int = 200):
    """(line image normalised like the engine does, text-layer text) for the text lines of a PDF (the bundled
    sample by default), cropped by the text layer's line boxes."""
    import pymupdf as fitz
    from PIL import Image

    try:
        from app.core.engines.line_finder import normalize_line
    except ImportError:  # before the engines package
        from app.core.engines.line_finder import normalize_line
    from app.core.paths import sample_document

    out = []
    with fitz.open(str(pdf_path or sample_document())) as doc:
        for page in doc:
            pix = page.get_pixmap(dpi=dpi)
            img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
            s = dpi / 72.0
            for block in page.get_text("dict")["blocks"]:
                if block.get("type") != 0:
                    continue
                for line in block["lines"]:
                    text = "".join(span["text"] for span in line["spans"]).strip()
                    if not text or line.get("dir", (1, 0)) != (1, 0):
                        continue
                    x0, y0, x1, y1 = line["bbox"]
                    pad = 0.15 * (y1 - y0)
                    box = (max(0, int((x0 - pad) * s)), max(0, int((y0 - pad) * s)),
                           min(img.width, int((x1 + pad) * s) + 1), min(img.height, int((y1 + pad) * s) + 1))
                    out.append((normalize_line(img, box), text))
                    if len(out) >= limit:
                        return out
    return out


def evaluate_checkpoint(folder, *, heldout=None, device: str = "cpu", pdf: bool = True, limit: int = 64,
                        log=lambda _m: None) -> dict:
    """The model-card figures, measured with the app's own engines on `device` (CPU by default): held-out CER (AR),
    sample-PDF line CER, self-spec ≡ AR, TPF, mean acceptance, AR and self-spec wall time."""
    import time

    from PIL import Image

    try:
        from app.core.engines.glmocr import open_ar, open_selfspec
    except ImportError:  # before the engines package
        from app.core.engines.glmocr import open_ar, open_selfspec
    from app.core.loader import load_model

    loaded = load_model("builtin", folder, device=device, dtype="fp32")
    ar = open_ar(loaded=loaded, manifest="builtin", engine="builtin-ar")
    spec = open_selfspec(loaded=loaded, manifest="builtin", engine="builtin")
    report: dict = {}
    sets = {}
    if heldout:
        sets["heldout"] = [(Image.fromarray(ln.image).convert("RGB"), ln.text) for ln in heldout[:limit]]
    if pdf:
        try:
            sets["pdf"] = pdf_lines(limit=limit)
        except Exception as exc:  # pragma: no cover - no PyMuPDF or no sample
            log(f"sample-PDF lines skipped: {exc}")
    same = total = 0
    ar_s = spec_s = 0.0
    rounds = tokens = forwards = accepted = 0
    for name, pairs in sets.items():
        refs, hyps = [], []
        for image, ref in pairs:
            budget = len(ref) + 16  # the same bound for both engines; keeps a model that babbles cheap to measure
            t = time.perf_counter()
            a = ar.decode_region(image, "text", region_id="e", max_new_tokens=budget)
            ar_s += time.perf_counter() - t
            t = time.perf_counter()
            s = spec.decode_region(image, "text", region_id="e", max_new_tokens=budget)
            spec_s += time.perf_counter() - t
            same += int(a.tokens == s.tokens)
            total += 1
            rounds += s.stats.get("rounds", 0)
            tokens += s.stats.get("tokens", 0)
            forwards += s.stats.get("forwards", 0)
            accepted += sum(s.stats.get("accepted", []))
            refs.append(ref)
            hyps.append(a.text)
        report[f"{name}_cer" if name != "heldout" else "cer_app_ar"] = round(cer(refs, hyps), 4)
        report[f"{name}_lines"] = len(pairs)
    if total:
        report["selfspec_equals_ar"] = f"{same}/{total} lines token-identical"
        report["tpf"] = round(tokens / max(1, forwards), 3)
        report["mean_accept"] = round(accepted / max(1, rounds), 3)
        report["ar_seconds"] = round(ar_s, 2)
        report["selfspec_seconds"] = round(spec_s, 2)
        report["eval_device"] = device
    return report
