"""Text the layout dropped on a scan (app.core.layout.lost_lines): ink outside every kept region is read as plain
text, with a warning, instead of vanishing; a figure's labels, the scan's edge and covered pages are left alone.

The end-to-end test reads a poor scan (72 DPI, blurred, speckled) on which PyMuPDF's layout keeps the title and
the headings and loses most of the first paragraph."""
from __future__ import annotations

import random

import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from app.core.document.regions import Region
from app.core.layout.lost_lines import MISSED, recover_lost_lines

SERIF = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf"
PARAGRAPH = ("The harbour handled more ships this year than in any year before. Most of them carried grain, "
             "timber and coal from the northern ports, and a growing number brought passengers from the islands. "
             "The board thanks the pilots and the dock workers for their steady work through a hard winter.")
SECOND = ("New cranes were set up on the east quay in the spring. The old wooden pier was taken down and a stone "
          "one begun in its place; it should be finished before the autumn storms.")


def _fonts():
    try:
        return ImageFont.truetype(SERIF, 34), ImageFont.truetype(BOLD, 44), ImageFont.truetype(BOLD, 64)
    except OSError:
        pytest.skip("missing part: DejaVu fonts (apt install fonts-dejavu-core)")


def _wrap(draw, text, font, x, y, width=1250, step=50):
    """Draws `text` wrapped at `width` px from (x, y); returns the boxes of its lines and the y below them."""
    line, boxes = "", []
    for word in text.split():
        if line and draw.textlength(f"{line} {word}", font=font) > width:
            boxes.append(draw.textbbox((x, y), line, font=font))
            draw.text((x, y), line, font=font)
            y, line = y + step, word
        else:
            line = f"{line} {word}".strip()
    boxes.append(draw.textbbox((x, y), line, font=font))
    draw.text((x, y), line, font=font)
    return boxes, y + step


def report_page():
    """A 200-DPI letter page: title, heading, paragraph, heading, paragraph; with each piece's box (pixels)."""
    body, head, title = _fonts()
    image = Image.new("L", (1700, 2200), 255)
    draw = ImageDraw.Draw(image)
    boxes = {"title": draw.textbbox((200, 150), "Annual Report of the Harbour Board", font=title)}
    draw.text((200, 150), "Annual Report of the Harbour Board", font=title)
    boxes["head1"] = draw.textbbox((200, 320), "1. Shipping in the year", font=head)
    draw.text((200, 320), "1. Shipping in the year", font=head)
    lines, y = _wrap(draw, PARAGRAPH, body, 200, 420)
    boxes["para1"] = (min(b[0] for b in lines), lines[0][1], max(b[2] for b in lines), lines[-1][3])
    boxes["para1_lines"] = lines
    y += 60
    boxes["head2"] = draw.textbbox((200, y), "2. Works on the quays", font=head)
    draw.text((200, y), "2. Works on the quays", font=head)
    lines, _ = _wrap(draw, SECOND, body, 200, y + 100)
    boxes["para2"] = (min(b[0] for b in lines), lines[0][1], max(b[2] for b in lines), lines[-1][3])
    return image, boxes


def _region(n, box, label="text", **extra):
    s = 72.0 / 200.0
    return Region(id=f"p1-r{n + 1:02d}", page=0, box=tuple(float(v) for v in box), label=label, task="text",
                  order=n, box_pt=tuple(v * s for v in box), dpi=200.0, source="pymupdf", extra=dict(extra))


def test_a_paragraph_outside_every_region_becomes_a_text_region_in_reading_order():
    image, boxes = report_page()
    kept = [_region(0, boxes["title"], "doc_title"), _region(1, boxes["head1"]), _region(2, boxes["head2"]),
            _region(3, boxes["para2"])]
    out, lost = recover_lost_lines(image, 200.0, kept)
    assert lost == len(boxes["para1_lines"])
    added = [r for r in out if r.extra.get("layout_missed")]
    assert len(added) == 1 and added[0].extra["layout_missed"] == MISSED and added[0].task == "text"
    x0, y0, x1, y1 = added[0].box
    px0, py0, px1, py1 = boxes["para1"]
    assert x0 <= px0 + 10 and y0 <= py0 + 10 and x1 >= px1 - 10 and y1 >= py1 - 10  # the whole paragraph
    assert [r.order for r in out] == list(range(5)) and out[2] is added[0]  # between heading 1 and heading 2
    assert [r.id for r in out] == [f"p1-r{n:02d}" for n in range(1, 6)]


def test_a_covered_page_and_small_labels_add_nothing():
    image, boxes = report_page()
    regions = [_region(n, boxes[k]) for n, k in enumerate(("title", "head1", "para1", "head2", "para2"))]
    assert recover_lost_lines(image, 200.0, regions) == (regions, 0)
    draw = ImageDraw.Draw(image)  # a figure's axis label and a page number: short marks, not lost paragraphs
    draw.text((1400, 1900), "Fig. 2", font=_fonts()[0])
    draw.text((830, 2140), "7", font=_fonts()[0])
    assert recover_lost_lines(image, 200.0, regions)[1] == 0


