"""Tesseract's LSTM line recogniser, in process (tesserocr binds libtesseract; its wheel carries the library),
reading the language models the system has installed (`tesseract-ocr-<lang>` on Debian/Ubuntu,
`tesseract-lang` on Homebrew: app.core.scripts.catalogue).

    tess = shared()                       # one per process; None parts are reported, never guessed
    tess.languages                        # {'rus', 'ell', ...} found in the tessdata folder
    line = tess.read(image, "rus")        # TessLine(text, conf 0..1, words in the image's pixels)
    lines = tess.read_block(page, "rus")  # every line Tesseract finds itself (its page segmentation)
    tess.script_name(image)               # Tesseract OSD's script name ('Cyrillic'), None when it cannot tell

API objects are kept open (loading a model takes tens of milliseconds; a line reads in 10-40 ms), one per
language and mode at first; a tesserocr API object is not thread-safe, so each serves one call at a time, and a call
that finds every one of its language busy gets another, up to `PER_LANGUAGE` (two: the caller's thread and the
script router's reading-ahead one; one on a one-core machine): two threads read two lines at once, in one language
or two (tesserocr lets go of the GIL while Tesseract reads). Reading a line runs no process.

What must never live here: choosing a script (router.py), the pipeline, Qt.
"""
from __future__ import annotations

import contextlib
import html
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# where distributions put Tesseract's language models (TESSDATA_PREFIX first, as Tesseract itself reads it)
TESSDATA_DIRS = ("/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
                 "/usr/share/tessdata", "/usr/local/share/tessdata", "/opt/homebrew/share/tessdata",
                 "/usr/local/share/tesseract-ocr/tessdata", "C:/Program Files/Tesseract-OCR/tessdata")
MIN_HEIGHT = 32  # a line lower than this (pixels) is scaled up before reading: small print reads better
BORDER = 10  # white pixels around a line crop
UNSPACED = ("tha", "lao", "khm", "mya")  # scripts written without spaces between words
SPACE_GAP = 0.45  # ... where a gap this wide (share of the line's height) between two letter clusters is a space
PER_LANGUAGE = max(1, min(2, os.cpu_count() or 1))  # API objects at most of one language and mode (calls at once)
# what Tesseract's models write otherwise than the text's own code points
_FOLDS = {"ell": (("\u00b5", "\u03bc"),),  # MICRO SIGN for GREEK SMALL LETTER MU
          "tha": (("\u0e4d\u0e32", "\u0e33"),)}  # NIKHAHIT + SARA AA for SARA AM
# … and what the Devanagari models write in ASCII or with a joiner: a colon after a letter for the visarga,
# "|" for the danda (two of them: the double danda), a ZERO WIDTH NON-JOINER after a virama (texts have none)
_DEVANAGARI = ((re.compile(r"(?<=[\u0900-\u0963\u0971-\u097f]):"), "\u0903"),
               (re.compile("\u094d\u200c"), "\u094d"),
               (re.compile(r"[|\u0964] ?[|\u0964]"), "\u0965"), (re.compile(r"\|"), "\u0964"))
_PATTERN_FOLDS = {"hin": _DEVANAGARI, "mar": _DEVANAGARI, "san": _DEVANAGARI, "nep": _DEVANAGARI}


@dataclass
class TessLine:
    text: str
    conf: float  # 0..1: Tesseract's mean word confidence
    lang: str
    words: list[list[Any]] = field(default_factory=list)  # [x0, y0, x1, y1, word, conf] in the image's pixels
    box: tuple[float, ...] = ()  # the line's box in the image's pixels (block reads: `read_block`)


def tessdata_dir() -> Path | None:
    """The folder holding *.traineddata (None: none found)."""
    env = os.environ.get("TESSDATA_PREFIX")
    candidates = [Path(env), Path(env) / "tessdata"] if env else []
    conda = os.environ.get("CONDA_PREFIX")
    if conda:
        candidates.append(Path(conda) / "share" / "tessdata")
    candidates += [Path(p) for p in TESSDATA_DIRS]
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("*.traineddata")):
            return folder
    return None


def installed_languages(folder: Path | None) -> frozenset[str]:
    if folder is None:
        return frozenset()
    return frozenset(p.name[:-len(".traineddata")] for p in folder.glob("*.traineddata"))


def binding_missing() -> str:
    """Why the binding cannot be used ('' when it can)."""
    try:
        import tesserocr  # noqa: F401
    except ImportError as exc:
        return f"the tesserocr package is missing (`pip install tesserocr`): {exc}"
    return ""


