"""ALTO and hOCR: valid against the official ALTO 4.4 and 2.1 schemas (every file written here is validated), true
to the page (line and word boxes where the words are; measured ones unmarked, estimated ones marked), and an hOCR
that OCRmyPDF's hOCR-to-PDF transform turns into a PDF whose words lie in their boxes."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from export_kit import assert_valid_alto, convert, scanned_page, view

ALTO = "{http://www.loc.gov/standards/alto/ns-v4#}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The sample (text layer), a scan read through the layout's OCR, and the scan read whole by the classic engine
    (RapidOCR's own word boxes): each written as ALTO 4 and hOCR, and again as ALTO 2.1."""
    from app.core.base.paths import sample_document

    tmp = tmp_path_factory.mktemp("xml")
    scan = scanned_page(tmp)
    out = {}
    for name, path, layout in (("sample", sample_document(), "auto"), ("scan", scan, "auto"),
                               ("scan-page", scan, "page")):
        output, files = convert(path, tmp / name, layout, ("json", "alto", "hocr"))
        _, files2 = convert(path, tmp / f"{name}-2", layout, ("alto",), alto_version=2) if name != "scan-page" else (
            None, {})
        out[name] = (output, files, files2.get("alto"))
    return out


def _strings(tree, ns=ALTO):
    return [s.get("CONTENT") for s in tree.iter(f"{ns}String")]


def test_every_alto_is_valid_against_the_official_4_and_2_1_schemas(runs):
    for name, (output, files, alto2) in runs.items():
        tree = assert_valid_alto(files["alto"], 4)
        if alto2 is not None:
            tree2 = assert_valid_alto(alto2, 2)
            assert _strings(tree2, "{http://www.loc.gov/standards/alto/ns-v2#}") == _strings(tree)
        page = output.pages[0]
        p = tree.find(f".//{ALTO}Page")
        assert (int(p.get("WIDTH")), int(p.get("HEIGHT"))) == (page.width_px, page.height_px)
        assert tree.findtext(f".//{ALTO}fileName") == output.path.rsplit("/", 1)[-1]
        assert tree.findtext(f".//{ALTO}MeasurementUnit") == "pixel"
        if output.path.endswith(".png"):  # an image: its own pixels (eScriptorium pairs the file with the image)
            from PIL import Image

            with Image.open(output.path) as im:
                assert (int(p.get("WIDTH")), int(p.get("HEIGHT"))) == im.size


def test_alto_keeps_reading_order_and_the_blocks_words(runs):
    output, files, _ = runs["sample"]
    tree = assert_valid_alto(files["alto"], 4)
    doc = json.loads(files["json"].read_text())
    blocks = [b for p in doc["pages"] for b in p["blocks"] if b["task"] in ("text", "formula", "table") and b["text"]]
    ids = [tb.get("ID") for tb in tree.iter(f"{ALTO}TextBlock")]
    assert ids == [b["id"] for b in blocks]
    for b in blocks:
        tb = tree.find(f".//{ALTO}TextBlock[@ID='{b['id']}']")
        words = [s.get("CONTENT") for s in tb.iter(f"{ALTO}String")]
        if b["task"] == "text":
            assert words == re.sub(r"^#+ ", "", b["markdown"]).split(), b["id"]
    tables = [cb for cb in tree.iter(f"{ALTO}ComposedBlock") if cb.get("TYPE") == "table"]
    pictures = [cb for cb in tree.iter(f"{ALTO}ComposedBlock") if cb.get("TYPE") == "illustration"]
    assert tables and pictures and all(cb.find(f"{ALTO}Illustration") is not None for cb in pictures)
    assert tree.find(f".//{ALTO}LayoutTag[@LABEL='doc_title']") is not None


