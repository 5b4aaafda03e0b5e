"""Training and held-out lines for the built-in reader: texts, fonts, rendering with degradations, and the cached
recogniser features (what `Recogniser.read` makes of each rendered line).

Texts: the synthetic mix of `synthetic.random_text` (prose, numbers, dates, prices, codes, punctuation, random
characters, mixed case) and sentences from the docstrings of Python's standard library (real prose, offline). The
docstrings of one module in eight (by a hash of its name) are held out, as are the synthetic texts of seeds >= 10^9.

Fonts: DejaVu (system / matplotlib), the 14 standard PDF fonts that PyMuPDF embeds (Nimbus clones of Helvetica,
Times, Courier) and Pillow's built-in scalable font. HELD_OUT_FONTS never appear in training lines.

Degradations (about half of the lines): grey levels and low contrast, blur, noise, low resolution, JPEG, skew up to
±3°, loose or tight crops. Everything here is numpy + Pillow + OpenCV; the recogniser runs in ONNX Runtime.

Feature cache: `extract(folder, lines, ...)` writes shards `features/shard-00000.jsonl.gz` (1,000 lines each:
text, font, kind, the recogniser's reading) atomically, in parallel worker processes, seeded by shard index; an
interrupted run resumes at the missing shards.
"""
from __future__ import annotations

import ast
import glob
import gzip
import io
import json
import os
import random
import sysconfig
import time
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from app.core.engines.builtin.vocab import EXTRA_CHARS, full_charset

SHARD = 500
HELD_OUT_FONTS = ("pymupdf:cour", "pymupdf:coit", "pymupdf:cobo", "pymupdf:cobi", "pymupdf:tibi",
                  "DejaVuSansMono-BoldOblique", "DejaVuSerifCondensed-BoldItalic", "pymupdf:china-s+bold")
# PyMuPDF's built-in CJK font (Droid Sans Fallback): the only CJK font offline. Trained in its regular weight; held
# out drawn emboldened ("+bold": a stroke of size/20 px), a face no training line has.
CJK_FONTS = ("pymupdf:china-s", "pymupdf:china-s+bold")
SCRIPTS = (("latin", 0.5), ("zh", 0.36), ("ja", 0.14))
PYMUPDF_FONTS = ("helv", "heit", "hebo", "hebi", "tiro", "tiit", "tibo", "tibi", "cour", "coit", "cobo", "cobi")
SKIP_FONTS = ("math", "extralight", "symbol", "dingbat")
LENGTHS = ((1, 12, 0.15), (8, 30, 0.3), (24, 56, 0.3), (48, 96, 0.25))
HELD_OUT_SEED = 10 ** 9


@lru_cache(maxsize=1)
def allowed() -> frozenset:
    """The characters a line may hold: every character the decoder writes (the recogniser's, and a few extras)."""
    return frozenset(full_charset()) - {"\n"}


# --- fonts -------------------------------------------------------------------------------------------------------


def all_fonts() -> list[str]:
    """Font specs: 'file:<path>', 'pymupdf:<name>', 'pillow'."""
    files: list[str] = []
    roots = ["/usr/share/fonts", "/usr/local/share/fonts", os.path.expanduser("~/.fonts")]
    try:
        import matplotlib

        roots.append(os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "fonts", "ttf"))
    except ImportError:
        pass
    seen: set[str] = set()
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "**", "*.ttf"), recursive=True)):
            name = os.path.basename(path)
            low = name.lower()
            if not low.startswith("dejavu") or any(w in low for w in SKIP_FONTS) or name in seen:
                continue
            seen.add(name)
            files.append("file:" + path)
    specs = files + [f"pymupdf:{n}" for n in PYMUPDF_FONTS] + list(CJK_FONTS)
    try:
        import pymupdf  # noqa: F401
    except ImportError:  # pragma: no cover
        specs = files
    return specs + ["pillow"]


def font_name(spec: str) -> str:
    if spec.startswith("file:"):
        return os.path.splitext(os.path.basename(spec[5:]))[0]
    return spec


def is_held_out(spec: str) -> bool:
    return font_name(spec) in HELD_OUT_FONTS or spec in HELD_OUT_FONTS


def is_cjk(spec: str) -> bool:
    return spec in CJK_FONTS


def training_fonts() -> list[str]:
    return [f for f in all_fonts() if not is_held_out(f)]


