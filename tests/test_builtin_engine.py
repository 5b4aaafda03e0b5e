"""The `builtin` engine: a clear refusal without a model; with the SHIPPED model (models/builtin, fp32 on CPU, nothing
mocked) it reads rendered lines exactly, self-speculative decoding gives the AR output token for token while
accepting drafts, and one region's lines show as one region's events."""
from __future__ import annotations

from pathlib import Path

import pytest

try:
    from app.core.engines import EngineUnavailable, open_engine
except ImportError:  # before the engines package
    from app.core.engines import EngineUnavailable, open_engine

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
needs_shipped = pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(), reason="missing part: no shipped built-in model (models/builtin/model.safetensors)")


@pytest.fixture
def no_bundled_models(monkeypatch, tmp_path):
    """The manifests without the bundled checkpoint folders."""
    import shutil

    import app.core.checkpoints.loader as loader
    import app.core.base.paths as paths

    folder = tmp_path / "models"
    folder.mkdir()
    for manifest in paths.models_dir().glob("*.json"):
        shutil.copy(manifest, folder)
    monkeypatch.setattr(paths, "models_dir", lambda: folder)
    if hasattr(loader, "models_dir"):
        monkeypatch.setattr(loader, "models_dir", lambda: folder)


def test_without_a_model_it_says_how_to_train_one(no_bundled_models):
    with pytest.raises(EngineUnavailable) as info:
        open_engine("builtin")
    msg = str(info.value)
    assert "No built-in model is installed" in msg
    assert "python -m app train" in msg and "docs/built-in-model.md" in msg


def test_a_missing_explicit_folder_is_reported(tmp_path):
    with pytest.raises(EngineUnavailable) as info:
        open_engine("builtin", model_path=tmp_path / "nothing")
    assert "does not exist" in str(info.value)


