"""Routing and each assembly rule (docs/architecture.md, Labels, tasks and prompts; Assembly), with expected outputs
written by hand."""
from __future__ import annotations

import pytest

from app.core.pipeline.assembly import (
    assemble_blocks, assemble_document, assemble_page, clean_content, collapse_runs, cut_repetition, format_formula,
    format_heading, format_table, format_text, normalize_inline_formula,
)
from app.core.document.regions import Region, route


def R(rid, label, text="", task=None, order=0, page=0):
    return Region(id=rid, page=page, box=(0, 0, 10, 10), label=label, task=task or route(label), order=order, text=text)


@pytest.mark.parametrize("label,task", [
    ("text", "text"), ("doc_title", "text"), ("paragraph_title", "text"), ("abstract", "text"), ("aside_text", "text"),
    ("formula_number", "text"), ("seal", "text"), ("vertical_text", "text"), ("table", "table"),
    ("formula", "formula"), ("display_formula", "formula"), ("inline_formula", "formula"), ("image", "picture"),
    ("chart", "picture"), ("header", "skipped"), ("footer", "skipped"), ("footnote", "text"),
    ("number", "skipped"), ("reference", "skipped"), ("something_new", "skipped"),
])
def test_route(label, task):
    assert route(label) == task


def test_route_keep_headers():
    assert route("header", keep_headers=True) == "text"
    assert route("number", keep_headers=True) == "text"
    assert route("header_image", keep_headers=True) == "picture"


def test_literal_tab_at_the_edges_is_stripped_but_not_latex_commands():
    assert clean_content("\\tHello\\t") == "Hello"
    assert clean_content("\\theta + 1") == "\\theta + 1"
    assert clean_content("a \\times b") == "a \\times b"


def test_dot_and_underscore_runs_collapse_to_three():
    assert collapse_runs("Contents........ 5") == "Contents... 5"
    assert collapse_runs("Name: ________") == "Name: ___"
    assert collapse_runs("a\\_\\_\\_\\_\\_b") == "a\\_\\_\\_b"
    assert collapse_runs("wait... ok") == "wait... ok"
    assert collapse_runs("····") == "···"


def test_repetition_loop_is_cut_to_one_copy():
    assert cut_repetition("Total: " + "12 34 " * 20) == "Total: 12 34"
    text = "A normal sentence that says a thing twice, twice."
    assert cut_repetition(text) == text
    assert cut_repetition("ha" * 5) == "ha" * 5  # too short to be a loop


def test_inline_formula_spacing():
    assert normalize_inline_formula("where $ x_i $ is") == "where $x_i$ is"
    assert normalize_inline_formula("$$ x $$") == "$$ x $$"


def test_table_html_kept_verbatim_else_cleaned():
    html = '<table><tr><td colspan="2">a  ....... b</td></tr></table>'
    assert format_table(html) == html
    assert format_table("  | a | b |.......  ") == "| a | b |..."


def test_formula_delimiters_rewrapped_and_tagged():
    assert format_formula("$$E = mc^2$$") == "$$\nE = mc^2\n$$"
    assert format_formula("\\[ a+b \\]") == "$$\na+b\n$$"
    assert format_formula("\\(x\\)") == "$$\nx\n$$"
    assert format_formula("x^2", tag="3") == "$$\nx^2 \\tag{3}\n$$"
    assert format_formula("   ") == ""


def test_text_bullets_markers_fences_and_newlines():
    assert format_text("• first\n· second\n* third") == "- first\n\n- second\n\n- third"
    # Word's PDFs: a Symbol or Wingdings bullet with no Unicode mapping comes out of the text layer as a private-use
    # code; other bullets of Unicode's; a checklist's marks are left as they are
    assert format_text("\uf0b7 first\n\uf0a7 second\n● third\n▪fourth") == \
        "- first\n\n- second\n\n- third\n\n- fourth"
    assert format_text("✓ done\n☐ to do") == "✓ done\n\n☐ to do"
    assert format_text("(1)first") == "(1) first"
    assert format_text("（a）first") == "(a) first"
    assert format_text("1.First step") == "1. First step"
    assert format_text("a)option") == "a) option"
    assert format_text("3.14 is pi") == "3.14 is pi"
    assert format_text("```\ncode") == "```\n\ncode\n\n```"
    assert format_text("line one\nline two\n\npara") == "line one\n\nline two\n\npara"


def test_headings():
    assert format_heading("## Title", 1) == "# Title"
    assert format_heading("- Section\n two", 2) == "## Section two"
    assert format_heading("", 2) == ""


def test_formula_number_merges_into_the_neighbouring_formula():
    regs = [R("a", "text", "See below."), R("f", "formula", "E = mc^2"), R("n", "formula_number", "(1)")]
    assert assemble_page(regs) == "See below.\n\n$$\nE = mc^2 \\tag{1}\n$$"
    before = [R("n", "formula_number", "（2）"), R("f", "formula", "$$a=b$$")]
    assert assemble_page(before) == "$$\na=b \\tag{2}\n$$"
    orphan = [R("t", "text", "Hello"), R("n", "formula_number", "(3)")]
    assert assemble_page(orphan) == "Hello"


def test_pictures_link_to_saved_crops_and_empty_blocks_vanish():
    regs = [R("p1-r01", "doc_title", "Report"), R("p1-r02", "image"), R("p1-r03", "text", "   "),
            R("p1-r04", "header", "Running head"), R("p1-r05", "chart")]
    blocks = assemble_blocks(regs, {"p1-r02": "doc_images/p1-r02.png"})
    assert blocks == {"p1-r01": "# Report", "p1-r02": "![Figure p1-r02](doc_images/p1-r02.png)"}


def test_document_has_page_anchors_and_blank_line_joins():
    pages = [(0, [R("p1-r01", "paragraph_title", "Intro"), R("p1-r02", "text", "Body.")]),
             (1, [R("p2-r01", "text", "More.", page=1)])]
    assert assemble_document(pages) == (
        '<a id="page-1"></a>\n\n## Intro\n\nBody.\n\n<a id="page-2"></a>\n\nMore.\n'
    )
    assert assemble_document(pages, anchors=False) == "## Intro\n\nBody.\n\nMore.\n"