def test_measured_boxes_are_unmarked_and_lie_on_the_words(runs):
    """Text-layer blocks: lines and words measured (no estimate tag); the classic engine reading a crop: RapidOCR's
    word boxes, measured, with their confidence (WC); the layout's OCR lines: lines measured, words estimated."""
    _, files, _ = runs["sample"]
    tree = assert_valid_alto(files["alto"], 4)
    text_strings = [s for tb in tree.iter(f"{ALTO}TextBlock") if "text" in tb.get("TAGREFS")
                    for s in tb.iter(f"{ALTO}String")]
    assert text_strings and not [s for s in text_strings if s.get("TAGREFS")]

    _, files, _ = runs["scan-page"]
    tree = assert_valid_alto(files["alto"], 4)
    strings = list(tree.iter(f"{ALTO}String"))
    measured = [s for s in strings if not s.get("TAGREFS")]
    assert len(measured) >= 0.9 * len(strings) and all(s.get("WC") for s in measured)
    assert all(0 <= float(s.get("WC")) <= 1 for s in measured)
    assert not [ln for ln in tree.iter(f"{ALTO}TextLine") if ln.get("TAGREFS")]

    _, files, _ = runs["scan"]
    tree = assert_valid_alto(files["alto"], 4)
    lines = list(tree.iter(f"{ALTO}TextLine"))
    assert lines and not [ln for ln in lines if ln.get("TAGREFS")]  # the layout's OCR found them


def _hocr_words(path):
    from lxml import etree

    ns = {"h": "http://www.w3.org/1999/xhtml"}
    tree = etree.parse(str(path))
    page = tree.find(".//h:div[@class='ocr_page']", ns)
    dpi = float(re.search(r"scan_res (\d+)", page.get("title")).group(1))
    words = []
    for w in page.iterfind(".//h:span[@class='ocrx_word']", ns):
        box = [int(v) for v in re.search(r"bbox (\d+) (\d+) (\d+) (\d+)", w.get("title")).groups()]
        words.append((w.text, [v * 72.0 / dpi for v in box]))
    return words


