"""The searchable PDF: the source's pages with the blocks' reviewed text as an invisible layer that PyMuPDF (as any
viewer) extracts where the blocks stand; the same bytes on every write."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.core.pipeline.output import DocumentOutput, PageOutput, write_document
from app.core.document.regions import Region
from app.core.text.textlayer import normalise


def _scanned_pdf(tmp_path: Path) -> Path:
    """A one-page PDF that is only an image (a scan): no text layer of its own."""
    import pymupdf

    src = pymupdf.open()
    page = src.new_page(width=400, height=300)
    page.insert_text((40, 60), "A scanned page", fontsize=16)
    pix = page.get_pixmap(dpi=100)
    scan = pymupdf.open()
    scan.new_page(width=400, height=300).insert_image(pymupdf.Rect(0, 0, 400, 300), pixmap=pix)
    path = tmp_path / "scan.pdf"
    scan.save(path)
    return path


def _output(path: Path, kind_boxes: list[tuple[str, str, tuple[float, float, float, float]]]) -> DocumentOutput:
    page = PageOutput(0, 400, 300, 72.0, 400, 300, layout="fixed")
    for k, (task, text, box) in enumerate(kind_boxes):
        r = Region(id=f"p1-r{k + 1:02d}", page=0, box=box, label="table" if task == "table" else "text", task=task,
                   order=k, box_pt=box, text=text, extra={"stats": {}, "engine": "test"})
        page.regions.append(r)
    return DocumentOutput(str(path), "test", "fixed", 1, pages=[page])


def _words(pdf_path: Path):
    import pymupdf

    with pymupdf.open(pdf_path) as doc:
        return [w for p in doc for w in p.get_text("words")]


def _inside(word, box, slack: float = 1.5) -> bool:
    x0, y0, x1, y1 = word[:4]
    return x0 >= box[0] - slack and y0 >= box[1] - slack and x1 <= box[2] + slack and y1 <= box[3] + slack


def test_the_blocks_text_is_extracted_from_the_pdf_inside_each_blocks_box(tmp_path):
    boxes = [
        ("text", "Invoice number 4711\nsecond line of the paragraph", (30.0, 40.0, 330.0, 90.0)),
        ("table", "<table><tr><td>Item</td><td>Price</td></tr><tr><td>Tea</td><td>3.50</td></tr></table>",
         (30.0, 120.0, 250.0, 170.0)),
        ("text", "Korean 한국어 텍스트", (30.0, 200.0, 300.0, 220.0)),
    ]
    out = _output(_scanned_pdf(tmp_path), boxes)
    out.edits = {"p1-r01": "Invoice number 4712\nsecond line of the paragraph"}  # a person's edit is what goes in
    files = write_document(out, tmp_path / "out", "scan", lambda *a: {}, ("md", "pdf"))
    words = _words(files["pdf"])
    for task, text, box in boxes:
        inside = [w for w in words if _inside(w, box)]
        got = " ".join(w[4] for w in inside)
        want = normalise(out.edits.get("p1-r01") if box == boxes[0][2] else text.replace("</td>", " </td>"))
        assert got == want, (got, want)
    assert len(words) == sum(len(normalise(t).split()) for _, t, _ in boxes)  # nothing placed outside the boxes
    # a block of two lines is written as two lines, the second below the first
    first = [w for w in words if _inside(w, boxes[0][2])]
    assert len({round(w[1]) for w in first}) == 2 and first[-1][1] > first[0][1]
    import pymupdf

    with pymupdf.open(files["pdf"]) as doc:
        assert doc[0].get_images() and doc[0].rect == pymupdf.Rect(0, 0, 400, 300)  # the scan itself, untouched


def test_the_same_output_writes_the_same_pdf_bytes(tmp_path):
    out = _output(_scanned_pdf(tmp_path), [("text", "Same bytes twice", (30.0, 40.0, 330.0, 70.0))])
    a = write_document(out, tmp_path / "a", "scan", lambda *a: {}, ("pdf",))["pdf"].read_bytes()
    b = write_document(out, tmp_path / "b", "scan", lambda *a: {}, ("pdf",))["pdf"].read_bytes()
    assert a == b and a.startswith(b"%PDF")


def test_an_image_file_becomes_a_searchable_page_of_its_size(tmp_path):
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (400, 300), "white")
    ImageDraw.Draw(img).text((40, 40), "hello", fill="black")
    path = tmp_path / "photo.png"
    img.save(path, dpi=(72, 72))
    out = _output(path, [("text", "hello world", (30.0, 30.0, 200.0, 60.0))])
    files = write_document(out, tmp_path / "out", "photo", lambda *a: {}, ("pdf",))
    words = _words(files["pdf"])
    assert [w[4] for w in words] == ["hello", "world"] and all(_inside(w, (30, 30, 200, 60)) for w in words)


def test_a_source_that_cannot_be_opened_leaves_no_file_and_says_why(tmp_path):
    out = _output(tmp_path / "gone.pdf", [("text", "x", (0.0, 0.0, 10.0, 10.0))])
    with pytest.raises(OSError, match="gone.pdf"):
        write_document(out, tmp_path / "out", "gone", lambda *a: {}, ("md", "pdf"))
    assert not any((tmp_path / "out").glob("gone.*"))


def test_an_encrypted_source_is_opened_with_its_password(tmp_path):
    import pymupdf

    plain = _scanned_pdf(tmp_path)
    locked = tmp_path / "locked.pdf"
    with pymupdf.open(plain) as doc:
        doc.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="s3cret", owner_pw="owner")
    out = _output(locked, [("text", "Secret words", (30.0, 40.0, 330.0, 70.0))])
    with pytest.raises(OSError, match="password"):
        write_document(out, tmp_path / "no", "locked", lambda *a: {}, ("pdf",))
    files = write_document(out, tmp_path / "yes", "locked", lambda *a: {}, ("pdf",), password="s3cret")
    assert [w[4] for w in _words(files["pdf"])] == ["Secret", "words"]


def test_each_line_read_by_the_builtin_engine_lies_over_its_own_line_box(tmp_path):
    """A three-line paragraph read by the built-in engine: each line's invisible text lies within the box the engine
    found for that line (mapped from crop pixels to page points), not merely within the block, in both the
    unedited block and one a person edited."""
    import pymupdf

    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.searchable_pdf import line_boxes_pt

    src = pymupdf.open()
    page = src.new_page(width=420, height=300)
    for k, text in enumerate(("Reading machines see lines", "of printed text on paper", "and write them out")):
        page.insert_text((40, 70 + 34 * k), text, fontsize=15)
    scan = pymupdf.open()
    scan.new_page(width=420, height=300).insert_image(pymupdf.Rect(0, 0, 420, 300), pixmap=page.get_pixmap(dpi=150))
    scan.save(tmp_path / "lines.pdf")
    block = Region(id="p1-r01", page=0, box=(25.0, 40.0, 360.0, 150.0), label="text", task="text", order=0,
                   box_pt=(25.0, 40.0, 360.0, 150.0))
    pipe = Pipeline(PipelineOptions(engine="builtin", text_layer="off"), lambda e: None)
    pipe.fixed_layouts = {0: [block]}
    try:
        out = pipe.run(str(tmp_path / "lines.pdf"))
    finally:
        pipe.close()
    region = out.pages[0].regions[0]
    lines = line_boxes_pt(region)
    assert len(lines) == 3 and region.extra["stats"]["crop"]["dpi"] > 72, region.extra["stats"].get("crop")
    for (x0, y0, x1, y1), _ in lines:  # the lines found are the printed ones (baselines 70, 104, 138)
        assert 25.0 - 1 <= x0 < x1 <= 360.0 + 1 and 40.0 - 1 <= y0 < y1 <= 150.0 + 1 and y1 - y0 < 30
    for edits in ({}, {"p1-r01": "Reading machines see many lines of printed text on old paper and write them"}):
        out.edits = edits
        files = write_document(out, tmp_path / f"out{len(edits)}", "lines", lambda *a: {}, ("md", "pdf"))
        with pymupdf.open(files["pdf"]) as doc:
            placed = [ln for b in doc[0].get_text("dict")["blocks"] for ln in b.get("lines", [])]
        placed = [ln for ln in placed if "".join(s["text"] for s in ln["spans"]).strip()]
        assert len(placed) == 3, placed
        for ln, (box, _) in zip(sorted(placed, key=lambda ln: ln["bbox"][1]), lines):
            assert _inside(ln["bbox"], box), (ln["bbox"], box)


def test_line_boxes_map_crop_pixels_to_points_and_a_moved_box_falls_back_to_bands():
    from app.core.pipeline.searchable_pdf import assign_lines, crop_note, lines_inside

    stats = {"line_boxes": [[10, 20, 410, 60], [10, 80, 300, 120]], "crop": crop_note((36.0, 72.0, 300.0, 200.0), 144),
             "line_stats": [{"text": "one two"}, {"text": "three"}]}
    region = Region(id="p1-r01", page=0, box=(0, 0, 0, 0), label="text", task="text", order=0,
                    box_pt=(36.0, 72.0, 300.0, 200.0), extra={"stats": stats})
    boxes = lines_inside(region)
    assert [b for b, _ in boxes] == [(41.0, 82.0, 241.0, 102.0), (41.0, 112.0, 186.0, 132.0)]
    assert assign_lines(["one two three"], boxes) == ["one two", "three"]  # the words each line read
    assert assign_lines(["one two six seven eight"], boxes) == ["one two six", "seven eight"]  # edited: shares
    region.box_pt = (36.0, 150.0, 300.0, 260.0)  # moved after the reading: its old lines are not where it is
    assert lines_inside(region) == []