class Tesseract:
    def __init__(self, folder: Path | None = None, languages: frozenset[str] | None = None) -> None:
        self.folder = folder if folder is not None else tessdata_dir()
        found = installed_languages(self.folder) if not binding_missing() else frozenset()
        self.languages = found if languages is None else frozenset(languages) & found
        self._apis: dict[tuple[str, int], list[Any]] = {}  # (language, mode) -> its API objects, made on demand
        self._free: dict[tuple[str, int], list[Any]] = {}  # ... those no call is using
        self._lock = threading.Condition()

    @property
    def osd(self) -> bool:
        return "osd" in installed_languages(self.folder) and not binding_missing()

    @contextlib.contextmanager
    def _api(self, lang: str, psm: int):
        """An API object of `lang` in mode `psm` for this call alone: a free one, a new one while there are fewer
        than PER_LANGUAGE, else the first given back."""
        from tesserocr import OEM, PyTessBaseAPI

        key = (lang, psm)
        with self._lock:
            made, free = self._apis.setdefault(key, []), self._free.setdefault(key, [])
            while not free and len(made) >= PER_LANGUAGE:
                self._lock.wait()
            api = free.pop() if free else None
            if api is None:
                oem = OEM.TESSERACT_ONLY if lang == "osd" else OEM.LSTM_ONLY
                api = PyTessBaseAPI(path=str(self.folder) + os.sep, lang=lang, psm=psm, oem=oem)
                made.append(api)
        try:
            yield api
        finally:
            with self._lock:
                free.append(api)
                self._lock.notify()

    def read(self, image, lang: str) -> TessLine:
        """One text line (a PIL image) read with `lang`'s model; read again as a raw line (no layout analysis)
        when the single-line mode finds nothing (it gives up on a crop where a neighbour's letters touch the
        line's)."""
        from tesserocr import PSM

        if lang not in self.languages:
            raise ValueError(f"Tesseract has no {lang!r} model here")
        prepared, scale = prepare(image)
        with self._api(lang, PSM.SINGLE_LINE) as api:
            text, words = self._recognise(api, prepared, scale, lang)
        if not words:
            with self._api(lang, PSM.RAW_LINE) as api:
                text, words = self._recognise(api, prepared, scale, lang)
        words = spelled(words, text, lang)
        conf = sum(w[5] for w in words) / len(words) if words else 0.0
        return TessLine(text, round(conf, 4), lang, words)

    @staticmethod
    def _recognise(api, prepared, scale: float, lang: str) -> tuple[str, list[list[Any]]]:
        from tesserocr import RIL, iterate_level

        api.SetImage(prepared)
        api.Recognize()
        words: list[list[Any]] = []
        it = api.GetIterator()
        for w in iterate_level(it, RIL.WORD) if it is not None else ():
            try:
                text, box = w.GetUTF8Text(RIL.WORD), w.BoundingBox(RIL.WORD)
            except RuntimeError:  # a word with no text (tesserocr raises rather than return "")
                continue
            if not text or not text.strip() or box is None:
                continue
            x0, y0, x1, y1 = ((v - BORDER) / scale for v in box)
            words.append([round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1),
                          fold(text.strip(), lang), round(w.Confidence(RIL.WORD) / 100.0, 4)])
        # the line's own text: words of a script written without spaces (Thai) are not joined by one
        return fold(" ".join(api.GetUTF8Text().split()), lang), words

    def read_block(self, image, lang: str) -> list[TessLine]:
        """Every text line Tesseract finds in `image` (a block or a page: its own page segmentation), read with
        `lang`'s model, its words in reading order (logical order for right-to-left lines, as its hOCR writes
        them: its word iterator writes their letters visually); boxes in the image's pixels."""
        from PIL import ImageOps
        from tesserocr import PSM

        if lang not in self.languages:
            raise ValueError(f"Tesseract has no {lang!r} model here")
        prepared = ImageOps.expand(image.convert("L"), border=BORDER, fill=255)
        with self._api(lang, PSM.AUTO) as api:
            api.SetImage(prepared)
            hocr = api.GetHOCRText(0)
        out = []
        for box, words in hocr_lines(hocr, -BORDER):
            if words:
                words = [[*w[:4], fold(w[4], lang), w[5]] for w in words]
                conf = round(sum(w[5] for w in words) / len(words), 4)
                out.append(TessLine(fold(joined(words, lang, box[3] - box[1]), lang), conf, lang, words, box))
        return out

    def script_name(self, image) -> str | None:
        """Tesseract OSD's name for the script of `image` (a few lines), None when it cannot tell."""
        return (self.orientation(image) or {}).get("script_name") or None

    def orientation(self, image) -> dict | None:
        """Tesseract OSD's reading of a page: {"orient_deg", "orient_conf", "script_name", "script_conf"};
        None when OSD is not installed or cannot tell."""
        from tesserocr import PSM

        if not self.osd:
            return None
        prepared, _ = prepare(image)
        with self._api("osd", PSM.OSD_ONLY) as api:
            api.SetImage(prepared)
            found = api.DetectOrientationScript()
        return found or None

    def close(self) -> None:
        """End every API object, once the calls using them are done."""
        with self._lock:
            while any(len(self._free.get(key, ())) < len(made) for key, made in self._apis.items()):
                self._lock.wait()
            for made in self._apis.values():
                for api in made:
                    api.End()
            self._apis.clear()
            self._free.clear()