def held_out_fonts() -> list[str]:
    return [f for f in all_fonts() if is_held_out(f)]


@lru_cache(maxsize=64)
def _font_bytes(spec: str) -> bytes | None:
    if spec.startswith("pymupdf:"):
        import pymupdf

        return bytes(pymupdf.Font(spec.split(":", 1)[1].split("+")[0]).buffer)
    return None


@lru_cache(maxsize=1024)
def get_font(spec: str, size: int):
    from PIL import ImageFont

    if spec == "pillow":
        return ImageFont.load_default(size)
    if spec.startswith("file:"):
        return ImageFont.truetype(spec[5:], size)
    return ImageFont.truetype(io.BytesIO(_font_bytes(spec)), size)


@lru_cache(maxsize=64)
def font_charset(spec: str) -> str:
    """The characters a line may hold that the font has a glyph for (PyMuPDF reads its cmap; Pillow's font: drawn
    and compared)."""
    ok_chars = allowed()
    if spec != "pillow":
        import pymupdf

        data = _font_bytes(spec)
        font = pymupdf.Font(fontbuffer=data) if data is not None else pymupdf.Font(fontfile=spec[5:])
        cmap = set(font.valid_codepoints())
        return "".join(sorted(ch for ch in ok_chars if ord(ch) in cmap or ch == " "))
    font = get_font(spec, 24)
    ref = np.asarray(font.getmask("\uffff"))
    ref_box = font.getmask("\uffff").getbbox()
    ok = []
    for ch in sorted(ch for ch in ok_chars if ord(ch) < 0x3000):
        if ch == " ":
            ok.append(ch)
            continue
        m = font.getmask(ch)
        if m.getbbox() is None or (m.getbbox() == ref_box and np.array_equal(np.asarray(m), ref)):
            continue
        ok.append(ch)
    return "".join(ok)


# --- texts -------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=2)
def docstring_corpus(held_out: bool) -> tuple[str, ...]:
    """Sentences (>= 12 characters, CHARSET only) from the docstrings of the standard library's modules."""
    stdlib = sysconfig.get_paths()["stdlib"]
    out: list[str] = []
    for path in sorted(glob.glob(os.path.join(stdlib, "*.py"))):
        name = os.path.basename(path)[:-3]
        if (zlib.crc32(name.encode()) % 8 == 0) != held_out:
            continue
        try:
            tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                for para in doc.split("\n\n"):
                    text = " ".join(para.split())
                    if len(text) >= 12 and all(ch in allowed() for ch in text) and ">>>" not in text:
                        out.append(text)
    return tuple(out)


def docstring_text(rng: random.Random, lo: int, hi: int, held_out: bool = False) -> str:
    corpus = docstring_corpus(held_out)
    para = rng.choice(corpus)
    words = para.split()
    start = rng.randrange(len(words))
    target = rng.randint(lo, hi)
    out = ""
    for w in words[start:]:
        if out and len(out) + 1 + len(w) > target:
            break
        out = f"{out} {w}" if out else w
    return out[:hi] if len(out) > hi else out


