"""Parsing Unlimited-OCR's raw output into regions: pages, boxes in pixels, labels and tasks as the layout
pipeline has them, and tolerance for malformed or truncated output (text kept, block flagged)."""
from __future__ import annotations

import pytest

from app.core.engines.unlimited_output import parse_output, to_pixels, to_regions

EOS = "<｜end▁of▁sentence｜>"

MULTI = (
    "<PAGE><|det|>title [100, 50, 900, 120]<|/det|># Annual report\n"
    "<|det|>text [100, 150, 900, 400]<|/det|>First paragraph.\nSecond line.\n"
    "<|det|>image [0, 500, 999, 999]<|/det|>\n"
    "<PAGE><|det|>header [0, 0, 999, 30]<|/det|>Report 2024\n"
    "<|det|>title [100, 60, 900, 100]<|/det|>Results\n"
    "<|det|>table [50, 120, 950, 600]<|/det|><table><tr><td>1</td></tr></table>\n"
    "<|det|>equation [200, 650, 800, 700]<|/det|>\\[ E = mc^2 \\]\n" + EOS
)


def test_multi_page_output_becomes_regions_per_page():
    parsed = parse_output(MULTI, n_pages=2)
    assert parsed.pages_seen == 2 and not parsed.problems
    regions = to_regions(parsed, [(1000, 2000), (500, 1000)], dpis=[200, 100])
    assert [r.id for r in regions] == ["p1-r01", "p1-r02", "p1-r03", "p2-r01", "p2-r02", "p2-r03", "p2-r04"]
    assert [r.id for r in to_regions(parsed, [(9, 9)] * 2, page_numbers=[4, 7])][2:4] == ["p5-r03", "p8-r01"]
    assert [r.page for r in regions] == [0, 0, 0, 1, 1, 1, 1]
    assert [r.order for r in regions] == [0, 1, 2, 0, 1, 2, 3]
    assert [r.label for r in regions] == ["doc_title", "text", "image", "header", "paragraph_title", "table",
                                          "formula"]
    assert [r.task for r in regions] == ["text", "text", "picture", "skipped", "text", "table", "formula"]
    assert regions[0].extra["native_label"] == "title" and regions[0].extra["box_999"] == [100, 50, 900, 120]
    assert regions[1].text == "First paragraph.\nSecond line."
    assert regions[5].text == "<table><tr><td>1</td></tr></table>"
    assert regions[6].text.endswith("mc^2 \\]")  # EOS cut off
    assert all(not r.flags for r in regions) and all(r.source == "unlimited" for r in regions)
    # boxes: v / 999 · page size, in each page's own pixels; box_pt from the page's dpi
    assert regions[0].box == pytest.approx((100 / 999 * 1000, 50 / 999 * 2000, 900 / 999 * 1000, 120 / 999 * 2000))
    assert regions[2].box == pytest.approx((0, 500 / 999 * 2000, 1000, 2000))
    assert regions[3].box == pytest.approx((0, 0, 500, 30 / 999 * 1000))
    assert regions[0].box_pt == pytest.approx(tuple(v * 72 / 200 for v in regions[0].box))
    assert regions[3].dpi == 100


def test_boxes_map_to_pixels_at_the_corners():
    assert to_pixels((0, 0, 999, 999), 1240, 1754) == (0, 0, 1240, 1754)
    assert to_pixels((499, 999, 999, 0), 999, 1998) == (499, 1998, 999, 0)


