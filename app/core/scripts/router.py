"""Which recogniser reads each line: the script router (docs/scripts.md).

Every line is first read by the bundled recogniser (PP-OCRv6: Latin, Chinese, Japanese). A line it could not
read is a *suspect* (`suspect`): most of its box left unread, a share of letters in a script it only half
knows (Greek), or a low confidence. A region without suspects costs nothing more. For a region with suspects:

0. **Evidence.** Suspects whose letters say no other script (`foreign`) are shown to Tesseract's script
   detector (OSD) first: when it names a script the bundled recogniser reads, the bundled readings stand.
   Lines read as Latin look-alikes (letters that make no words: app.core.scripts.lookalike) are suspects too
   when other lines are or most lines are such, unless OSD over the whole image names a script it reads.
   Suspects with no such evidence, which OSD cannot name, in a block that reads as a script the bundled
   recogniser reads (its other lines make Latin words or hold Chinese/Japanese text; else OSD over the whole
   image), keep their bundled readings (noise, picture text, codes): only a cell of a few characters is tried
   further, and another reading of it must be SURE.
1. **The script.** Its widest suspect lines are read with the first Tesseract language of every installed
   script (and English), in turn; the best mean confidence wins when it reaches ACCEPT and its letters are in
   that language's script, and one that reads them CLEAR ends the comparison. The page's language so far is
   tried first and kept without the comparison when it reads SURE. Then the other languages of the same script
   (Russian, Ukrainian, Bulgarian, Serbian; Arabic, Persian; Hindi, Marathi) are compared on the same lines.
2. **The lines.** Every suspect line is read with that language and keeps Tesseract's reading when its
   confidence reaches ACCEPT and its letters are in the script; otherwise the bundled reading stands (and
   stays flagged by the engines' coverage check). A region whose script is Latin keeps the bundled readings.
   Lines read as Latin are tried in the script found only when OSD over the whole image (once a page) does not
   name a script the bundled recogniser reads.
   With MIN_LINES lines or more to read, Tesseract reads their area whole and gives each line the words that
   fall in its box (app.core.scripts.block); a line that gets no sure reading so is read on its own crop.
3. **No recogniser.** When nothing installed reads the lines, Tesseract's script detector (OSD) names their
   script; a script whose model is not installed is reported with the line that installs it (`Unread`).

Vertical pieces (taller than VERTICAL times their width: vertical CJK) are not routed; they are counted.

What must never live here: the bundled recogniser, decoding, the pipeline, Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from app.core.base.stages import stage
from app.core.scripts import catalogue
from app.core.scripts.block import MIN_LINES, block_readings
from app.core.scripts.crops import crop_line as cut_line, stack
from app.core.scripts.direction import vertical
from app.core.scripts.line_reads import LineReads
from app.core.scripts.lookalike import KNOWN_SHARE, known_share, lookalike, mostly_lookalikes
from app.core.scripts.tesseract import Tesseract, TessLine, binding_missing, shared
from app.core.text.textcheck import MIN_LINE_COVERAGE, dominant_script, line_coverage, script_counts

SUSPECT_COVERAGE = 0.5  # a line whose reading covers less of its box than this is re-read
FOREIGN_SHARE = 0.3  # … or whose letters are this much in a script other than Latin/CJK
LOW_SCORE = 0.6  # … or whose reading is this unsure
UNREAD_HEIGHT = 10  # a line with no letter read in it, this tall and UNREAD_ASPECT times as wide, is no speck
UNREAD_ASPECT = 4
ACCEPT = 0.6  # a Tesseract reading at least this sure (and in its script) is taken
SURE = 0.8  # the page's language reading this sure is not compared with the others (nor checked by OSD)
# a language reading the samples this sure (SHAKY's bar where higher) is not compared with the languages after it: on
# the real set's lines the right model read 0.94-0.96 and no wrong one above 0.8, and each comparison reads the
# samples twice (again on their own when unsure) in every script left
CLEAR = 0.9
SHAKY = {"tha": 0.9}  # models that read other scripts this confidently (Thai: 0.8 on a Hebrew line)
PAGE_LEAD = 0.1  # another language of the page's script must read the samples this much surer to take over from it
SAMPLES = 3  # suspect lines (the widest) the script and its language are found on
MIN_CJK = 10  # Chinese/Japanese characters a block's other lines need to say the block is in that script
SHORT = 3  # characters: a suspect this short (a table's figure) is tried in every script whatever its block reads
# a line's crop for Tesseract: its box widened by these shares of its height (0.1 made a chart's tick labels read
# sure as text on a Latin page, its picture then taken for text: tests/test_batch_pipeline.py)
PAD_Y, PAD_X = 0.2, 0.3
WIDE_PAD_Y = 0.3  # … and the taller crop a line is read again in when it read unsure
LATIN = "eng"
LOST = "\ufffd"  # a letter the text it came in had no glyph for (the layout's OCR font lacks Greek)


@dataclass(frozen=True)
class Routed:
    """A line read by another recogniser than the bundled one."""

    text: str
    conf: float
    reader: str  # "tesseract:rus"
    script: str  # catalogue id ("cyrillic")
    words: list[list[Any]] = field(default_factory=list)  # [x0, y0, x1, y1, word, conf], region pixels
    rtl: bool = False


@dataclass(frozen=True)
class Unread:
    """A line no installed recogniser reads: its script (as OSD names it; '' unknown), what would read it."""

    script: str
    install: str


def suspect(box: Sequence[float], text: str, score: float = 1.0) -> bool:
    """Could the bundled recogniser not read this line? (box x0, y0, x1, y1; its reading, mean confidence)"""
    x0, y0, x1, y1 = (float(v) for v in box[:4])
    if vertical(box):
        return False
    if line_coverage((x0, y0, x1, y1), text) < SUSPECT_COVERAGE or not text.strip():
        return True
    return foreign(text) or score < LOW_SCORE


def foreign(text: str) -> bool:
    """Do the bundled reading's letters say another script: a lost glyph, or FOREIGN_SHARE of its letters (two
    at least) in a script other than Latin/CJK?"""
    if LOST in text:
        return True
    counts = script_counts(text)
    letters = sum(counts.values())
    other = sum(n for s, n in counts.items() if s not in ("latin", "cjk"))
    return letters > 0 and other >= 2 and other >= FOREIGN_SHARE * letters


def unread_line(box: Sequence[float], text: str) -> bool:
    """A text line's shape (UNREAD_ASPECT times as wide as tall, UNREAD_HEIGHT px at least) with not one letter
    read in it: no speck, and evidence of a script the bundled recogniser does not read even when OSD, as it
    does on a Hangul headline, calls it Latin."""
    x0, y0, x1, y1 = (float(v) for v in box[:4])
    return not any(c.isalnum() for c in text) and y1 - y0 >= UNREAD_HEIGHT and x1 - x0 >= UNREAD_ASPECT * (y1 - y0)


def words_around(lines: Sequence[tuple[Sequence[float], str, float]], todo: Sequence[int]) -> bool:
    """Are the lines not in `todo` (the block's sure readings) Latin text that makes words (most letters Latin,
    KNOWN_SHARE of them in known words: app.core.scripts.lookalike)? False when too few letters tell."""
    skip = set(todo)
    texts = [text for i, (_, text, _) in enumerate(lines) if i not in skip]
    if dominant_script(texts) != "latin":  # a Chinese block's Latin names make words too
        return False
    share = known_share(" ".join(texts))
    return share is not None and share >= KNOWN_SHARE


def in_script(text: str, lang: str) -> bool:
    """Are the letters Tesseract wrote for `lang` in its script (at least half; no letters: digits, yes)?"""
    counts = script_counts(text)
    letters = sum(counts.values())
    if not letters:
        return True
    script = catalogue.script_of_language(lang)
    want = {"latin"} if script is None else {script.id} | ({"cjk"} if script.id == "hangul" else set())
    return sum(n for s, n in counts.items() if s in want) >= 0.5 * letters


def taken(got: TessLine, lang: str, bar: float) -> bool:
    """Is a Tesseract reading taken: at least `bar` sure, some text, its letters in `lang`'s script?"""
    return got.conf >= bar and bool(got.text.strip()) and in_script(got.text, lang)


