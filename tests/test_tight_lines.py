"""Line crops on pages set so close that no blank row parts a line from its neighbours, and crops with a
column rule beside the line (app.core.scripts.crops): the line is cut from its neighbours at the least-inked
row between them, the rule whitened, and Tesseract then reads the line sure. The gazette page of the real
corpus (corpora/realdocs x02, a Greek government gazette) is such a page: its three widest lines, the ones the
script router finds the page's script on, read unsure as cut and had left the whole page unrouted."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.ci_parts import MISSING_PART

GAZETTE = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "x02-greek-gazette-p2.png"
# the page's three widest detector lines (the built-in engine's boxes), as the bundled recogniser read them
WIDEST = [((616, 1100, 1106, 1126), "ω την σφων  – δει τυ ιευ τρλιτι-", 0.786),
          ((618, 1269, 1107, 1295), "ρτη δτι α διρν γ λρι ω ιερ-", 0.852),
          ((115, 262, 604, 289), "ι  δσ τ,  ", 0.815)]
TRUTH = ["χωρίς την σύμφωνη γνώμη – άδεια του οικείου Μητροπολιτι-",
         "Κρήτης δύνανται να διορίζουν άγαμο κληρικό ως ιεροκή-",
         "δικαίου μη κερδοσκοπικού χαρακτήρα, επιτρέπεται κατόπιν"]
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")


def _tesseract(lang: str):
    from app.core.scripts.tesseract import Tesseract, binding_missing

    if binding_missing():
        pytest.skip(f"{MISSING_PART} the tesserocr package (pip install tesserocr)")
    tess = Tesseract()
    if lang not in tess.languages:
        pytest.skip(f"{MISSING_PART} Tesseract's {lang} model (apt-get install tesseract-ocr-{lang})")
    return tess


def _gazette():
    from PIL import Image

    return Image.open(GAZETTE).convert("RGB")


def _cer(ref: str, got: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, got = "".join(ref.split()), "".join(got.split())
    return Levenshtein.distance(ref, got) / max(1, len(ref))


def test_a_line_touching_its_neighbours_is_cut_apart_at_the_least_inked_rows():
    from app.core.scripts.crops import apart

    #        neighbour's body | its descenders touching the line's accents | the line | touching again | below
    counts = [40] * 5 + [3, 1, 4] + [30, 45, 50, 45, 30] * 4 + [5, 2, 6] + [40] * 4
    band = (0, len(counts))  # no blank row: line_band gives the whole crop
    assert apart(counts, band, top=5.0, bottom=31.0) == (6, 30)
    # a crop whose band ends at a blank row is left as it is; a row as inked as the line is no parting
    assert apart(counts, (5, 28), top=5.0, bottom=31.0) == (5, 28)
    assert apart([40] * 30, (0, 30), top=5.0, bottom=25.0) == (0, 30)


def test_lines_set_touching_are_isolated_and_read_right():
    """Greek lines rendered closer than their accents and descenders: each loose crop holds its neighbours'
    letters, touching its own; isolated, only its own are left, and Tesseract reads it."""
    from PIL import Image, ImageDraw, ImageFont

    from app.core.scripts.router import crop_line

    if not DEJAVU.is_file():
        pytest.skip(f"{MISSING_PART} the DejaVu fonts (apt-get install fonts-dejavu-core)")
    tess = _tesseract("ell")
    font = ImageFont.truetype(str(DEJAVU), 28)
    page = Image.new("RGB", (1100, 260), "white")
    draw = ImageDraw.Draw(page)
    boxes = []
    for k, text in enumerate(TRUTH):
        draw.text((40, 30 + 28 * k), text, font=font, fill="black")
        boxes.append(draw.textbbox((40, 30 + 28 * k), text, font=font))
    ink = (np.asarray(page.convert("L")) < 128).any(axis=1)
    assert ink[boxes[0][1]:boxes[-1][3] - 2].all()  # no blank row between the lines: they touch
    x0, y0, x1, y1 = boxes[1]
    crop = crop_line(page, (x0 - 4, y0 - 6, x1 + 4, y1 + 6))
    grey = np.asarray(crop.convert("L"))
    top = int(y0 - 6 - crop.info["origin"][1])
    assert (grey[:max(1, top - 8)] == 255).all() and (grey[-4:] == 255).all()  # the neighbours' letters: gone
    for k in (0, 2):  # the first and the last line each touch one neighbour
        x0, y0, x1, y1 = boxes[k]
        got = tess.read(crop_line(page, (x0 - 4, y0 - 6, x1 + 4, y1 + 6)), "ell")
        assert _cer(TRUTH[k], got.text) < 0.05 and got.conf >= 0.8, got


def test_a_thin_rule_down_the_crop_is_whitened_and_letters_are_kept():
    from app.core.scripts.crops import without_rules

    grey = np.full((40, 200), 255, np.uint8)
    grey[:, 10] = 150  # a column rule, antialiased grey, down the whole crop
    grey[8:32, 50:53] = 0  # a letter's stem: not down the whole crop
    grey[:, 120:160] = 0  # a dark band as wide as letters: not a rule
    out = without_rules(grey, 28.0)
    assert (out[:, 10] == 255).all()
    assert (out[8:32, 50:53] == 0).all() and (out[:, 120:160] == 0).all()
    assert without_rules(np.full((40, 200), 190, np.uint8), 28.0).min() == 190  # grey paper is no rule


def test_the_gazettes_widest_lines_read_sure_isolated_and_the_page_is_found_greek():
    from app.core.scripts.router import SURE, Routed, ScriptRouter, crop_line

    tess = _tesseract("ell")
    image = _gazette()
    for (box, _, _), truth in zip(WIDEST, TRUTH):
        got = tess.read(crop_line(image, box), "ell")
        assert got.conf >= SURE and _cer(truth, got.text) < 0.1, got
        assert "|" not in got.text and not got.text.startswith("1.")  # the column rule beside it is gone
    router = ScriptRouter(tess)
    out = router.route(image, WIDEST)
    assert router.page_lang == "ell"
    assert all(isinstance(r, Routed) and r.reader == "tesseract:ell" for r in out), out
    assert all(_cer(t, r.text) < 0.15 for t, r in zip(TRUTH, out)), [r.text for r in out]