@pytest.mark.parametrize("name", ["scan", "scan-page", "sample"])
def test_ocrmypdf_turns_the_hocr_into_a_pdf_with_each_word_in_its_box(runs, name, tmp_path):
    import pymupdf

    pytest.importorskip("ocrmypdf.hocrtransform")
    _, files, _ = runs[name]
    pdf = tmp_path / "hocr.pdf"
    done = subprocess.run([sys.executable, "-m", "ocrmypdf.hocrtransform", str(files["hocr"]), str(pdf)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    words = _hocr_words(files["hocr"])
    with pymupdf.open(pdf) as doc:
        found = doc[0].get_text("words")  # the transform reads the first page
    inside = 0
    for text, (x0, y0, x1, y1) in words:
        r = pymupdf.Rect(x0, y0, x1, y1) + (-1, -1, 1, 1)
        inside += any(f[4] == text and r.contains(pymupdf.Point((f[0] + f[2]) / 2, (f[1] + f[3]) / 2)) for f in found)
    assert len(words) > 20 and inside >= 0.95 * len(words), (inside, len(words))


def test_hocr_says_what_it_holds(runs):
    text = runs["sample"][1]["hocr"].read_text()
    assert 'name="ocr-system"' in text and 'name="ocr-capabilities"' in text
    assert text.count('class="ocr_page"') == 2 and "ocr_carea" in text and "ocr_line" in text
    assert "x_wconf" in runs["scan-page"][1]["hocr"].read_text()


def test_control_characters_and_an_empty_document_give_valid_files():
    from app.core.formats.alto import render_alto
    from app.core.formats.hocr import render_hocr
    from lxml import etree

    doc = view([("text", "text", (20.0, 20.0, 280.0, 60.0), "Bell\x07 and\x00 null\x1b[0m here\ufffe"),
                ("table", "table", (20.0, 80.0, 280.0, 150.0), "<table><tr><td>a\x0b</td><td>1</td></tr>"
                                                                "<tr><td>only</td></tr></table>")])
    for version in (4, 2):
        tree = assert_valid_alto(render_alto(doc, version), version)
        ns = tree.nsmap[None]
        assert _strings(tree, f"{{{ns}}}") == ["Bell", "and", "null[0m", "here", "a", "1", "only"]
    hocr = etree.fromstring(render_hocr(doc))
    assert "".join(hocr.itertext()).count("Bell") == 1

    empty = view([])
    for version in (4, 2):
        tree = assert_valid_alto(render_alto(empty, version), version)
        assert not _strings(tree, f"{{{tree.nsmap[None]}}}")
    assert etree.fromstring(render_hocr(empty)).find(".//{http://www.w3.org/1999/xhtml}div") is not None
    with pytest.raises(ValueError, match="choose 4 or 2"):
        render_alto(empty, 3)


def test_an_engine_that_reports_only_text_gets_the_lines_found_on_the_page(tmp_path):
    """GravityOCR, GLM-OCR, Unlimited-OCR and the remote engines give a region's text only: the line finder places its
    lines on the printed ones (measured boxes), the words are spread over them (estimated, and marked so); the
    searchable PDF puts the text on the same lines."""
    import pymupdf

    from app.core.pipeline.output import DocumentOutput, PageOutput, write_document
    from app.core.document.regions import Region

    src = pymupdf.open()
    page = src.new_page(width=420, height=300)
    printed = ("Reading machines see lines", "of printed text on paper", "and write them out")
    for k, text in enumerate(printed):
        page.insert_text((40, 70 + 34 * k), text, fontsize=15)
    scan = pymupdf.open()
    scan.new_page(width=420, height=300).insert_image(pymupdf.Rect(0, 0, 420, 300), pixmap=page.get_pixmap(dpi=150))
    scan.save(tmp_path / "vlm.pdf")
    region = Region(id="p1-r01", page=0, box=(25.0, 40.0, 360.0, 150.0), label="text", task="text", order=0,
                    box_pt=(25.0, 40.0, 360.0, 150.0), text=" ".join(printed),
                    extra={"stats": {"engine": "glm"}, "engine": "glm"})
    out = DocumentOutput(str(tmp_path / "vlm.pdf"), "glm", "fixed", 1,
                         pages=[PageOutput(0, 420, 300, 72.0, 420, 300, regions=[region], layout="fixed")])
    files = write_document(out, tmp_path / "out", "vlm", lambda *a: {}, ("alto", "pdf"))
    tree = assert_valid_alto(files["alto"], 4)
    lines = list(tree.iter(f"{ALTO}TextLine"))
    assert len(lines) == 3 and not [ln for ln in lines if ln.get("TAGREFS")]  # found on the page: measured
    for k, ln in enumerate(lines):  # each over its printed line (baseline 70 + 34k, 15 pt type)
        top, bottom = float(ln.get("VPOS")), float(ln.get("VPOS")) + float(ln.get("HEIGHT"))
        assert top - 2 <= 70 + 34 * k <= bottom + 2 and bottom - top < 25, (k, top, bottom)
        words = [s.get("CONTENT") for s in ln.iter(f"{ALTO}String")]
        assert abs(len(words) - len(printed[k].split())) <= 1  # shares by the lines' widths: a word off at most
    assert [s.get("CONTENT") for s in tree.iter(f"{ALTO}String")] == " ".join(printed).split()
    assert all(s.get("TAGREFS") == "GEOMETRY_ESTIMATED" for s in tree.iter(f"{ALTO}String"))
    with pymupdf.open(files["pdf"]) as doc:
        placed = [ln for b in doc[0].get_text("dict")["blocks"] for ln in b.get("lines", [])
                  if "".join(s["text"] for s in ln["spans"]).strip()]
    assert len(placed) == 3
    for ln, alto_line in zip(sorted(placed, key=lambda ln: ln["bbox"][1]), lines):
        mid = (ln["bbox"][1] + ln["bbox"][3]) / 2
        assert float(alto_line.get("VPOS")) - 1 <= mid <= float(alto_line.get("VPOS")) + float(alto_line.get("HEIGHT")) + 1


def test_a_document_with_no_page_is_refused_as_alto_and_nothing_of_the_set_is_left(tmp_path):
    from app.core.formats.alto import render_alto
    from app.core.pipeline.output import DocumentOutput, write_document

    doc = view([])
    doc.pages = []
    with pytest.raises(OSError, match="at least one page"):
        render_alto(doc)
    out = DocumentOutput(str(tmp_path / "gone.pdf"), "classic", "fixed", 0, pages=[])
    with pytest.raises(OSError, match=r"cannot write .*none\.alto\.xml: ALTO needs at least one page"):
        write_document(out, tmp_path / "out", "none", lambda *a: {}, ("md", "alto", "hocr"))
    assert not list((tmp_path / "out").glob("none*"))

    two = view([("text", "a b", (10.0, 10.0, 100.0, 30.0), "one"), ("text", "a_b", (10.0, 40.0, 100.0, 60.0), "two")])
    two.pages[0].blocks[0].label, two.pages[0].blocks[1].label = "a b", "a_b"  # labels that sanitise alike
    assert_valid_alto(render_alto(two), 4)


def test_convert_takes_alto_version_4_or_2_only(tmp_path, capsys):
    from app.cli import main
    from app.core.pipeline.options import parse_formats

    with pytest.raises(SystemExit) as stop:
        main(["convert", str(tmp_path / "none.pdf"), "-o", str(tmp_path / "out"), "--formats", "alto",
              "--alto-version", "3"])
    assert stop.value.code == 2 and "--alto-version" in capsys.readouterr().err
    assert parse_formats("hocr, ALTO,docling,xlsx,docx") == ("docx", "xlsx", "alto", "hocr", "docling")


def test_the_builtin_engine_places_each_word_by_the_recognisers_ctc_columns(tmp_path):
    """The built-in engine reads RapidOCR-detected lines; where its decoder agrees with the recogniser, each word's
    box comes from the CTC columns its characters were read in: measured, over the printed word."""
    import pymupdf

    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.document.regions import Region

    src = pymupdf.open()
    page = src.new_page(width=420, height=300)
    for k, text in enumerate(("Reading machines see lines", "of printed text on paper", "and write them out")):
        page.insert_text((40, 70 + 34 * k), text, fontsize=15)
    truth = [(w[4], w[:4]) for w in page.get_text("words")]
    scan = pymupdf.open()
    scan.new_page(width=420, height=300).insert_image(pymupdf.Rect(0, 0, 420, 300), pixmap=page.get_pixmap(dpi=150))
    scan.save(tmp_path / "lines.pdf")
    block = Region(id="p1-r01", page=0, box=(25.0, 40.0, 360.0, 150.0), label="text", task="text", order=0,
                   box_pt=(25.0, 40.0, 360.0, 150.0))
    pipe = Pipeline(PipelineOptions(engine="builtin", text_layer="off", formats=("alto", "hocr")), lambda e: None)
    pipe.fixed_layouts = {0: [block]}
    try:
        pipe.run(str(tmp_path / "lines.pdf"))
        files = pipe.write(tmp_path / "out")
    finally:
        pipe.close()
    tree = assert_valid_alto(files["alto"], 4)
    s = 72.0 / float(tree.find(f".//{ALTO}Page").get("WIDTH")) * 420 / 72.0  # ALTO pixels → points
    measured = [w for w in tree.iter(f"{ALTO}String") if not w.get("TAGREFS")]
    assert len(measured) >= 0.8 * len(truth), [w.get("CONTENT") for w in tree.iter(f"{ALTO}String")]
    on_word = 0
    for w in measured:
        x0, y0 = float(w.get("HPOS")) * s, float(w.get("VPOS")) * s
        x1, y1 = x0 + float(w.get("WIDTH")) * s, y0 + float(w.get("HEIGHT")) * s
        match = [b for t, b in truth if t == w.get("CONTENT")]
        on_word += any(abs((x0 + x1) / 2 - (b[0] + b[2]) / 2) < 0.5 * (b[2] - b[0]) + 3 and y0 - 2 <= b[3] and
                       y1 + 2 >= b[1] for b in match)
    assert on_word >= 0.9 * len(measured), (on_word, len(measured))