def test_missing_page_marker_single_and_multi_page():
    single = parse_output("<|det|>text [1, 2, 3, 4]<|/det|>Hello", n_pages=1)
    assert not single.problems and single.blocks[0].page == 0 and single.blocks[0].text == "Hello"
    multi = parse_output("<|det|>text [1, 2, 3, 4]<|/det|>Hello", n_pages=3)
    assert multi.problems and multi.blocks[0].page == 0
    # text before the first marker: page 1 lost its marker (pages the output never reached have no blocks) ...
    raw = "<|det|>text [1, 2, 3, 4]<|/det|>A<PAGE><|det|>text [1, 2, 3, 4]<|/det|>B"
    lead = parse_output(raw, n_pages=3)
    assert [(b.page, b.text) for b in lead.blocks] == [(0, "A"), (1, "B")] and lead.problems
    # ... unless every page already has its marker: then it joins page 1
    lead2 = parse_output(raw, n_pages=1)
    assert [(b.page, b.text) for b in lead2.blocks] == [(0, "A"), (0, "B")] and lead2.problems
    # more <PAGE> segments than pages: the extra ones go to the last page
    extra = parse_output("<PAGE>a<PAGE>b<PAGE>c", n_pages=2)
    assert [b.page for b in extra.blocks] == [0, 1] and "b" in extra.blocks[1].text and "c" in extra.blocks[1].text


def test_malformed_and_truncated_tags_keep_text_and_are_flagged():
    raw = (
        "<PAGE>stray words first\n"
        "<|det|>text [10, 20, 30]<|/det|>three numbers\n"  # a box lost a number
        "<|det|>[10, 20, 30, 40]<|/det|>no label\n"
        "<|det|>text<|/det|>no box\n"
        "<|det|>text [10, 20, 1200, 40]<|/det|>outside\n"
        "<|det|>text [300, 400, 100, 200]<|/det|>swapped\n"
        "<|det|>text [5, 6, 7, 8]<|/det|>fine<|/det|> tail\n"
        "<|det|>table [1, 2, 3"  # cut by the token budget in the middle of the box
    )
    blocks = parse_output(raw, n_pages=1).blocks
    texts = [b.text for b in blocks]
    assert texts == ["stray words first", "three numbers", "no label", "no box", "outside", "swapped",
                     "fine tail", ""]
    assert all(b.malformed for b in blocks)
    assert blocks[1].box is None and blocks[2].label == "text" and blocks[2].box == (10, 20, 30, 40)
    assert blocks[4].box == (10, 20, 999, 40) and blocks[5].box == (100, 200, 300, 400)
    assert blocks[7].label == "table" and "unclosed" in " ".join(blocks[7].problems)
    regions = to_regions(parse_output(raw, 1), [(999, 999)])
    assert all(r.flags == ["malformed"] and r.extra["malformed"] for r in regions)
    assert regions[1].box == (0.0, 0.0, 999.0, 999.0)  # no usable box: the whole page


def test_truncated_inside_the_tag_text_is_kept():
    blocks = parse_output("<PAGE><|det|>text [10, 20, 30, 40] Some text the tag never closed", 1).blocks
    assert blocks[0].box == (10, 20, 30, 40) and blocks[0].text == "Some text the tag never closed"
    assert blocks[0].malformed


def test_legacy_ref_det_form_and_unknown_labels():
    raw = "<|ref|>table<|/ref|><|det|>[[10, 20, 30, 40]]<|/det|><table></table>\n<|det|>marginalia [1, 2, 3, 4]<|/det|>x"
    parsed = parse_output(raw, 1)
    assert parsed.blocks[0].label == "table" and parsed.blocks[0].box == (10, 20, 30, 40)
    assert not parsed.blocks[0].malformed and parsed.blocks[0].text == "<table></table>"
    regions = to_regions(parsed, [(100, 100)])
    assert regions[1].label == "text" and regions[1].task == "text"  # unknown label: its text is kept
    assert regions[1].extra["native_label"] == "marginalia"


def test_regions_feed_the_pipeline_assembly():
    from app.core.pipeline.assembly import assemble_page

    regions = to_regions(parse_output(MULTI, 2), [(1000, 2000), (500, 1000)])
    page1 = assemble_page([r for r in regions if r.page == 0])
    assert page1.startswith("# ") and "Annual report" in page1 and "First paragraph." in page1