def line_text(rng: random.Random, charset: str, held_out: bool = False, script: str = "latin") -> tuple[str, str]:
    """(text, kind) for one line: its length class, then (Latin) the docstring corpus, the synthetic mix or faker's
    fields, or (Chinese, Japanese) texts.script_text."""
    from app.core.training.synthetic import random_text
    from app.core.training.texts import script_text

    lo, hi = rng.choices([(a, b) for a, b, _ in LENGTHS], [w for *_, w in LENGTHS])[0]
    if script != "latin":
        lo, hi = max(1, lo // 2), max(4, hi // 2)  # CJK characters are twice as wide
    extra = "".join(ch for ch in EXTRA_CHARS if ch in charset)
    allowed_here = set(charset)
    for _ in range(10):
        u = rng.random()
        if script != "latin":
            text, kind = script_text(rng, script, lo, hi, held_out)
        elif u < 0.35:
            text, kind = docstring_text(rng, lo, hi, held_out), "prose"
        elif u < 0.7:
            text, kind = random_text(rng, lo, hi, extra), "mixed"
        else:
            text, kind = script_text(rng, "latin", lo, hi, held_out)
        text = " ".join(text.split())
        text = " ".join("".join(ch for ch in text if ch in allowed_here).split())
        if text.strip():
            return text, kind
    return rng.choice("abcdefghijklmnopqrstuvwxyz"), "mixed"


# --- rendering ---------------------------------------------------------------------------------------------------


def render(text: str, spec: str, rng: random.Random, *, clean: bool = False, tags: list | None = None) -> np.ndarray:
    """A grey uint8 crop of `text` as a line detector would cut it from a page, degraded unless `clean`. The
    degradations applied are appended to `tags` (faint, skew, italic, tight, lowres, blur, noise, jpeg)."""
    import cv2
    from PIL import Image, ImageDraw, ImageFilter

    tags = [] if tags is None else tags
    size = rng.randint(14, 44)
    font = get_font(spec.split("+")[0], size)
    stroke = max(1, size // 20) if spec.endswith("+bold") else 0
    bg = 255 if clean or rng.random() < 0.55 else rng.randint(150, 255)
    ink = 0 if clean or rng.random() < 0.5 else rng.randint(0, max(0, bg - 90))
    if bg - ink < 150:
        tags.append("faint")
    left, top, right, bottom = font.getbbox(text, stroke_width=stroke)
    m = size * 2
    canvas = Image.new("L", (max(1, right - left) + 2 * m, max(1, bottom - top) + 2 * m), bg)
    draw = ImageDraw.Draw(canvas)
    if not clean and len(text) > 1 and rng.random() < 0.1:  # tight kerning: characters drawn closer together
        tags.append("tight")
        squeeze, x = rng.uniform(0.06, 0.18), m - left
        for ch in text:
            draw.text((x, m - top), ch, font=font, fill=ink, stroke_width=stroke, stroke_fill=ink)
            x += font.getlength(ch) * (1 - squeeze)
    else:
        draw.text((m - left, m - top), text, font=font, fill=ink, stroke_width=stroke, stroke_fill=ink)
    if not clean and rng.random() < 0.1:  # slanted (a synthetic italic)
        tags.append("italic")
        sh = rng.uniform(0.12, 0.3)
        canvas = canvas.transform(canvas.size, Image.AFFINE, (1, sh, -sh * canvas.height / 2, 0, 1, 0),
                                  resample=Image.BILINEAR, fillcolor=bg)
    if not clean and rng.random() < 0.3:
        tags.append("skew")
        canvas = canvas.rotate(rng.uniform(-3.0, 3.0), resample=Image.BILINEAR, expand=False, fillcolor=bg)
    arr = np.asarray(canvas)
    inkmask = np.abs(arr.astype(np.int16) - bg) > max(8, abs(bg - ink) // 3)
    ys, xs = np.nonzero(inkmask)
    if ys.size == 0:
        y0, y1, x0, x1 = m, m + size, m, m + size
    else:
        y0, y1, x0, x1 = int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1
    ref = max(size, 8)
    if clean:
        my0 = my1 = mx0 = mx1 = 0.25
    else:
        my0, my1 = rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5)
        mx0, mx1 = rng.uniform(0.05, 0.9), rng.uniform(0.05, 0.9)
    h, w = arr.shape
    crop = arr[max(0, y0 - int(my0 * ref)):min(h, y1 + int(my1 * ref)), max(0, x0 - int(mx0 * ref)):min(w, x1 + int(mx1 * ref))]
    if clean:
        return np.ascontiguousarray(crop)
    img = Image.fromarray(crop)
    if rng.random() < 0.25:  # low resolution
        tags.append("lowres")
        f = rng.uniform(0.35, 0.8)
        small = img.resize((max(1, int(img.width * f)), max(1, int(img.height * f))), Image.BILINEAR)
        img = small.resize(img.size, Image.BILINEAR)
    if rng.random() < 0.3:
        tags.append("blur")
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.4)))
    out = np.asarray(img).astype(np.float32)
    if rng.random() < 0.3:
        tags.append("noise")
        out += np.random.default_rng(rng.getrandbits(32)).normal(0, rng.uniform(2, 22), out.shape)
    out = np.clip(out, 0, 255).astype(np.uint8)
    if rng.random() < 0.15:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, rng.randint(20, 70)])
        if ok:
            tags.append("jpeg")
            out = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    return np.ascontiguousarray(out)


