"""Where a block's text comes from, on generated documents: the original text layer when it is trustworthy, OCR when
it is scrambled or hidden, honest CER (null on scans, whatever a library wrote into the in-memory document), the
layout's OCR reused on scans, and text inside picture boxes kept. The engine is the real classic one (RapidOCR);
the layout is fixed boxes (the layout is not what these tests are about) except where noted."""
from __future__ import annotations

import json

import pytest

from app.bench import documents_corpus as corpus
from app.core.layout import make_regions
from app.core.layout.postprocess import Detection
from app.core.pipeline import Pipeline, PipelineOptions
from app.core.pipeline.text_source import text_source


class BoxesLayout:
    """The layout as given: (label, box in points) per region, in reading order. `before` runs on the document
    first (a library that writes into the in-memory document, like pymupdf4llm's OCR hook)."""

    name = "fixed"

    def __init__(self, boxes, before=None) -> None:
        self.boxes = boxes
        self.before = before

    def analyse(self, document, index, image, dpi, *, keep_headers=False, cancel=None, timeout=None):
        if self.before is not None:
            self.before(document, index)
        s = dpi / 72.0
        dets = [Detection(label, 1.0, tuple(v * s for v in box), n) for n, (label, box) in enumerate(self.boxes)]
        return make_regions(dets, index, dpi, self.name, keep_headers=keep_headers)


def _run(path, boxes, mode="prefer", before=None):
    events = []
    pipe = Pipeline(PipelineOptions(engine="classic", text_layer=mode), emit=events.append,
                    layout=BoxesLayout(boxes, before))
    try:
        out = pipe.run(path)
    finally:
        pipe.close()
    return out, events


def _good_and_scrambled_pdf(path):
    """A real text paragraph (top) and, below it, SHOWN in real glyphs of a font whose ToUnicode map is shifted
    by one letter: the page shows SHOWN, its text layer says "Uif qbhf..."."""
    import pymupdf

    if not corpus.DEJAVU.exists():  # pragma: no cover - a machine without DejaVu
        pytest.skip("DejaVu Sans is not installed")
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=420)
    page.insert_textbox(pymupdf.Rect(60, 40, 540, 80), corpus.LEFT[0], fontsize=11, fontname="helv")
    page.insert_font(fontname="dv", fontfile=str(corpus.DEJAVU))
    page.insert_text((60, 200), corpus.SHOWN, fontsize=13, fontname="dv")
    doc = corpus.shift_font_map(doc)
    assert "Uif qbhf" in doc[0].get_text()
    doc.save(str(path))
    doc.close()
    return path


GOOD_BOX = (55, 35, 545, 85)
SHOWN_BOX = (55, 185, 545, 210)


def test_prefer_takes_a_good_layer_and_ocrs_a_scrambled_one(tmp_path):
    out, events = _run(_good_and_scrambled_pdf(tmp_path / "mixed.pdf"), [("text", GOOD_BOX), ("text", SHOWN_BOX)])
    good, shown = out.pages[0].regions
    assert text_source(good) == "text-layer" and good.text == corpus.LEFT[0]  # exact, spaces and all
    assert text_source(shown) == "ocr" and "layer_rejected" in shown.extra
    assert "shows these words" in shown.text and "Uif" not in shown.text
    blocks = json.loads(out.to_json())["pages"][0]["blocks"]
    assert [b["text_source"] for b in blocks] == ["text-layer", "ocr"] and [b["engine"] for b in blocks] == [
        "text-layer", "classic"]
    assert blocks[1]["cer"] is None  # never measured against the layer it disagreed with
    assert out.stats["text_layer_blocks"] == 1
    finished = [e.region_id for e in events if e.type == "region_finished"]
    assert finished == ["p1-r01", "p1-r02"]


def test_compare_reads_every_block_with_ocr_and_measures_it(tmp_path):
    out, _ = _run(_good_and_scrambled_pdf(tmp_path / "mixed.pdf"), [("text", GOOD_BOX)], mode="compare")
    (good,) = out.pages[0].regions
    assert text_source(good) == "ocr" and good.extra["cer"] is not None and good.extra["cer"] < 0.1