def test_every_block_knows_its_offsets_in_the_raw_output():
    """The R-SWA window view highlights raw-output characters; each block carries where it sits in that text
    (`raw_span`, tag included) and where its text is (`raw_text_span`), through noise strings, legacy tags, page
    markers and truncation, for many random outputs."""
    import random

    from app.core.engines.unlimited_output import clean_raw

    pieces = ["<PAGE>", "<|det|>title [12, 30, 980, 88]<|/det|># Annual report\n", "<|det|>text [40, 120, 960, 400]"
              "<|/det|>The quick brown fox.\n", "<|ref|>table<|/ref|><|det|>[[50, 420, 950, 700]]<|/det|><table><tr>"
              "<td>42</td></tr></table>\n", "<|grounding|>", "loose words ", "<|det|>equation [1, 2, 3, 4]<|/det|>"
              "\\[ E = mc^2 \\]\n", "\n"]
    rng = random.Random(5)
    for trial in range(300):
        raw = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        raw = raw[: rng.randint(0, len(raw))] if trial % 3 == 0 else raw  # cut anywhere, as Cancel/budget do
        n_pages = rng.randint(1, 3)
        regions = to_regions(parse_output(raw, n_pages), [(600.0, 800.0)] * n_pages)
        last_end = 0
        for r in regions:
            a, b = r.extra["raw_span"]
            ta, tb = r.extra["raw_text_span"]
            assert last_end <= a <= ta <= tb <= b <= len(raw), (raw, r)
            last_end = b
            if "malformed" not in r.flags or not any(s in r.extra["malformed"] for s in ("stray", "inside the tag")):
                assert clean_raw(raw[ta:tb]).replace("<PAGE>", "").strip() == r.text, (raw, r)


def test_text_offset_skips_what_the_parser_drops():
    from app.core.engines.unlimited_display import text_offset

    raw = "<|det|>text [1, 2, 3, 4]<|/det|>\n  Hello<|grounding|> world<PA"
    (r,) = to_regions(parse_output(raw), [(100.0, 100.0)])
    a, _ = r.extra["raw_text_span"]
    assert r.text == "Hello world<PA" and raw[a:].startswith("Hello")
    assert text_offset(raw, a, raw.index(" world")) == len("Hello")  # the noise string counts for nothing
    assert text_offset(raw, a - 3, a + 2) == 2  # leading whitespace before the text counts for nothing either
    assert text_offset(raw, a, raw.index("<|grounding|>") + 4) == len("Hello")  # nor a string cut in the middle


def test_incremental_parse_equals_the_whole_parse_at_every_prefix():
    """The live generation re-parses only what changed; at every length of a messy output (missing and extra
    <PAGE>, legacy tags, noise and EOS strings arriving piece by piece, truncated tags) it says what a parse of
    the whole text says."""
    import random

    from app.core.engines.unlimited_output import IncrementalParser

    pieces = ["<PAGE>", "<|det|>", "text", " [1, 2, 3, 4]", "<|/det|>", "Hello ", "world\n", "<|det|>title [5, 6, ",
              "7, 8]<|/det|>", "# Title", "<|grounding|>", "<｜▁pad▁｜>", "<|ref|>table<|/ref|>", "<|det|>[[9, 9, 99, 99]]",
              "<|/det|>", "<table><tr><td>1</td></tr></table>", "\n\n", "stray <|/det|> ", "<｜end▁of▁sentence｜>",
              "after the end"]
    rng = random.Random(4)
    for trial in range(12):
        text = "".join(rng.choice(pieces[:-2]) for _ in range(rng.randint(5, 40)))
        if trial % 3 == 0:
            text += pieces[-2] + pieces[-1]
        n_pages = rng.randint(1, 4)
        live = IncrementalParser(n_pages)
        cut = 0
        while cut < len(text):
            cut = min(len(text), cut + rng.randint(1, 9))  # token-sized steps, cutting special strings in two
            assert live.parse(text[:cut]) == parse_output(text[:cut], n_pages), (trial, cut)
    restart = IncrementalParser(1)
    restart.parse("<|det|>text [1, 2, 3, 4]<|/det|>abc")
    assert restart.parse("<|det|>table [1, 2, 3, 4]<|/det|>x") == parse_output("<|det|>table [1, 2, 3, 4]<|/det|>x")