_HOCR = re.compile(r"class='(?:ocr_line|ocr_header|ocr_caption|ocr_textfloat)'[^>]*?title=\"bbox (\d+) (\d+) (\d+) "
                   r"(\d+)|class='ocrx_word'[^>]*?title='bbox (\d+) (\d+) (\d+) (\d+); x_wconf (\d+)'[^>]*>(.*?)</span>",
                   re.S)


def hocr_lines(hocr: str, shift: float = 0.0) -> list[tuple[tuple[float, ...], list[list[Any]]]]:
    """Tesseract's hOCR as lines: (line box, words [x0, y0, x1, y1, text, conf 0..1]), boxes moved by `shift`."""
    lines: list[tuple[tuple[float, ...], list[list[Any]]]] = []
    for m in _HOCR.finditer(hocr):
        if m.group(1) is not None:
            lines.append((tuple(float(v) + shift for v in m.group(1, 2, 3, 4)), []))
            continue
        text = html.unescape(re.sub(r"<[^>]+>", "", m.group(10))).strip()
        if lines and text:
            lines[-1][1].append([*(float(v) + shift for v in m.group(5, 6, 7, 8)), text, int(m.group(9)) / 100.0])
    return lines


def joined(words: list[list[Any]], lang: str, height: float) -> str:
    """A line's words as its text: one space between words, except for a script written without spaces (Thai),
    whose hOCR "words" are letter clusters: a space there only where the page shows a gap (SPACE_GAP)."""
    if lang not in UNSPACED:
        return " ".join(w[4] for w in words)
    text = words[0][4] if words else ""
    for prev, w in zip(words, words[1:]):
        text += (" " if w[0] - prev[2] >= SPACE_GAP * height else "") + w[4]
    return text


def spelled(words: list[list[Any]], text: str, lang: str) -> list[list[Any]]:
    """The words as the line's text spells them. Tesseract's word iterator writes a right-to-left word in visual
    order ("לכ" for "כל"); the line's text is in logical order. Its words are taken in reading order (from the
    right for Arabic and Hebrew); [] when they do not match the text's words one for one."""
    from app.core.scripts.catalogue import script_of_language

    script = script_of_language(lang)
    tokens = text.split()
    if len(tokens) != len(words):
        return [] if script is not None and script.rtl else words
    order = sorted(words, key=lambda w: -w[0]) if script is not None and script.rtl else words
    return [[*w[:4], token, w[5]] for w, token in zip(order, tokens)]


def fold(text: str, lang: str) -> str:
    for a, b in _FOLDS.get(lang, ()):
        text = text.replace(a, b)
    for pattern, b in _PATTERN_FOLDS.get(lang, ()):
        text = pattern.sub(b, text)
    return text


def prepare(image):
    """A line crop as Tesseract reads it best: grey, scaled up when small, on white: (image, scale)."""
    from PIL import ImageOps

    grey = image.convert("L")
    scale = 1.0
    if 0 < grey.height < MIN_HEIGHT:
        scale = MIN_HEIGHT / grey.height
        grey = grey.resize((max(1, round(grey.width * scale)), MIN_HEIGHT))
    return ImageOps.expand(grey, border=BORDER, fill=255), scale


_SHARED: Tesseract | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> Tesseract:
    """The process's Tesseract (its models stay loaded between pages and documents)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Tesseract()
        return _SHARED