def test_cer_is_null_on_a_scan_whose_in_memory_document_got_an_ocr_layer(tmp_path):
    pdf = tmp_path / "scan.pdf"
    doc, _ = corpus._image_pdf([corpus._text_page_image(corpus.SCAN_TEXT)])  # a clean scan: the OCR'd text,
    doc.save(str(pdf))  # written over its own image in the same place, leaves the page legible
    doc.close()

    def ocr_hook(document, index):  # what pymupdf4llm's OCR hook does to the page it is given: visible text
        page = document.mupdf.load_page(index)
        for n, line in enumerate(corpus.SCAN_TEXT):
            page.insert_text((60, 80 + 40 * n), line, fontsize=13, fontname="helv")

    out, events = _run(pdf, [("text", (40, 50, 560, 200))], mode="compare", before=ocr_hook)
    page = out.pages[0]
    assert page.cer is None and not page.has_text_layer and out.cer is None
    assert page.regions[0].extra.get("cer") is None and "Scanned pages" in page.regions[0].text
    assert not [e for e in events if e.type == "text_layer_compared"]


def test_a_hidden_ocr_layer_is_neither_taken_nor_a_reference(tmp_path):
    pdf = tmp_path / "hidden.pdf"
    corpus.hidden_layer(pdf)
    out, _ = _run(pdf, [("text", (40, 50, 560, 200))], mode="prefer")
    page = out.pages[0]
    (r,) = page.regions
    assert text_source(r) == "ocr" and page.cer is None and not page.has_text_layer
    assert "Scanned pages have no text layer" in r.text and "Sconned" not in r.text


def test_picture_boxes_that_hold_text_keep_it():
    from app.core.layout.page_boxes import Line, refine

    boxes = [{"boxclass": "picture", "x0": 50, "y0": 50, "x1": 500, "y1": 300},
             {"boxclass": "picture", "x0": 50, "y0": 400, "x1": 300, "y1": 500}]
    lines = [Line((60, 60, 480, 75), "Four paragraphs the layout took for a picture.", False),
             Line((60, 80, 400, 95), "They must not be lost.", True),
             Line((60, 480, 80, 490), "10", False)]  # an axis label: a chart keeps no text block
    out = refine(boxes, lines)
    assert [b["boxclass"] for b in out] == ["picture", "picture-text", "picture"]
    assert out[1]["ocr_lines"] == [[60, 80, 400, 95, "They must not be lost."]]
    assert (out[1]["x0"], out[1]["y0"], out[1]["x1"], out[1]["y1"]) == (60, 60, 480, 95)  # over its lines only


def test_text_wrapping_round_a_photo_is_read_once():
    """A magazine page's column runs beside and into a photo's box: its lines belong to the column, and the photo
    gets no text block of them (they were read twice)."""
    from app.core.layout.page_boxes import Line, refine

    boxes = [{"boxclass": "text", "x0": 50, "y0": 50, "x1": 260, "y1": 400},
             {"boxclass": "picture", "x0": 200, "y0": 100, "x1": 500, "y1": 350}]
    lines = [Line((205, 110 + 20 * k, 255, 125 + 20 * k), f"line {k} of the column beside the photo", True)
             for k in range(15)]
    out = refine(boxes, lines)
    assert [b["boxclass"] for b in out] == ["text", "picture"]


def test_a_formula_line_becomes_a_formula_and_a_prose_formula_becomes_text():
    from app.core.layout.page_boxes import Line, looks_like_math, refine

    assert looks_like_math("E = m c^2 + sum_i x_i") and looks_like_math("a + b = c")
    assert not looks_like_math("Revenue = the money a company makes") and not looks_like_math("Figure 1: a chart.")
    boxes = [{"boxclass": "caption", "x0": 0, "y0": 0, "x1": 200, "y1": 20},
             {"boxclass": "formula", "x0": 0, "y0": 30, "x1": 400, "y1": 60}]
    lines = [Line((0, 2, 190, 18), "E = m c^2 + sum_i x_i", False),
             Line((0, 32, 390, 58), "This paragraph was labelled as a formula by mistake.", False)]
    assert [b["boxclass"] for b in refine(boxes, lines)] == ["formula", "text"]