def test_a_region_whose_layout_lines_miss_print_lets_the_engine_find_its_lines():
    image, boxes = report_page()
    s = 72.0 / 200.0
    short = [[b[0] * s, b[1] * s, (b[0] + (b[2] - b[0]) / 3) * s, b[3] * s, "the first third"]
             for b in boxes["para1_lines"]]  # the layout's OCR saw only the first third of every line
    full = [[b[0] * s, b[1] * s, b[2] * s, b[3] * s, "all of it"] for b in boxes["para1_lines"]]
    cut, whole = _region(0, boxes["para1"], ocr_lines=short), _region(1, boxes["para2"])
    recover_lost_lines(image, 200.0, [cut, whole])
    assert "ocr_lines" not in cut.extra and cut.extra["layout_lines_dropped"]
    # where that print lies goes with it (points): the lines' other two thirds, each in its own line's rows
    outside = cut.extra["print_outside"]
    assert len(outside) == len(boxes["para1_lines"])
    for (x0, y0, x1, y1), b in zip(outside, boxes["para1_lines"]):
        assert x0 >= (b[0] + (b[2] - b[0]) / 3) * s - 1 and x1 <= b[2] * s + 3
        assert b[1] * s - 3 <= y0 < y1 <= b[3] * s + 3
    trusted = _region(0, boxes["para1"], ocr_lines=full)
    recover_lost_lines(image, 200.0, [trusted, whole])
    assert trusted.extra["ocr_lines"] == full


def test_the_ink_worked_out_ahead_is_the_checks_own(monkeypatch):
    """`prepare` (run while the layout runs in its child) works the page's ink out once; the check on that very
    image then finds the same lost lines without working it out again, and another image is not mistaken for it."""
    from app.core.layout import lost_lines

    image, boxes = report_page()
    keep = [_region(0, boxes["title"], label="doc_title"), _region(1, boxes["head1"], label="paragraph_title"),
            _region(2, boxes["head2"], label="paragraph_title"), _region(3, boxes["para2"])]
    want, lost = recover_lost_lines(image, 200.0, [_region(r.order, r.box, r.label) for r in keep])
    assert lost >= 3
    made = []
    real = lost_lines._ink
    monkeypatch.setattr(lost_lines, "_ink", lambda img, scale: made.append(img) or real(img, scale))
    lost_lines.prepare(image, 200.0)
    got, again = recover_lost_lines(image, 200.0, [_region(r.order, r.box, r.label) for r in keep])
    assert made == [image] and again == lost
    assert [(r.box, r.extra.get("ink_lines")) for r in got] == [(r.box, r.extra.get("ink_lines")) for r in want]
    other = image.copy()
    recover_lost_lines(other, 200.0, [_region(r.order, r.box, r.label) for r in keep])
    assert made == [image, other]


def poor_scan(path):
    """The report page at 72 DPI, blurred and speckled (3 % of the pixels)."""
    image, _ = report_page()
    image = image.resize((612, 792), Image.BILINEAR).filter(ImageFilter.GaussianBlur(0.8))
    rng, px = random.Random(1), image.load()
    for _ in range(int(image.width * image.height * 0.03)):
        px[rng.randrange(image.width), rng.randrange(image.height)] = rng.choice((0, 90, 255))
    image.save(path, dpi=(72, 72))
    return path


def test_a_poor_scan_keeps_the_paragraph_its_layout_missed_with_a_warning(tmp_path):
    from rapidfuzz import fuzz

    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.quality import review_reasons

    events = []
    pipe = Pipeline(PipelineOptions(layout="pymupdf"), emit=events.append)  # the default engine
    try:
        out = pipe.run(poor_scan(tmp_path / "poor.png"))
    finally:
        pipe.close()
    laid = [e for e in events if e.type == "layout_done"][0]
    missed = [r for r in out.pages[0].regions if r.extra.get("layout_missed")]
    assert missed, f"the layout kept {[r['label'] for r in laid.regions]} and no lost lines were found"
    text = " ".join(r.text for r in out.pages[0].regions)
    assert fuzz.partial_ratio(PARAGRAPH.lower(), text.lower()) >= 85, text
    assert any("the layout missed" in e.message for e in events if e.type == "error"), events
    assert "the layout missed this text (read as plain text)" in review_reasons(missed[0])


@pytest.mark.parametrize("name", ["s05-unlv-8087.png", "s09-kant-20.jpg", "s13-handwritten-note.png"])
def test_the_despeckling_median_is_pillows_pixel_for_pixel(name):
    """The ink is despeckled with OpenCV's 3 × 3 median (issue #38: Pillow's took 0.14 s on a 300-DPI scan): the
    same pixels as Pillow's MedianFilter(3), edges included, on real scans (bilevel, colour, grey with alpha)."""
    from pathlib import Path

    import numpy as np

    from app.core.layout.lost_lines import _ink

    page = Image.open(Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / name).convert("RGB")
    grey = page.convert("L")
    plain = np.asarray(grey.filter(ImageFilter.MedianFilter(3)), dtype=np.uint8)
    bg, dark = float(np.percentile(plain, 90)), float(np.percentile(plain, 1))
    assert bg - dark >= 40
    assert np.array_equal(_ink(page, 1.0), plain < (bg + dark) / 2)