def make_line(rng: random.Random, fonts: list[str], *, held_out_text: bool = False, clean: bool | None = None):
    """(image, text, font, kind, script, tags) for one random line: its script (SCRIPTS' weights, among those the
    fonts can draw), a font of that script, its text, its rendering."""
    cjk = [f for f in fonts if is_cjk(f)]
    latin = [f for f in fonts if not is_cjk(f)]
    scripts = [(s, w) for s, w in SCRIPTS if (cjk if s != "latin" else latin)]
    script = rng.choices([s for s, _ in scripts], [w for _, w in scripts])[0]
    spec = rng.choice(cjk if script != "latin" else latin)
    text, kind = line_text(rng, font_charset(spec), held_out_text, script)
    if clean is None:
        clean = rng.random() < 0.4
    tags: list[str] = []
    image = render(text, spec, rng, clean=clean, tags=tags)
    return image, text, spec, kind, script, tags or ["clean"]


# --- the feature cache -------------------------------------------------------------------------------------------


def shard_path(folder: Path, index: int) -> Path:
    return Path(folder) / f"shard-{index:05d}.jsonl.gz"


def make_shard(folder: Path, index: int, seed: int, fonts: list[str], threads: int = 1, held_out: bool = False,
               size: int = SHARD) -> Path:
    """Render `size` lines (seeded by `seed` and `index`), read them with the recogniser, write the shard."""

    path = shard_path(folder, index)
    if path.exists():
        return path
    rec = _recogniser(threads)
    plain = _recogniser(threads, stretch=False) if held_out else None
    rng = random.Random(seed * 1_000_003 + index + (HELD_OUT_SEED if held_out else 0))
    rows = []
    for start in range(0, size, 32):
        items = [make_line(rng, fonts, held_out_text=held_out) for _ in range(min(32, size - start))]
        readings = rec.read([im for im, *_ in items])
        # held-out lines also keep the recogniser's reading of the crop as given (no contrast stretch, as the
        # classic engine reads it): the baseline the built-in engine is measured against
        plains = plain.read([im for im, *_ in items]) if plain else [None] * len(items)
        for (im, text, spec, kind, script, tags), reading, p in zip(items, readings, plains):
            rows.append({"text": text, "font": font_name(spec), "kind": kind, "script": script, "tags": tags,
                         "h": int(im.shape[0]), "w": int(im.shape[1]), "reading": reading.to_json()})
            if p is not None:
                rows[-1]["plain"] = p.text
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path


@lru_cache(maxsize=4)
def _recogniser(threads: int, stretch: bool = True):
    from app.core.rapid.recogniser import Recogniser

    return Recogniser(threads=threads, stretch=stretch)  # by default read as the engine reads


def _shard_task(args) -> str:
    folder, index, seed, fonts, threads, held_out, size = args
    return str(make_shard(Path(folder), index, seed, fonts, threads, held_out, size))


def extract(folder: str | os.PathLike, lines: int, *, seed: int = 0, workers: int = 2, threads: int = 1,
            fonts: list[str] | None = None, held_out: bool = False, size: int = SHARD,
            log: Callable[[str], None] = print) -> list[Path]:
    """Make (or complete) the feature cache of `lines` lines in `folder`; returns the shard paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fonts = fonts or (held_out_fonts() if held_out else training_fonts())
    n = -(-lines // size)
    todo = [i for i in range(n) if not shard_path(folder, i).exists()]
    if todo:
        log(f"features: {len(todo)} of {n} shards to make in {folder} ({workers} workers, {len(fonts)} fonts)")
    t0 = time.perf_counter()
    tasks = [(str(folder), i, seed, fonts, threads, held_out, size) for i in todo]
    done = 0
    if workers <= 1 or len(tasks) <= 1:
        for t in tasks:
            _shard_task(t)
            done += 1
            _progress(log, done, len(tasks), size, t0)
    else:
        import multiprocessing as mp

        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        with mp.get_context(method).Pool(workers) as pool:
            for _ in pool.imap_unordered(_shard_task, tasks):
                done += 1
                _progress(log, done, len(tasks), size, t0)
    return [shard_path(folder, i) for i in range(n)]


def _progress(log, done: int, total: int, size: int, t0: float) -> None:
    dt = time.perf_counter() - t0
    if done == total or done % 5 == 0:
        rate = done * size / max(dt, 1e-9)
        log(f"features: {done}/{total} shards, {rate:.1f} lines/s, {dt / 60:.1f} min")


def load_shards(paths: list[Path]) -> Iterator[dict]:
    for p in paths:
        with gzip.open(p, "rt", encoding="utf-8") as f:
            for line in f:
                yield json.loads(line)