def test_the_bundled_sample_table_box_encloses_all_columns_and_the_formula_is_a_formula():
    from app.core.document import open_document
    from app.core.layout import open_layout
    from app.core.base.paths import sample_document

    doc = open_document(sample_document())
    try:
        regions = open_layout("pymupdf").analyse(doc, 0, doc.render(0, 72), 72)
    finally:
        doc.close()
    (table,) = [r for r in regions if r.label == "table"]
    assert table.box_pt[0] <= 60.5 and table.box_pt[2] >= 389.5  # the ruled table spans x 60..390
    assert table.box_pt[1] <= 282.5 and table.box_pt[3] >= 369.5
    assert table.extra["layer_table"].startswith("<table><tr><th>Quarter</th><th>Revenue</th><th>Growth</th></tr>")
    assert "<td>1,204</td>" in table.extra["layer_table"]
    (formula,) = [r for r in regions if r.task == "formula"]
    assert formula.box_pt[0] == pytest.approx(200, abs=2)


def _tb(cls, x0, y0, x1, y1):
    return {"boxclass": cls, "x0": x0, "y0": y0, "x1": x1, "y1": y1}


def test_a_two_column_page_read_across_is_read_down():
    from app.core.layout.page_boxes import order_columns

    title = _tb("title", 50, 40, 540, 60)
    left = [_tb("text", 50, 90 + 70 * n, 280, 140 + 70 * n) for n in range(3)]
    right = [_tb("text", 310, 90 + 70 * n, 540, 140 + 70 * n) for n in range(3)]
    foot = _tb("text", 50, 400, 540, 420)
    across = [title, left[0], right[0], left[1], right[1], left[2], right[2], foot]
    assert order_columns(across) == [title, *left, *right, foot]
    down = [title, *left, *right, foot]
    assert order_columns(down) == down  # a layout that read down is left alone


def test_a_two_column_page_reads_down_through_the_pipeline(tmp_path):
    from app.core.document import open_document
    from app.core.layout import open_layout

    pdf = tmp_path / "cols.pdf"
    corpus.two_columns(pdf)
    doc = open_document(pdf)
    try:
        regions = open_layout("pymupdf").analyse(doc, 0, doc.render(0, 72), 72)
    finally:
        doc.close()
    xs = [r.box_pt[0] for r in regions if r.task == "text" and r.label == "text"]
    assert xs == sorted(xs) and len(xs) == 6  # every left-column block before every right-column one


def test_a_line_beside_a_footer_is_dropped_or_kept_with_it():
    from app.core.layout.page_boxes import margin_bands

    boxes = [_tb("text", 50, 100, 540, 300), _tb("page-footer", 50, 800, 200, 810), _tb("text", 480, 799, 540, 811)]
    margin_bands(boxes)
    assert [b["boxclass"] for b in boxes] == ["text", "page-footer", "page-footer"]


def test_a_running_footer_is_a_footer_on_every_page_once_seen():
    from app.core.layout.page_boxes import Line, MarginMemory, refine

    memory = MarginMemory()
    page1 = [_tb("text", 50, 100, 540, 300), _tb("page-footer", 50, 800, 300, 810)]
    lines1 = [Line((50, 100, 540, 120), "Body text of page one.", False),
              Line((50, 800, 300, 810), "Annual Report 2026 - page 1", False)]
    page2 = [_tb("text", 50, 100, 540, 300), _tb("text", 50, 801, 300, 811)]  # the layout missed it here
    lines2 = [Line((50, 100, 540, 120), "Body text of page two.", False),
              Line((50, 801, 300, 811), "Annual Report 2026 - page 2", False)]
    refine(page1, lines1, margins=(memory, "doc", 842.0))
    out = refine(page2, lines2, margins=(memory, "doc", 842.0))
    assert [b["boxclass"] for b in out] == ["text", "page-footer"]
    other = refine(page2, lines2, margins=(memory, "another document", 842.0))
    assert [b["boxclass"] for b in other] == ["text", "text"]