class ScriptRouter:
    def __init__(self, tesseract: Tesseract | None = None) -> None:
        self._tess = tesseract
        self.page_lang: str | None = None  # the language the page's lines were last found in
        # OSD's name for each image routed on this page (`page_script`), asked once
        self._page_osd: dict[tuple[int, tuple[int, int]], str | None] = {}

    @property
    def tess(self) -> Tesseract:
        if self._tess is None:
            self._tess = shared()
        return self._tess

    def reset(self) -> None:
        """A new page: its script is found anew."""
        self.page_lang = None
        self._page_osd.clear()

    def page_script(self, image) -> str | None:
        """Tesseract OSD's name for the script of the whole image (the page, or the region routed), asked
        once a page; None when it cannot tell."""
        key = (id(image), tuple(image.size))
        if key not in self._page_osd:
            self._page_osd[key] = self.tess.script_name(image)
        return self._page_osd[key]

    def candidates(self) -> list[str]:
        have = self.tess.languages
        first = [next((lang for lang in s.languages if lang in have), "") for s in catalogue.SCRIPTS.values()]
        return [lang for lang in ([LATIN] if LATIN in have else []) + first if lang]

    def route(self, image, lines: Sequence[tuple[Sequence[float], str, float]]
              ) -> list[Routed | Unread | None]:
        """Per line (box in `image` pixels, the bundled reading, its mean confidence): another recogniser's
        reading, an Unread (nothing installed reads it), or None (the bundled reading stands)."""
        out: list[Routed | Unread | None] = [None] * len(lines)
        todo = [i for i, (box, text, score) in enumerate(lines) if suspect(box, text, score)]
        # read as Latin look-alikes (letters that make no words: app.core.scripts.lookalike): suspects too
        # when there are other suspects or most lines are such, and OSD over the image names no script the
        # bundled recogniser reads ("UXOGU XIALU" is Hebrew; codes in a table on a Latin page stay as read)
        seen = set(todo)
        shams = [i for i, (box, text, _) in enumerate(lines)
                 if i not in seen and not vertical(box) and lookalike(text)]
        if shams and not (todo or mostly_lookalikes([text for _, text, _ in lines])):
            shams = []
        if not todo and not shams:
            return out
        with stage("scripts"):  # where a page's time goes (app.core.base.stages)
            # the block's other lines reading as words say so as surely as OSD over the whole image, for free
            if shams and (words_around(lines, todo + shams) or self.page_script(image) in catalogue.BUNDLED_OSD):
                shams = []
            if not todo and not shams:
                return out
            return self._route(image, lines, sorted(todo + shams), out, set(shams))

    def _route(self, image, lines, todo: list[int], out: list, shams: frozenset[int] | set[int] = frozenset()
               ) -> list[Routed | Unread | None]:
        if binding_missing() or not self.tess.languages:
            hint = "pip install tesserocr" if binding_missing() else catalogue.install_all_hint()
            for i in todo:
                if line_coverage(tuple(lines[i][0][:4]), lines[i][1]) < MIN_LINE_COVERAGE:
                    out[i] = Unread("", hint)
            return out
        crops = {i: crop_line(image, lines[i][0], isolate=False) for i in todo}

        def fetch(i: int, lang: str) -> TessLine:
            """Line `i` in `lang`; read again with its neighbours' halves whitened when it reads unsure, that
            reading taken only when SURE (whitened, a chart's bars read as a Korean letter 0.67 sure)."""
            got = self.tess.read(crops[i], lang)
            if got.conf < ACCEPT:
                alone = self.tess.read(crop_line(image, lines[i][0]), lang)
                got = alone if alone.conf >= SURE else got
            return got

        reads = LineReads(fetch)  # each line in each language read once, the next ones on the other core meanwhile
        try:
            return self._routed(image, lines, todo, out, shams, crops, reads)
        finally:
            reads.settle()

    def _routed(self, image, lines, todo: list[int], out: list, shams, crops: dict, reads: LineReads
                ) -> list[Routed | Unread | None]:
        read = reads.read

        def mean_conf(ids: list[int], lang: str, *then: str) -> float:
            """`ids`' mean confidence in `lang`; its other lines, then `ids` in each language of `then` (to be
            asked for next), read meanwhile on the other core, each language from its last line (this thread reads
            from the first)."""
            reads.ahead(ids[:0:-1], lang)
            for other in then:
                reads.ahead(ids[::-1], other)
            return reads.mean_conf(ids, lang, in_script)

        samples = sorted(todo, key=lambda i: -(lines[i][0][2] - lines[i][0][0]))[:SAMPLES]
        osd: list[str | None] = []  # Tesseract OSD's name for the samples' script, asked once

        def osd_name() -> str | None:
            if not osd:
                osd.append(self.tess.script_name(stack([crops[i] for i in samples])))
            return osd[0]

        # no suspect's letters say another script: then Tesseract's script detector must, or the bundled
        # readings stand (the lines are merely unsure; a speck read as nothing on a Latin scan was Hebrew)
        evidence = any(foreign(lines[i][1]) or unread_line(lines[i][0], lines[i][1]) for i in todo)
        if not evidence and osd_name() in catalogue.BUNDLED_OSD:
            return out
        # ... nor, when the detector cannot tell (no script named for a few lines of noise, a stamp, codes) and the
        # block reads as a script the bundled recogniser reads, do its longer suspects: a Latin page's speck, DNA
        # sequences or picture text went through every model (a second a page) and codes were flagged as a
        # script nothing reads. A cell of a few characters still goes: another model reads a misread figure
        # cheaply, and its reading is taken only when SURE (Hebrew's read a Chinese page's quote mark as "₪3").
        cells_only = not evidence and osd_name() is None and self._bundled_block(image, lines, todo)
        if cells_only:
            todo = [i for i in todo if 0 < len(lines[i][1].strip()) <= SHORT]
            if not todo:
                return out
            samples = sorted(todo, key=lambda i: -(lines[i][0][2] - lines[i][0][0]))[:SAMPLES]
        lang = self._identify(samples, mean_conf, read, every=cells_only)  # a cell is cheap to read in every one
        if cells_only and (lang is None or mean_conf(samples, lang) < SURE):
            return out
        if lang is not None and not self._confirmed(lang, mean_conf(samples, lang), osd_name):
            lang = self._by_osd(samples, mean_conf, read, osd_name)  # OSD's script, when its model reads it
        left = [i for i in todo if line_coverage(tuple(lines[i][0][:4]), lines[i][1]) < MIN_LINE_COVERAGE
                or (lang is None and i in shams)]  # look-alikes nothing reads: not read, whatever they cover
        # nothing reads them, or only English where the bundled recogniser (which reads Latin well) read
        # nothing: the lines' script is named, and what would read it
        if lang is None or (lang == LATIN and set(samples) <= set(left)):
            unread = self._unread(osd_name())
            for i in left if unread is not None else ():
                out[i] = unread
            if lang is None or unread is not None:
                return out
        self.page_lang = lang
        if lang == LATIN:
            return out
        script = catalogue.script_of_language(lang)
        # a line the bundled recogniser read as Latin look-alikes ("RIOT UIT" for Marathi) or digits on a page
        # found in another script: that script's model takes it when it reads it SURE, unless the whole page
        # reads as a script the bundled recogniser reads (a speck on a Latin scan sent 120 lines to Hebrew)
        todo_set = set(todo)
        alike = [i for i, (box, text, _) in enumerate(lines)
                 if i not in todo_set and not vertical(box) and dominant_script([text]) in ("latin", "")]
        if alike and self.page_script(image) in catalogue.BUNDLED_OSD:
            alike = []
        crops.update({i: crop_line(image, lines[i][0], isolate=False) for i in alike})
        rtl = bool(script and script.rtl)
        # many lines: Tesseract reads their area whole, its words given to the lines (app.core.scripts.block)
        block = (block_readings(self.tess, image, lang, [line[0] for line in lines], todo + alike, rtl=rtl)
                 if len(todo) + len(alike) >= MIN_LINES else {})
        bars = {i: SURE if i not in todo_set and script_counts(lines[i][1]) else ACCEPT for i in todo + alike}
        # the lines read on their own crops (the block gave them no sure reading): the last ones on the other core
        alone_ids = [i for i in todo + alike if block.get(i) is None or not taken(block[i], lang, bars[i])]
        reads.ahead(alone_ids[:0:-1], lang)
        for i in todo + alike:
            bar = bars[i]
            got, origin = block.get(i), (0.0, 0.0)
            if got is None or not taken(got, lang, bar):
                alone, origin = self._read_alone(image, lines[i][0], crops, i, read, lang, bar)
                if got is None or alone.conf > got.conf:
                    got = alone
                else:
                    origin = (0.0, 0.0)
            if taken(got, lang, bar):
                ox, oy = origin
                words = [[round(w[0] + ox, 1), round(w[1] + oy, 1), round(w[2] + ox, 1), round(w[3] + oy, 1),
                          *w[4:]] for w in got.words]
                out[i] = Routed(got.text, got.conf, f"tesseract:{lang}", script.id if script else "", words, rtl)
        return out

    def _bundled_block(self, image, lines, todo: list[int]) -> bool:
        """Does the block read as a script the bundled recogniser reads? Its other lines make Latin words or are
        Chinese/Japanese text (free to tell), else OSD over the whole image (asked once an image) names such a
        script: the two columns of picture text on a magazine page (UNLV 8087) had no other lines to tell by."""
        if words_around(lines, todo):
            return True
        skip = set(todo)
        around = [text for i, (_, text, _) in enumerate(lines) if i not in skip]
        if script_counts(" ".join(around)).get("cjk", 0) >= MIN_CJK:  # however many Latin names beside them
            return True
        return self.page_script(image) in catalogue.BUNDLED_OSD

    def _read_alone(self, image, box, crops: dict, i: int, read, lang: str, bar: float):
        """Line `i` read on its own crop: (its reading, the crop's origin in `image`); a taller crop, as it is
        (nothing whitened), when the first reads under `bar` (marks above or below the box: Arabic tanwin)."""
        got, crop = read(i, lang), crops[i]
        if got.conf < bar:
            taller = crop_line(image, box, WIDE_PAD_Y, isolate=False)
            again = self.tess.read(taller, lang)
            if again.conf > got.conf:
                crop, got = taller, again
        return got, crop.info.get("origin", (0.0, 0.0))

    def _identify(self, samples: list[int], mean_conf, read, every: bool = False) -> str | None:
        """The language the sample lines read best in (None: none reads them ACCEPT-sure): the page's language
        when it reads them SURE, else the best of every script's first language (the first that reads them CLEAR,
        unless `every`); then the language of that script (`family`)."""
        if self.page_lang in self.tess.languages and mean_conf(samples, self.page_lang) >= SURE:
            return self.family(self.page_lang, samples, mean_conf, read)
        scored: dict[str, float] = {}
        langs = self.candidates()
        for k, lang in enumerate(langs):  # in turn; one that reads them CLEAR ends the comparison (no other nears it)
            # the next language read meanwhile once English has not ended it (on a Latin page it mostly does)
            scored[lang] = mean_conf(samples, lang, *(langs[k + 1:] if every else langs[k + 1:k + 2] if k else ()))
            if not every and scored[lang] >= max(CLEAR, SHAKY.get(lang, 0.0)):
                break
        if not scored:
            return None
        best = max(scored, key=scored.get)
        return self.family(best, samples, mean_conf, read) if scored[best] >= ACCEPT else None

    def family(self, lang: str, samples: list[int], mean_conf, read) -> str:
        """Which language of `lang`'s script the samples are in: the one whose reading holds letters only it
        writes (the script's `marks`), else the most confident on the samples (one line alone misleads: Bulgarian's
        model read a loose Russian line surer than Russian's), unless the page's language of that script reads them
        within PAGE_LEAD of it."""
        script = catalogue.script_of_language(lang)
        family = [x for x in (script.languages if script else ()) if x in self.tess.languages]
        if len(family) < 2:
            return lang
        for x, letters in script.marks:
            if x in family and any(c in read(i, x).text for i in samples for c in letters):
                return x
        best = max(family, key=lambda x: mean_conf(samples, x, *family))
        if self.page_lang in family and mean_conf(samples, best) - mean_conf(samples, self.page_lang) < PAGE_LEAD:
            return self.page_lang  # a page keeps its language: three noisy lines of a Russian decree read surer
        return best  # in Ukrainian (0.84 against 0.76) came out with "є" for "е"

    def _by_osd(self, samples: list[int], mean_conf, read, osd_name) -> str | None:
        """The best language of the script Tesseract's OSD names, when it reads the samples ACCEPT-sure."""
        name = osd_name()
        script = catalogue.script_named_by_osd(name) if name else None
        first = next((x for x in (script.languages if script else ()) if x in self.tess.languages), None)
        if first is None:
            return None
        lang = self.family(first, samples, mean_conf, read)
        return lang if mean_conf(samples, lang) >= ACCEPT else None

    @staticmethod
    def _confirmed(lang: str, score: float, osd_name) -> bool:
        """Is the script found by confidence the lines' script? Sure without asking when `score` reaches SURE
        (SHAKY's bar for a model that reads other scripts confidently: Thai); otherwise Tesseract's script
        detector must name the same script (or, when it cannot tell, the score stands for a steady model)."""
        if score >= SHAKY.get(lang, SURE):
            return True
        name = osd_name()
        if name is None:
            return lang not in SHAKY
        if lang == LATIN:
            return name in catalogue.BUNDLED_OSD
        script = catalogue.script_of_language(lang)
        return script is not None and name in script.osd

    def _unread(self, name: str | None) -> Unread | None:
        """What the lines no installed model reads are written in (`name`: as OSD names it), and what would
        read them (None: a script the bundled recogniser or an installed model reads — the lines are merely
        hard to read)."""
        if name is None:  # no script detector to name them: what names the script and reads every one here
            return Unread("", "" if self.tess.osd else catalogue.install_all_hint())
        if name in catalogue.BUNDLED_OSD:
            return None
        script = catalogue.script_named_by_osd(name)
        if script is None:
            return Unread(name, "")
        missing = [lang for lang in script.languages if lang not in self.tess.languages]
        if not missing:
            return None
        return Unread(script.title, catalogue.install_hint(missing[0]))


