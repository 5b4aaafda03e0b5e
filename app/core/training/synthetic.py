"""Synthetic printed text lines: varied text, fonts from font packages, sizes, grey levels, light blur and noise.

Everything here is numpy + Pillow (no torch), so worker processes start fast. `render_batch(seed, ...)` makes one
training batch of same-size line images (height LINE_HEIGHT, width a multiple of 16) with their texts and, per
16-px image column, the character under the column's centre (the auxiliary vision target). `BatchStream` renders
batches in parallel worker processes.

Fonts: DejaVu, Liberation, URW base35 and Latin Modern when installed (`ensure_fonts()` installs the Debian packages
when they are missing and apt-get can run), plus Pillow's built-in scalable font, which is always there.
"""
from __future__ import annotations

import glob
import os
import random
import shutil
import string
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

LINE_HEIGHT = 32  # px: the height lines are rendered at
from app.core.engines.builtin.vocab import ASCII_CHARS, EXTRA_CHARS

COLUMN = 16  # px of line image per image-token column (patch 8 × merge 2)
FONT_PACKAGES = ("fonts-dejavu-core", "fonts-liberation", "fonts-urw-base35", "fonts-lmodern")
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", os.path.expanduser("~/.fonts"),
             os.path.expanduser("~/.local/share/fonts"), "/usr/share/texmf/fonts/opentype",
             "/usr/share/texlive/texmf-dist/fonts/opentype")
FAMILIES = {
    "DejaVu": ("dejavu",),
    "Liberation": ("liberation",),
    "URW base35": ("nimbus", "c059", "p052", "urwbookman", "urwgothic"),
    "Latin Modern": ("lmroman", "lmsans", "lmmono", "latinmodern"),
}
SKIP_FONT_WORDS = ("symbol", "dingbat", "z003", "d050000l", "math", "extralight", "caps", "unslanted", "dunhill")
PIL_DEFAULT = "<pillow-default>"
LENGTH_CLASSES = ((1, 12), (8, 30), (24, 56), (48, 80))


# --- fonts -------------------------------------------------------------------------------------------------------


def find_fonts() -> dict[str, list[str]]:
    """Installed font files per family (scalable .ttf/.otf only), plus Pillow's built-in font."""
    found: dict[str, list[str]] = {}
    files: list[str] = []
    for d in FONT_DIRS:
        if os.path.isdir(d):
            for ext in ("ttf", "otf", "TTF", "OTF"):
                files += glob.glob(os.path.join(d, "**", f"*.{ext}"), recursive=True)
    for path in sorted(set(files)):
        low = os.path.basename(path).lower()
        if any(w in low for w in SKIP_FONT_WORDS):
            continue
        for family, keys in FAMILIES.items():
            if any(low.startswith(k) or k in low for k in keys):
                found.setdefault(family, []).append(path)
                break
    found["Pillow"] = [PIL_DEFAULT]
    return found


def missing_font_families() -> list[str]:
    have = find_fonts()
    return [f for f in FAMILIES if f not in have]