def test_a_layer_in_a_script_the_check_cannot_read_is_taken_on_its_other_merits(tmp_path):
    import pymupdf

    if not corpus.DEJAVU.exists():  # pragma: no cover - a machine without DejaVu
        pytest.skip("DejaVu Sans is not installed")
    text = "Съешь же ещё этих мягких французских булок"
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=200)
    page.insert_font(fontname="dv", fontfile=str(corpus.DEJAVU))
    page.insert_text((60, 80), text, fontsize=13, fontname="dv")
    doc.save(str(tmp_path / "ru.pdf"))
    doc.close()
    out, _ = _run(tmp_path / "ru.pdf", [("text", (50, 60, 545, 90))])
    (r,) = out.pages[0].regions
    assert text_source(r) == "text-layer" and r.text == text


def test_a_page_whose_text_no_block_read_warns(tmp_path):
    """The layout saw only a picture on a page of text: the run says so instead of an empty success."""
    pdf = tmp_path / "cols.pdf"
    corpus.two_columns(pdf)
    out, events = _run(pdf, [("image", (40, 40, 560, 300))])
    warnings = [e.message for e in events if e.type == "error" and not e.fatal]
    assert any("page 1 holds text, but no block of it was read" in w for w in warnings)
    assert not out.to_markdown().count("Reading machines")


def test_a_one_line_image_laid_out_as_a_picture_is_read():
    """A strip image of one short line (a real Greek snippet, corpora/realdocs s23) is laid out as one picture; the
    few letters its OCR found are its text, not a chart's labels."""
    from app.core.layout.page_boxes import Line, refine

    strip = [{"boxclass": "picture", "x0": 0, "y0": 0, "x1": 265, "y1": 50}]
    out = refine(strip, [Line((10, 12, 250, 38), "Spo σμεα.", True)])
    assert [b["boxclass"] for b in out] == ["picture", "picture-text"]
    photo = [{"boxclass": "picture", "x0": 0, "y0": 0, "x1": 265, "y1": 200}]
    assert [b["boxclass"] for b in refine(photo, [Line((10, 12, 60, 30), "Fig 3", True)])] == ["picture"]


def test_a_scanned_table_laid_out_as_a_picture_is_a_table():
    """The layout took a scanned table (rows of short cells) for a picture: it is the table, read as one."""
    from app.core.layout.page_boxes import Line, refine

    box = [{"boxclass": "picture", "x0": 50, "y0": 80, "x1": 240, "y1": 220}]
    cells = [Line((60 + 40 * c, 85 + 15 * r, 90 + 40 * c, 95 + 15 * r), f"{r}{c} Text", True)
             for r in range(8) for c in range(4)]
    out = refine(box, cells)
    assert [b["boxclass"] for b in out] == ["table"] and len(out[0]["ocr_lines"]) == 32
    prose = [Line((60, 85 + 15 * r, 230, 95 + 15 * r), "a line of running prose in the picture", True) for r in range(8)]
    assert [b["boxclass"] for b in refine(box, prose)] == ["picture", "picture-text"]


def test_a_caption_at_the_top_of_a_page_is_not_a_running_header():
    """A two-column page that begins with a table caption (DocLayNet's page 7, corpora/realdocs s03): the layout
    called it a page header; a running header is a line of a few words, so a paragraph there is read."""
    from app.core.layout.page_boxes import Line, refine

    caption = {"boxclass": "page-header", "x0": 27, "y0": 15, "x1": 272, "y1": 59}
    running = {"boxclass": "page-header", "x0": 300, "y0": 15, "x1": 530, "y1": 25}
    lines = [Line((27, 15 + 11 * k, 272, 25 + 11 * k), "Table 3: Performance of a Mask R-CNN R50 network in", True)
             for k in range(4)] + [Line((300, 15, 530, 25), "KDD '22, August 14-18, 2022", True)]
    out = refine([caption, running], lines)
    assert [b["boxclass"] for b in out] == ["text", "page-header"]