def crop_line(image, box: Sequence[float], pad_y: float = PAD_Y, *, isolate: bool = True):
    """The line's crop for Tesseract (its box widened by PAD_X and `pad_y` of its height, the halves of
    neighbouring lines it takes in whitened: app.core.scripts.crops); `info["origin"]` says where it sits."""
    return cut_line(image, box, pad_y, PAD_X, isolate=isolate)


def route_stats(readers: Sequence[str], results: Sequence[Routed | Unread | None],
                boxes: Sequence[Sequence[float]] = ()) -> dict[str, Any]:
    """A region's stats of who read its lines (`readers`: each line's reader): `reader` (the readers joined by
    "+", most lines first), `readers` (lines per reader), `unreadable_scripts` (per script no installed model
    reads: its lines and the install line) and `vertical_lines`."""
    counts: dict[str, int] = {}
    for name in readers:
        counts[name] = counts.get(name, 0) + 1
    st: dict[str, Any] = {}
    if counts:
        st["reader"] = "+".join(sorted(counts, key=lambda k: (-counts[k], k)))
        st["readers"] = counts
    missing: dict[tuple[str, str], int] = {}
    for r in results:
        if isinstance(r, Unread):
            missing[r.script, r.install] = missing.get((r.script, r.install), 0) + 1
    if missing:
        st["unreadable_scripts"] = [{"script": s, "lines": n, "install": hint}
                                    for (s, hint), n in missing.items()]
    n_vertical = sum(1 for b in boxes if vertical(b))
    if n_vertical:
        st["vertical_lines"] = n_vertical
    return st
