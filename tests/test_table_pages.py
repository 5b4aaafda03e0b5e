"""A table over a page break is one table in the document's Markdown (app.core.text.table_pages, joined by
app.core.pipeline.assembly): its repeated header dropped, each row's page kept; another table is left
alone."""
import pymupdf
import pytest

from app.bench.teds import tables_in
from app.core.text.table_pages import join_continued, width

HEAD = "<tr><th>Item</th><th>Count</th><th>Price</th></tr>"
FIRST = f"<table>{HEAD}<tr><td>apple</td><td>3</td><td>1.20</td></tr></table>"


def test_a_continuation_with_the_header_again_joins_without_it_and_its_rows_keep_their_page():
    nxt = f"<table>{HEAD}<tr><td>pear</td><td>5</td><td>0.80</td></tr></table>"
    merged = join_continued(FIRST, nxt, page=2)
    assert merged == (f"<table>{HEAD}<tr><td>apple</td><td>3</td><td>1.20</td></tr>"
                      '<tr data-page="2"><td>pear</td><td>5</td><td>0.80</td></tr></table>')


def test_a_continuation_without_a_header_joins_and_a_span_counts_its_columns():
    nxt = '<table><tr><td colspan="2">pear and plum</td><td>0.80</td></tr></table>'
    assert width(nxt) == 3
    assert join_continued(FIRST, nxt, page=5).endswith('<tr data-page="5"><td colspan="2">pear and plum</td>'
                                                       "<td>0.80</td></tr></table>")


def test_another_column_count_or_a_header_of_its_own_is_another_table():
    assert join_continued(FIRST, "<table><tr><td>pear</td><td>5</td></tr></table>", page=2) is None
    other = ("<table><tr><th>Town</th><th>Staff</th><th>Cost</th></tr>"
             "<tr><td>Graz</td><td>4</td><td>9</td></tr></table>")
    assert join_continued(FIRST, other, page=2) is None
    assert join_continued(FIRST, "pear 5 0.80", page=2) is None


def _two_page_table(path):
    """A parts list that runs from the foot of page 1 to the top of page 2, where its header row is printed
    again."""
    doc = pymupdf.open()
    rows = [(f"Part {n:02d}", f"{10 + n}", f"{n * 1.5:.2f}", "steel" if n % 2 else "brass")
            for n in range(1, 31)]
    head = ("Part", "Stock", "Weight (kg)", "Material")
    xs = [72, 200, 300, 420]
    for k, (y, part) in enumerate([(150, rows[:24]), (60, rows[24:])]):
        page = doc.new_page(width=595, height=842)
        if k == 0:
            page.insert_textbox(pymupdf.Rect(72, 60, 523, 140), "The parts kept in the store at the end of "
                                "the year are listed below with their stock, weight and material, as counted "
                                "in December.", fontsize=11)
        for n, row in enumerate([head] + part):
            for x, t in zip(xs, row):
                page.insert_text((x, y + 18 * n + 12), t, fontsize=10, fontname="hebo" if n == 0 else "helv")
            page.draw_line((70, y + 18 * n + 16), (525, y + 18 * n + 16), width=0.5)
        if k == 1:
            page.insert_textbox(pymupdf.Rect(72, 220, 523, 300), "Parts that were ordered but not yet "
                                "delivered are not in the list; they are counted when they arrive.",
                                fontsize=11)
    doc.save(path)


@pytest.mark.slow
def test_a_table_run_over_a_page_break_is_one_table_in_the_document(tmp_path):
    from pipeline_kit import read

    _two_page_table(tmp_path / "parts.pdf")
    out = read(tmp_path / "parts.pdf")
    md = out.to_markdown(anchors=True)
    (table,) = tables_in(md)
    assert [c.text for c in table[0]] == ["Part", "Stock", "Weight (kg)", "Material"]
    assert [row[0].text for row in table[1:]] == [f"Part {n:02d}" for n in range(1, 31)]  # the header once
    assert md.count('data-page="2"') == 6 and '<a id="page-2"></a>' in md
    assert md.index("not yet delivered") > md.index("Part 30")
    pages = out.to_dict()["pages"]  # the JSON keeps each page's own table block
    assert [sum(b["markdown"].startswith("<table") for b in p["blocks"]) for p in pages] == [1, 1]