def region(lines: list[str], size: int = 28):
    """A white region with `lines` printed in DejaVu Sans (about 10-pt text at the engine's 200 DPI)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(DEJAVU, size)
    step = int(size * 1.7)
    img = Image.new("RGB", (int(max(font.getlength(t) for t in lines)) + 40, step * len(lines) + 20), "white")
    draw = ImageDraw.Draw(img)
    for i, t in enumerate(lines):
        draw.text((20, 10 + i * step), t, font=font, fill="black")
    return img


@pytest.fixture(scope="module")
def shipped(one_torch_thread):
    return {mode: open_engine("builtin", device="cpu", mode=mode) for mode in ("selfspec", "ar")}


@needs_shipped
def test_the_shipped_model_is_the_default_builtin_and_small():
    from app.core.engines.builtin.reader import is_reader_checkpoint

    assert is_reader_checkpoint(SHIPPED)
    assert (SHIPPED / "model.safetensors").stat().st_size <= 30 * 2 ** 20
    card = (SHIPPED / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "Apache-2.0" in card and "PP-OCRv6" in card


@needs_shipped
def test_reads_a_rendered_line_exactly(shipped):
    text = "The invoice of 12 March 2024 totals $1,234.50 (VAT incl.)"
    result = shipped["selfspec"].decode_region(region([text]), "text", region_id="r")
    assert result.text == text
    assert result.stats["lines"] == 1 and result.stats["tpf"] > 2.0


@needs_shipped
def test_selfspec_equals_ar_token_for_token_and_shows_one_region(shipped):
    from app.core.record.events import RegionFinished, RegionStarted, RoundVerified, TokensCommitted

    lines = ["Scriptorium reads printed pages line by line.", "Order No. 48213, due 2025-01-31: EUR 99.90",
             "quick brown foxes, lazy dogs; 7 + 8 = 15"]
    img = region(lines)
    events = []
    spec = shipped["selfspec"].decode_region(img, "text", region_id="p1-r01", emit=events.append)
    ar_events = []
    ar = shipped["ar"].decode_region(img, "text", region_id="p1-r01", emit=ar_events.append)
    assert spec.tokens == ar.tokens and spec.text == ar.text  # fp32: token for token
    assert len(spec.logprobs) == len(spec.tokens) and spec.logprobs == pytest.approx(ar.logprobs, abs=1e-4)
    assert all(lp <= 0 for lp in ar.logprobs) and min(ar.logprobs) < max(ar.logprobs)  # a confidence per token
    assert spec.text == " ".join(lines)
    assert spec.stats["lines"] == 3 and spec.stats["mode"] == "selfspec" and spec.stats["tpf"] > 2.0
    assert max(spec.stats["accepted"]) >= 4  # real drafts are accepted
    assert [type(e) for e in events].count(RegionStarted) == 1 and isinstance(events[-1], RegionFinished)
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert rounds and all(e.region_id == "p1-r01" for e in rounds)
    assert [e.round_index for e in rounds] == list(range(len(rounds)))  # numbered on across lines
    assert "".join(e.text for e in rounds) == spec.text  # the streamed pieces add up to the region's text
    steps = [e for e in ar_events if isinstance(e, TokensCommitted)]
    assert [e.step for e in steps] == list(range(len(steps))) and "".join(e.text for e in steps) == ar.text


@needs_shipped
def test_a_table_region_becomes_an_html_table(shipped):
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(DEJAVU, 28)
    img = Image.new("RGB", (900, 210), "white")
    draw = ImageDraw.Draw(img)
    for r, row in enumerate((("Item", "Stock", "Price"), ("Paper", "12", "4.20"), ("Ink", "", "9.80"))):
        for x, cell in zip((20, 340, 660), row):
            draw.text((x, 20 + 60 * r), cell, font=font, fill="black")
    result = shipped["selfspec"].decode_region(img, "table", region_id="t")
    # cells under the columns their pieces line up in: the missing stock is an empty cell, not a shift left
    assert result.text == ("<table><tr><th>Item</th><th>Stock</th><th>Price</th></tr><tr><td>Paper</td><td>12</td>"
                           "<td>4.20</td></tr><tr><td>Ink</td><td></td><td>9.80</td></tr></table>")


def _boxes(lines: list[str], size: int = 28) -> list[tuple[float, float, float, float]]:
    """The ink boxes of `region(lines, size)`'s lines (region pixels), as a layout's OCR would hand them over."""
    from PIL import ImageFont

    font = ImageFont.truetype(DEJAVU, size)
    step = int(size * 1.7)
    out = []
    for i, t in enumerate(lines):
        x0, y0, x1, y1 = font.getbbox(t)
        out.append((20 + x0 - 4, 10 + i * step + y0 - 4, 20 + x1 + 4, 10 + i * step + y1 + 4))
    return out


@needs_shipped
def test_given_line_boxes_are_read_without_detection_and_selfspec_equals_ar(shipped, monkeypatch):
    """One detection pass per scanned page: the engine reads the boxes it is handed (the layout's OCR lines) with
    its own recogniser and decoder (real rounds, self-spec ≡ AR) and never runs its detector."""
    import inspect

    from app.core.engines import LineRegionEngine
    from app.core.record.events import RegionFinished, RegionStarted, RoundVerified

    lines = ["Order No. 48213, due 2025-01-31: EUR 99.90", "Scriptorium reads printed pages line by line."]
    img, boxes = region(lines), _boxes(lines)
    spec_engine, ar_engine = shipped["selfspec"], shipped["ar"]
    assert isinstance(spec_engine, LineRegionEngine)
    wanted = set(inspect.signature(LineRegionEngine.decode_lines).parameters) - {"self"}
    assert wanted <= set(inspect.signature(spec_engine.decode_lines).parameters)

    def no_detection(_image):
        raise AssertionError("the detector ran on a region whose lines were given")

    for engine in (spec_engine, ar_engine):
        monkeypatch.setattr(engine, "find_lines", no_detection)
    events = []
    spec = spec_engine.decode_lines(img, "text", boxes[::-1], region_id="p1-r02", emit=events.append)
    ar = ar_engine.decode_lines(img, "text", boxes, region_id="p1-r02")
    assert spec.text == " ".join(lines) and spec.tokens == ar.tokens  # rows in reading order, whatever the input's
    assert spec.stats["lines_from"] == "given" and spec.stats["detect_ms"] == 0 and spec.stats["lines"] == 2
    assert spec.stats["stopped"] == "done" and "truncated" not in spec.stats and spec.stats["tpf"] > 2.0
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    assert [type(e) for e in events].count(RegionStarted) == 1 and isinstance(events[-1], RegionFinished)
    assert rounds and "".join(e.text for e in rounds) == spec.text


@needs_shipped
def test_a_scanned_page_is_detected_once_through_the_pipeline(shipped, monkeypatch, tmp_path):
    """A scan whose layout's OCR found the lines: the pipeline hands their boxes to the built-in engine, which reads
    them without its own detector."""
    import pymupdf
    from PIL import Image

    from app.bench import documents_corpus as corpus
    from app.core.layout import make_regions
    from app.core.layout.postprocess import Detection
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.quality import region_outcome
    from app.core.pipeline.text_source import text_source

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    for n, line in enumerate(corpus.SCAN_TEXT):
        page.insert_text((60, 80 + 40 * n), line, fontsize=13, fontname="helv")
    found = [[*ln["bbox"], "".join(s["text"] for s in ln["spans"])]  # where the layout's OCR would find them
             for b in page.get_text("dict")["blocks"] for ln in b["lines"]]
    pix = page.get_pixmap(dpi=150)
    scan, _ = corpus._image_pdf([Image.frombytes("RGB", (pix.width, pix.height), pix.samples)])
    scan.save(str(tmp_path / "scan.pdf"))

    class ScanLayout:
        name = "fixed"

        def analyse(self, document, index, image, dpi, *, keep_headers=False, cancel=None, timeout=None):
            s = dpi / 72.0
            regions = make_regions([Detection("text", 1.0, tuple(v * s for v in (40, 50, 560, 200)), 0)], index, dpi,
                                   self.name, keep_headers=keep_headers)
            regions[0].extra["ocr_lines"] = found
            return regions

    def no_detection(_image):
        raise AssertionError("the page was detected twice")

    monkeypatch.setattr(shipped["selfspec"], "find_lines", no_detection)
    pipe = Pipeline(PipelineOptions(text_layer="prefer"), engine=shipped["selfspec"], layout=ScanLayout())
    try:
        (block,) = pipe.run(tmp_path / "scan.pdf").pages[0].regions
    finally:
        pipe.close()
    from rapidfuzz.distance import Levenshtein

    assert block.extra["stats"]["lines_from"] == "given" and block.extra["stats"]["lines"] == 3
    assert Levenshtein.normalized_distance(block.text, " ".join(corpus.SCAN_TEXT)) < 0.03
    assert text_source(block) == "ocr" and region_outcome(block) == "ok"


@needs_shipped
def test_a_latin_line_with_an_equals_sign_reads_no_cjk_character(shipped):
    """Unmasked, the recogniser reads a lone "=" as "二" (and the decoder then writes nonsense); after a Latin region
    of the same page its CJK classes are masked, as in the classic engine, and "=" is read."""
    from PIL import Image, ImageDraw, ImageFont

    from app.core.rapid.script_mask import count_scripts

    engine = shipped["selfspec"]
    font = ImageFont.truetype(DEJAVU, 14)
    para = Image.new("RGB", (420, 60), "white")
    draw = ImageDraw.Draw(para)
    draw.text((8, 8), "The balance holds when both sides", font=font, fill="black")
    draw.text((8, 32), "are equal in weight.", font=font, fill="black")
    equals = Image.new("RGB", (300, 30), "white")
    ImageDraw.Draw(equals).text((6, 8), "=", font=font, fill="black")
    first = engine.decode_region(para, "text", region_id="p7-r01", page=6)
    second = engine.decode_region(equals, "text", region_id="p7-r02", page=6)
    assert "balance" in first.text and second.text == "="
    assert [line["recogniser"] for line in second.stats["line_stats"]] == ["="]
    assert count_scripts(first.text + second.text)[1] == 0


@needs_shipped
def test_a_region_cut_at_its_token_budget_is_truncated_not_done(shipped):
    from app.core.pipeline.quality import region_outcome, region_status, review_reasons
    from app.core.document.regions import Region, record_result

    img = region(["Scriptorium reads printed pages line by line.", "quick brown foxes, lazy dogs; 7 + 8 = 15"])
    spec = shipped["selfspec"].decode_region(img, "text", region_id="p1-r03", max_new_tokens=6)
    ar = shipped["ar"].decode_region(img, "text", region_id="p1-r03", max_new_tokens=6)
    assert spec.tokens == ar.tokens and len(spec.tokens) == 6 and spec.text == "Script"
    assert spec.stats["stopped"] == "max_new_tokens" and spec.stats["truncated"] is True
    assert spec.stats["lines_unread"] == 1 and spec.stats["line_stats"][0]["stopped"] == "max_new_tokens"
    block = Region(id="p1-r03", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0)
    record_result(block, spec.text, spec.stats, cancelled=False, engine="builtin", logprobs=spec.logprobs)
    assert region_status(block) == "truncated" and region_outcome(block) == "truncated"
    assert "truncated" in review_reasons(block)


def cjk_line(text: str, tmp_path, size: int = 32):
    """A white line of `text` in PyMuPDF's built-in CJK font (Droid Sans Fallback), drawn with Pillow."""
    import pymupdf
    from PIL import Image, ImageDraw, ImageFont

    path = tmp_path / "cjk.ttf"
    path.write_bytes(bytes(pymupdf.Font("china-s").buffer))
    font = ImageFont.truetype(str(path), size)
    img = Image.new("RGB", (int(font.getlength(text)) + 40, int(size * 2)), "white")
    ImageDraw.Draw(img).text((20, size // 2), text, font=font, fill="black")
    return img


@needs_shipped
def test_a_chinese_line_is_read_never_as_mu(shipped, tmp_path):
    """Every character the recogniser can write comes out as itself: the decoder writes it, or (a character outside
    the decoder's vocabulary) the engine takes the recogniser's reading of that line and says so in the stats."""
    from rapidfuzz.distance import Levenshtein

    text = "北京市人民政府发布了新的交通管理办法"
    result = shipped["selfspec"].decode_region(cjk_line(text, tmp_path), "text", region_id="zh", page=41)
    assert "µ" not in result.text
    assert Levenshtein.distance(result.text, text) / len(text) <= 0.05, result.text
    (line,) = result.stats["line_stats"]
    if line.get("fallback"):
        assert line["fallback"] == "recogniser" and result.stats["fallback_lines"] == 1 and line["rounds"] == 0
        assert len(result.logprobs) == len(result.tokens) and all(lp <= 0 for lp in result.logprobs)
    else:
        assert result.stats["fallback_lines"] == 0 and result.stats["rounds"] > 0
    latin = shipped["selfspec"].decode_region(region(["Order No. 48213, due 2025-01-31"]), "text", region_id="la",
                                              page=42)
    ar = shipped["ar"].decode_region(region(["Order No. 48213, due 2025-01-31"]), "text", region_id="la", page=42)
    assert latin.text == "Order No. 48213, due 2025-01-31" and latin.tokens == ar.tokens
    assert latin.stats["fallback_lines"] == 0 and latin.stats["rounds"] > 0 and latin.stats["disagreements"] == 0
    # the region's figures are merged from its lines'; a line keeps its counters, not the rates and tables (a long
    # document's window keeps every line's statistics)
    (line,) = latin.stats["line_stats"]
    assert line["rounds"] == latin.stats["rounds"] and line["tokens"] == latin.stats["tokens"] and line["tpf"] > 0
    assert latin.stats["per_position_acceptance"] and len(latin.stats["accepted"]) == latin.stats["rounds"]
    assert not {"accepted", "per_position_acceptance", "acceptance_histogram", "tokens_per_s"} & set(line)


def test_a_rewrite_is_not_a_correction():
    """The decoder may correct a few characters the recogniser got wrong; a line it rewrites (a loop, invented
    characters on handwriting) keeps the recogniser's reading."""
    from app.core.engines.builtin.engine import rewrote

    assert not rewrote("tbe quick brown fox", "the quick brown fox")
    assert not rewrote("1O0 apples", "100 apples")
    assert rewrote("This is a handwritten line", "Thisis s hand witteett reen itinenen ppplilinethhhe")
    assert rewrote("Total", "Totalalalalalal")


@needs_shipped
def test_a_greek_line_reads_no_worse_than_the_classic_engine(shipped):
    """Greek letters are outside the first version's vocabulary: the built-in engine reads such a line as the
    recogniser reads it (never µ), so no worse than the classic engine (RapidOCR with the same recogniser)."""
    from rapidfuzz.distance import Levenshtein

    text = "Η θάλασσα είναι ήρεμη σήμερα"
    img = region([text])
    ours = shipped["selfspec"].decode_region(img, "text", region_id="el", page=43)
    classic = open_engine("classic", device="cpu").decode_region(img, "text", region_id="el", page=43)
    assert "µ" not in ours.text
    assert Levenshtein.distance(ours.text, text) <= Levenshtein.distance(classic.text, text), (ours.text, classic.text)


def test_the_decoder_overrules_the_recogniser_only_where_it_was_unsure():
    """Each place where the two readings differ is settled on its own: the decoder's version where the recogniser's
    character there was unsure, the recogniser's where it was sure (a real scan's "distributed" stays so)."""
    from app.core.engines.builtin.arbiter import arbitrate

    chars = list("tbe distributed")
    conf = [0.99, 0.31, 0.99, 1.0] + [0.99] * 11
    verdict = arbitrate(chars, conf, "the distriboted")
    assert verdict.text == "the distributed" and (verdict.taken, verdict.kept) == (1, 1)
    assert arbitrate(chars, conf, "tbe distributed").text == "tbe distributed"  # agreement: nothing to settle
    assert arbitrate(list("ab"), [0.99, 0.99], "aXb").text == "ab"  # an insertion between sure characters
    assert arbitrate(list("ab"), [0.99, 0.4], "aXb").text == "aXb"  # ... beside an unsure one


def test_a_given_line_box_holds_none_of_its_neighbours_ink():
    """A layout's line boxes are font boxes, taller than the ink: two lines of a column overlap, and a crop would hold
    half of the neighbour's line. They are cut at the middle of their overlap; boxes side by side are left alone."""
    from app.core.engines.builtin.line_boxes import apart

    a, b, c = (0, 0, 245, 13), (0, 7.2, 245, 20.6), (300, 5, 400, 18)
    out = apart([a, b, c])
    assert out[0][3] == out[1][1] == (13 + 7.2) / 2
    assert out[2] == c
    assert apart([(0, 0, 100, 10), (0, 1, 100, 11)]) == [(0, 0, 100, 10), (0, 1, 100, 11)]  # one row: untouched


def faint_line(seed: int):
    """A held-out degraded training line (fonts and texts never trained on) that the training data's own renderer
    printed faint: (grey crop, its text), the same on every run."""
    import random

    from app.core.training import linedata

    fonts = [f for f in linedata.held_out_fonts() if not linedata.is_cjk(f)]
    image, text, _spec, kind, _script, tags = linedata.make_line(random.Random(seed), fonts, held_out_text=True,
                                                                  clean=False)
    assert "faint" in tags and kind in ("prose", "mixed")  # faker's dates follow the clock: not these
    return image, text


def test_stretching_a_flat_or_full_range_crop_changes_nothing():
    import numpy as np

    from app.core.rapid.recogniser import stretch_contrast

    flat = np.full((20, 60), 180, np.uint8)
    full = np.tile(np.linspace(0, 255, 60).astype(np.uint8), (20, 1))
    assert stretch_contrast(flat) is flat and stretch_contrast(full) is full
    faint = (full // 4 + 150).astype(np.uint8)  # grey print on grey paper: 150..213
    out = stretch_contrast(np.dstack([faint] * 3))
    assert out.dtype == np.uint8 and out.min() == 0 and out.max() == 255
    assert (np.diff(out[0, :, 0].astype(int)) >= 0).all()  # the order of grey levels is kept


@needs_shipped
@pytest.mark.parametrize("seed", [1388, 2224])
def test_a_faint_line_is_read_with_its_contrast_stretched(shipped, seed):
    """Faint print at low resolution: the recogniser misreads it as the page gives it ("wultiply", "Trueif this"), and
    reads it right once the engine stretched the crop's contrast; the engine's text is the right one."""
    from PIL import Image

    from app.core.rapid.recogniser import Recogniser

    image, text = faint_line(seed)
    assert Recogniser(threads=1).read([image])[0].text != text
    engine = shipped["selfspec"]
    assert engine.recogniser.stretch
    h, w = image.shape
    result = engine.decode_lines(Image.fromarray(image).convert("RGB"), "text", [(0, 0, w, h)], region_id="p1-r01")
    assert result.text == text


def test_unsure_words_are_settled_by_the_word_list_and_sure_ones_never():
    from app.core.engines.builtin.lexicon import settle_words

    def settle(word_conf_alts):
        chars = [c for c, *_ in word_conf_alts]
        conf = [p for _, p, *_ in word_conf_alts]
        alts = [(a[2] if len(a) > 2 else "") for a in word_conf_alts]
        alt_p = [(a[3] if len(a) > 3 else 0.0) for a in word_conf_alts]
        s = settle_words(chars, conf, alts, alt_p)
        return "".join(s.chars), s.changes

    sure = [(c, 0.99) for c in "the "]
    keya = sure + [("k", 0.99), ("e", 0.98), ("y", 0.97), ("a", 0.6, "s", 0.3)]
    assert settle(keya) == ("the keys", [("keya", "keys")])
    # the same misreading, but the recogniser was sure of its 'a': left as read
    assert settle(sure + [("k", 0.99), ("e", 0.98), ("y", 0.97), ("a", 0.97, "s", 0.02)])[0] == "the keya"
    # an uncommon name with no alternative that makes a common word: left as read
    assert settle([(c, 0.9) for c in "Zbigniew"])[0] == "Zbigniew"
    # not a Latin word: never touched
    assert settle([("北", 0.4, "比", 0.3), ("京", 0.5, "景", 0.4), ("市", 0.9)])[0] == "北京市"


@needs_shipped
@pytest.mark.parametrize("seed, wrong", [(945, "mumber"), (2293, "includang")])
def test_a_recogniser_error_is_corrected_through_the_engine(shipped, seed, wrong):
    """Held-out poor lines (low resolution, blur, noise; a font never trained on) where the recogniser misreads one
    word ("mumber", "includang"): the engine writes the right text, keeps the recogniser's reading and the word it
    changed in the line's stats, and the block needs review with that word named."""
    import random

    from PIL import Image

    from app.core.pipeline.quality import disagreement_reasons
    from app.core.rapid.recogniser import Recogniser
    from app.core.training import linedata

    fonts = [f for f in linedata.held_out_fonts() if not linedata.is_cjk(f)]
    image, text, _spec, kind, _script, _tags = linedata.make_line(random.Random(seed), fonts, held_out_text=True,
                                                                  clean=False)
    assert kind == "prose"
    assert wrong in Recogniser(threads=1, stretch=True).read([image])[0].text
    h, w = image.shape
    result = shipped["selfspec"].decode_lines(Image.fromarray(image).convert("RGB"), "text", [(0, 0, w, h)],
                                              region_id="p1-r01")
    assert result.text == text
    line = result.stats["line_stats"][0]
    settled = [tuple(pair) for pair in line["words_settled"]]
    assert wrong in line["recogniser"] and wrong in [w for w, _ in settled] and all(a != b for a, b in settled)
    assert result.stats["words_settled"] == len(settled)
    # the review names the line's first settled word (the int8 recogniser also reads "normal" as "nommal" there)
    assert any(f"“{settled[0][0]}”" in why and f"{len(settled)} unsure word" in why
               for why in disagreement_reasons(result.stats))