def ensure_fonts(log=print) -> list[str]:
    """Install the Debian font packages when families are missing and apt-get can run (as root). Returns the
    families still missing afterwards; training works with any subset (Pillow's font is always there)."""
    missing = missing_font_families()
    if not missing:
        return []
    apt = shutil.which("apt-get")
    if apt is None or (hasattr(os, "geteuid") and os.geteuid() != 0):
        log(f"fonts missing ({', '.join(missing)}); install {' '.join(FONT_PACKAGES)} for more variety")
        return missing
    log(f"installing fonts: {' '.join(FONT_PACKAGES)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run([apt, "install", "-y", "--no-install-recommends", *FONT_PACKAGES], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    except (subprocess.SubprocessError, OSError):
        try:
            subprocess.run([apt, "update"], check=True, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)  # an offline machine fails here
            subprocess.run([apt, "install", "-y", "--no-install-recommends", *FONT_PACKAGES], check=True,
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        except (subprocess.SubprocessError, OSError) as exc:
            log(f"could not install fonts ({exc}); training with the fonts that are present")
    return missing_font_families()


@lru_cache(maxsize=512)
def _font(path: str, size: int):
    if path == PIL_DEFAULT:
        return ImageFont.load_default(size)
    return ImageFont.truetype(path, size)


@lru_cache(maxsize=64)
def _font_covers(path: str, chars: str) -> str:
    """The subset of `chars` the font draws with a real glyph (not the .notdef box)."""
    font = _font(path, 24)
    try:
        notdef = font.getmask("\uffff").getbbox()
        ref = np.asarray(font.getmask("\uffff"))
    except Exception:  # pragma: no cover - defensive
        return ""
    ok = []
    for ch in chars:
        m = font.getmask(ch)
        if m.getbbox() is None or (m.getbbox() == notdef and np.array_equal(np.asarray(m), ref)):
            continue
        ok.append(ch)
    return "".join(ok)


# --- texts -------------------------------------------------------------------------------------------------------

WORDS = """the of and to in is was that for on are with as his they be at one have this from or had by not word but
what some we can out other were all there when up use your how said an each she which do their time if will way
about many then them write would like so these her long make thing see him two has look more day could go come did
number sound no most people my over know water than call first who may down side been now find any new work part
take get place made live where after back little only round man year came show every good me give our under name
very through just form sentence great think say help low line differ turn cause much mean before move right boy old
too same tell does set three want air well also play small end put home read hand port large spell add even land
here must big high such follow act why ask men change went light kind off need house picture try us again animal
point mother world near build self earth father head stand own page should country found answer school grow study
still learn plant cover food sun four between state keep eye never last let thought city tree cross farm hard start
might story saw far sea draw left late run while press close night real life few north open seem together next white
children begin got walk example ease paper group always music those both mark often letter until mile river car feet
care second book carry took science eat room friend began idea fish mountain stop once base hear horse cut sure watch
color face wood main enough plain girl usual young ready above ever red list though feel talk bird soon body dog
family direct pose leave song measure door product black short numeral class wind question happen complete ship area
half rock order fire south problem piece told knew pass since top whole king space heard best hour better true during
hundred five remember step early hold west ground interest reach fast verb sing listen six table travel less morning
ten simple several vowel toward war lay against pattern slow center love person money serve appear road map rain rule
govern pull cold notice voice unit power town fine certain fly fall lead cry dark machine note wait plan figure star
box noun field rest correct able pound done beauty drive stood contain front teach week final gave green oh quick
develop ocean warm free minute strong special mind behind clear tail produce fact street inch multiply nothing course
stay wheel full force blue object decide surface deep moon island foot system busy test record boat common gold
possible plane stead dry wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire bring
yes distant fill east paint language among invoice total amount payment account report section figure chapter volume
contract agreement customer order delivery address manuscript archive library document scribe ledger""".split()
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
UNITS = ("kg", "g", "mm", "cm", "m", "km", "ml", "l", "h", "min", "s", "%", "MB", "GB", "kWh", "°C")
DOMAINS = ("example.com", "mail.org", "archive.net", "uni-bonn.de", "data.gov", "scriptorium.app")


def _word(rng: random.Random) -> str:
    w = rng.choice(WORDS)
    r = rng.random()
    if r < 0.15:
        w = w.capitalize()
    elif r < 0.18:
        w = w.upper()
    return w


def _prose(rng: random.Random) -> str:
    parts = []
    for i in range(rng.randint(3, 14)):
        w = _word(rng) if i else _word(rng).capitalize()
        r = rng.random()
        if r < 0.08:
            w += ","
        elif r < 0.11:
            w += rng.choice((".", ";", ":", "?", "!"))
        elif r < 0.13:
            w = f"({w})"
        elif r < 0.15:
            w = f"“{w}”" if rng.random() < 0.3 else f'"{w}"'
        elif r < 0.16:
            w = w + "’s" if rng.random() < 0.5 else w + "'s"
        parts.append(w)
    s = " ".join(parts)
    return s + rng.choice((".", ".", ".", "", ",", ":", "…"))


def _number(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randint(0, 10 ** rng.randint(1, 9)))
    if kind == 1:
        return f"{rng.uniform(-1000, 100000):,.{rng.randint(1, 3)}f}"
    if kind == 2:
        return f"{rng.uniform(0, 100):.{rng.randint(0, 2)}f}%"
    if kind == 3:
        return f"{rng.randint(1, 999)} {rng.choice(UNITS)}"
    if kind == 4:
        return f"{rng.randint(1, 99)}.{rng.randint(1, 20)}.{rng.randint(1, 9)}"
    return f"{rng.randint(1, 9999)} × {rng.randint(1, 99)} = {rng.randint(1, 99999)}"


def _date(rng: random.Random) -> str:
    y, m, d = rng.randint(1890, 2039), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice((
        f"{y:04d}-{m:02d}-{d:02d}", f"{d:02d}.{m:02d}.{y:04d}", f"{m:02d}/{d:02d}/{y % 100:02d}",
        f"{MONTHS[m - 1]} {d}, {y}", f"{d} {MONTHS[m - 1][:3]} {y}", f"{d}. {MONTHS[m - 1]} {y}",
        f"{y:04d}-{m:02d}-{d:02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
    ))


def _price(rng: random.Random) -> str:
    v = rng.uniform(0.1, 99999) if rng.random() < 0.5 else rng.uniform(0.1, 200)
    return rng.choice((
        f"${v:,.2f}", f"€ {v:,.2f}".replace(",", " "), f"{v:.2f} €", f"£{v:,.2f}", f"{v:,.2f} USD",
        f"EUR {v:.2f}".replace(".", ","), f"¥{int(v)}", f"{v:.2f}",
    ))


def _code(rng: random.Random) -> str:
    up, dig = string.ascii_uppercase, string.digits
    pick = lambda chars, k: "".join(rng.choice(chars) for _ in range(k))  # noqa: E731
    return rng.choice((
        f"INV-{rng.randint(2000, 2039)}-{pick(dig, 5)}", f"{pick(up, 3)}-{pick(dig, 4)}-{pick(up + dig, 2)}",
        f"ISBN 978-{pick(dig, 1)}-{pick(dig, 4)}-{pick(dig, 4)}-{pick(dig, 1)}",
        f"+{rng.randint(1, 99)} {pick(dig, 3)} {pick(dig, 4)} {pick(dig, 3)}",
        f"{_word(rng).lower()}.{_word(rng).lower()}@{rng.choice(DOMAINS)}",
        f"https://{rng.choice(DOMAINS)}/{_word(rng).lower()}/{pick(dig, 3)}",
        f"§ {rng.randint(1, 300)} Abs. {rng.randint(1, 9)}", f"No. {pick(dig, rng.randint(2, 6))}",
        f"{pick(up, 2)}{pick(dig, 6)}", f"0x{pick('0123456789ABCDEF', rng.choice((4, 8)))}",
    ))


def _random_chars(rng: random.Random, extra: str) -> str:
    pool = ASCII_CHARS.replace("\n", "") + extra
    n = rng.randint(3, 24)
    s = "".join(rng.choice(pool) for _ in range(n))
    return " ".join(s.split())  # no runs of spaces


def random_text(rng: random.Random, lo: int, hi: int, extra: str = EXTRA_CHARS) -> str:
    """One line of text, lo..hi characters, mixing prose, numbers, dates, prices, codes and random characters."""
    target = rng.randint(lo, hi)
    kinds = (_prose, _number, _date, _price, _code, lambda r: _random_chars(r, extra))
    weights = (0.45, 0.12, 0.1, 0.1, 0.13, 0.1)
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) < target:
        parts.append(rng.choices(kinds, weights)[0](rng))
    s = " ".join(parts)
    if len(s) > target:
        cut = s.rfind(" ", 0, target + 1)
        s = s[:cut] if cut >= max(lo, 1) else s[:target]
    s = " ".join(s.split())
    allowed = set(ASCII_CHARS) | set(extra)
    s = "".join(ch for ch in s if ch in allowed)
    return s if s else rng.choice(string.ascii_letters)


# --- rendering ---------------------------------------------------------------------------------------------------


@dataclass
class Line:
    image: np.ndarray  # (LINE_HEIGHT, w) uint8 grey, w a multiple of COLUMN
    text: str
    columns: list[int] = field(default_factory=list)  # per 16-px column: index into text of the char under its centre, -1 none
    background: int = 255


def render_line(text: str, font_path: str, *, size: int = 24, ink: int = 0, background: int = 255,
                pad_left: int = 4, pad_right: int = 4, margin_top: float = 0.25, margin_bottom: float = 0.25,
                blur: float = 0.0, noise: float = 0.0, rng: np.random.Generator | None = None) -> Line:
    """Render `text` in one font, crop to the line box plus margins, scale to LINE_HEIGHT, pad to a multiple of 16."""
    font = _font(font_path, size)
    ascent, descent = font.getmetrics()
    box_h = ascent + descent
    top = int(round(margin_top * box_h))
    bottom = int(round(margin_bottom * box_h))
    width = int(np.ceil(font.getlength(text))) + 2
    canvas = Image.new("L", (width, box_h + top + bottom), background)
    ImageDraw.Draw(canvas).text((1, top), text, font=font, fill=ink)
    if blur > 0:
        canvas = canvas.filter(ImageFilter.GaussianBlur(blur))
    scale = LINE_HEIGHT / canvas.height
    new_w = max(1, int(round(canvas.width * scale)))
    canvas = canvas.resize((new_w, LINE_HEIGHT), Image.BILINEAR)
    total = pad_left + new_w + pad_right
    total = -(-total // COLUMN) * COLUMN
    out = np.full((LINE_HEIGHT, total), background, dtype=np.uint8)
    out[:, pad_left:pad_left + new_w] = np.asarray(canvas)
    if noise > 0:
        g = rng if rng is not None else np.random.default_rng()
        out = np.clip(out.astype(np.float32) + g.normal(0, noise, out.shape), 0, 255).astype(np.uint8)
    # the character under each column centre (x in the final image)
    edges = [font.getlength(text[:i]) for i in range(len(text) + 1)]
    xs = [pad_left + (1 + e) * scale for e in edges]
    columns = []
    for c in range(total // COLUMN):
        cx = c * COLUMN + COLUMN / 2
        k = int(np.searchsorted(xs, cx, side="right")) - 1
        columns.append(k if 0 <= k < len(text) else -1)
    return Line(out, text, columns, background)


def fonts_list(fonts: dict[str, list[str]] | None = None) -> list[str]:
    fonts = fonts or find_fonts()
    out = []
    for family, paths in fonts.items():
        out += paths if family != "Pillow" else paths * 4  # the built-in font as one more "family"
    return out


def random_line(rng: random.Random, fonts: list[str], lo: int, hi: int, *, clean: bool = False,
                max_width: int = 1280) -> Line:
    """A random text rendered with random font, size, grey levels, margins and (unless clean) blur/noise."""
    for _ in range(20):
        font = rng.choice(fonts)
        extra = _font_covers(font, EXTRA_CHARS) if font != PIL_DEFAULT else ""
        text = random_text(rng, lo, hi, extra)
        bg = 255 if clean or rng.random() < 0.5 else rng.randint(190, 255)
        ink = 0 if clean or rng.random() < 0.4 else rng.randint(0, max(0, bg - 130))
        line = render_line(
            text, font, size=rng.randint(20, 44), ink=ink, background=bg,
            pad_left=rng.randint(0, 12), pad_right=rng.randint(0, 12),
            margin_top=rng.uniform(0.0, 0.35), margin_bottom=rng.uniform(0.0, 0.35),
            blur=0.0 if clean or rng.random() < 0.6 else rng.uniform(0.2, 0.9),
            noise=0.0 if clean or rng.random() < 0.6 else rng.uniform(1.0, 10.0),
            rng=np.random.default_rng(rng.getrandbits(32)),
        )
        if line.image.shape[1] <= max_width:
            return line
        hi = max(lo, int(hi * 0.7))
    return line


@dataclass
class LineBatch:
    images: np.ndarray  # (b, LINE_HEIGHT, W) uint8
    texts: list[str]
    columns: np.ndarray  # (b, W // 16) int: char index under each column centre, -1 none


def pad_lines(lines: list[Line]) -> LineBatch:
    W = max(line.image.shape[1] for line in lines)
    images = np.empty((len(lines), LINE_HEIGHT, W), dtype=np.uint8)
    columns = np.full((len(lines), W // COLUMN), -1, dtype=np.int64)
    for i, line in enumerate(lines):
        w = line.image.shape[1]
        images[i, :, :w] = line.image
        images[i, :, w:] = line.background
        columns[i, : len(line.columns)] = line.columns
    return LineBatch(images, [line.text for line in lines], columns)


def render_batch(seed: int, batch_size: int, *, fonts: list[str] | None = None, length_class: int | None = None,
                 clean: bool = False, max_width: int = 1280) -> LineBatch:
    """One training batch; all lines of a batch come from one length class, so their widths are similar."""
    rng = random.Random(seed)
    fonts = fonts or fonts_list()
    k = length_class if length_class is not None else rng.randrange(len(LENGTH_CLASSES))
    lo, hi = LENGTH_CLASSES[k]
    return pad_lines([random_line(rng, fonts, lo, hi, clean=clean, max_width=max_width) for _ in range(batch_size)])


def _worker_batch(args) -> LineBatch:
    seed, batch_size, fonts, max_width = args
    return render_batch(seed, batch_size, fonts=fonts, max_width=max_width)


class BatchStream:
    """An endless stream of rendered batches, made by `workers` processes (0 = in this process)."""

    def __init__(self, batch_size: int, *, seed: int = 0, workers: int = 0, fonts: list[str] | None = None,
                 max_width: int = 1280, prefetch: int = 4):
        self.batch_size, self.seed, self.workers = batch_size, seed, workers
        self.fonts = fonts or fonts_list()
        self.max_width = max_width
        self.prefetch = prefetch
        self._pool = None

    def _tasks(self, start: int) -> Iterator[tuple]:
        i = start
        while True:
            yield (self.seed * 1_000_003 + i, self.batch_size, self.fonts, self.max_width)
            i += 1

    def batches(self, start: int = 0) -> Iterator[LineBatch]:
        if self.workers <= 0:
            for task in self._tasks(start):
                yield _worker_batch(task)
            return
        import multiprocessing as mp

        # fork where there is one (Linux): the workers run only numpy/Pillow, and spawn would re-run an unguarded
        # `python -m app` main module in every worker
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        self._pool = mp.get_context(method).Pool(self.workers)
        # a bounded number of batches in flight (Pool.imap would render ahead without limit), in task order, so a
        # resumed run sees the same data
        from collections import deque

        tasks = self._tasks(start)
        pending = deque(self._pool.apply_async(_worker_batch, (next(tasks),))
                        for _ in range(self.workers * self.prefetch))
        try:
            while True:
                result = pending.popleft().get()
                pending.append(self._pool.apply_async(_worker_batch, (next(tasks),)))
                yield result
        finally:
            self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool = None
