"""Borderless tables from word alignment (app.core.text.word_grid) on pages written with PyMuPDF's text
insertion: a grid of words is a table with its header where the type sets it apart, and a paragraph, a list
and columns of prose are not tables."""
import pymupdf
import pytest

from app.bench.teds import tables_in
from app.core.review.table_grid import Grid
from app.core.text.word_grid import page_words, word_table

PROSE = ("The figures below were taken from the annual report of the company. They show the revenue, the "
         "cost and the margin of each region over the last year, as the auditors confirmed them in their "
         "letter to the board "
         "in the spring, after a long and careful review of every account that the offices had kept.")


def _page(doc=None):
    doc = doc or pymupdf.open()
    return doc, doc.new_page(width=595, height=842)


def _table(page, rows, xs, y=100, bold_head=True, size=10, gap=15, head_font="hebo"):
    for n, row in enumerate(rows):
        for x, t in zip(xs, row):
            if t:
                page.insert_text((x, y + n * gap), t, fontsize=size,
                                 fontname=head_font if (n == 0 and bold_head) else "helv")


def _grid(html):
    (rows,) = tables_in(html)
    return [[(c.text, c.header, c.colspan) for c in row] for row in rows]


def test_words_in_four_aligned_columns_are_a_table_with_an_empty_cell_kept_and_its_bold_row_as_header():
    doc, page = _page()
    _table(page, [("Office", "Staff", "Revenue", "Cost"), ("Berlin", "12", "1,204", "880"),
                  ("Lyon", "7", "", "410"), ("Porto", "9", "733", "512")], [72, 170, 250, 340])
    grid = _grid(word_table(page_words(page)))
    assert grid[0] == [(h, True, 1) for h in ("Office", "Staff", "Revenue", "Cost")]
    assert grid[2] == [("Lyon", False, 1), ("7", False, 1), ("", False, 1), ("410", False, 1)]
    assert len(grid) == 4


def test_a_first_row_in_the_body_font_is_no_header_unless_it_names_columns_of_numbers():
    doc, page = _page()
    _table(page, [("Red", "round", "sweet"), ("Green", "long", "sour"), ("Blue", "flat", "bitter")],
           [72, 200, 320], bold_head=False)
    assert all(not c[1] for row in _grid(word_table(page_words(page))) for c in row)
    doc, page = _page()
    _table(page, [("Name", "Age", "Height"), ("Anna", "34", "1.70"), ("Ben", "27", "1.82"),
                  ("Carla", "45", "1.64")],
           [72, 200, 320], bold_head=False)
    assert [c[1] for c in _grid(word_table(page_words(page)))[0]] == [True, True, True]


def test_a_header_in_another_font_is_the_header_and_a_cell_over_two_columns_spans_them():
    doc, page = _page()
    page.insert_text((250, 100), "Sales", fontsize=10, fontname="tibo")  # centred over the last two columns
    _table(page, [("Region", "2023", "2024"), ("North", "10", "12"), ("South", "8", "9"),
                  ("East", "7", "11")],
           [72, 200, 300], y=115, head_font="tibo")
    grid = _grid(word_table(page_words(page)))
    assert grid[0] == [("", True, 1), ("Sales", True, 2)]  # two header rows, "Sales" over 2023 and 2024
    assert grid[1] == [("Region", True, 1), ("2023", True, 1), ("2024", True, 1)]
    assert grid[2] == [("North", False, 1), ("10", False, 1), ("12", False, 1)] and len(grid) == 5


def test_a_justified_paragraph_is_not_a_table():
    doc, page = _page()
    page.insert_textbox(pymupdf.Rect(72, 72, 320, 400), PROSE + " " + PROSE, fontsize=10, fontname="helv",
                        align=3)
    assert word_table(page_words(page)) is None


def test_a_list_with_markers_is_not_a_table():
    doc, page = _page()
    items = ["Open the valve slowly", "Wait for the gauge to settle", "Close the lid",
             "Write down the reading"]
    for n, item in enumerate(items):
        page.insert_text((72, 100 + 16 * n), f"{n + 1}.", fontsize=10)
        page.insert_text((100, 100 + 16 * n), item, fontsize=10)
        page.insert_text((400, 100 + 16 * n), "(step)", fontsize=10)  # even with a note at the right
    assert word_table(page_words(page)) is None


@pytest.mark.parametrize("columns", [2, 3])
def test_columns_of_prose_side_by_side_are_not_a_table(columns):
    doc, page = _page()
    width = (451 - 20 * (columns - 1)) / columns
    for c in range(columns):
        x = 72 + c * (width + 20)
        page.insert_textbox(pymupdf.Rect(x, 72, x + width, 500), PROSE, fontsize=10, fontname="helv", align=3)
    assert word_table(page_words(page)) is None


def test_two_rows_are_a_table_only_as_column_names_over_figures():
    doc, page = _page()
    _table(page, [("Office", "Staff", "Cost"), ("Berlin", "12", "880")], [72, 170, 250])
    assert Grid.from_html(word_table(page_words(page))).rows() == [["Office", "Staff", "Cost"], ["Berlin", "12", "880"]]
    doc, page = _page()
    _table(page, [("Office", "Staff", "Cost"), ("Berlin", "Paris", "Rome")], [72, 170, 250])
    assert word_table(page_words(page)) is None  # two rows of words: no figures under names
    doc, page = _page()
    _table(page, [("Office", "Staff"), ("Berlin", "12")], [72, 250])
    assert word_table(page_words(page)) is None  # two columns need the rows of labels and figures


def test_column_names_that_repeat_the_tables_first_row_are_not_an_external_header(tmp_path):
    """PyMuPDF's finder can take the paragraph line above an unruled table, with the first row, for a header
    above the table: the header row is then written once, without the paragraph's words."""
    from app.core.layout.page_boxes import find_tables

    doc, page = _page()
    assert page.insert_textbox(pymupdf.Rect(72, 72, 523, 132), PROSE[:PROSE.index(" to the board")] + ".",
                               fontsize=11, fontname="helv") > 0
    rows = [("Region", "Revenue", "Cost", "Margin"), ("North", "1,204", "980", "18.6%"),
            ("South", "2,310", "1,875", "18.8%"), ("East", "", "640", "21.0%"),
            ("Total", "7,344", "5,906", "19.6%")]
    _table(page, rows, [72, 220, 320, 420], y=142, size=11, gap=18)
    doc.save(tmp_path / "t.pdf")
    with pymupdf.open(tmp_path / "t.pdf") as pdf:
        import pymupdf4llm  # noqa: F401 - PyMuPDF's finder sees unruled tables with its layout loaded

        found = find_tables(pdf[0])
    ((box, html),) = found
    assert "letter" not in html and html.count("Region") == 1 and box[1] > 125  # not over the paragraph


@pytest.mark.slow
def test_a_borderless_table_the_layout_calls_text_is_written_as_a_table(tmp_path):
    from pipeline_kit import read

    doc, page = _page()
    assert page.insert_textbox(pymupdf.Rect(72, 72, 523, 142), PROSE, fontsize=11, fontname="helv") > 0
    _table(page, [("Name", "Age", "City"), ("Anna", "34", "Berlin"), ("Ben", "27", "Paris"),
                  ("Carla", "45", "Rome")],
           [72, 200, 300], y=170, bold_head=False)
    assert page.insert_textbox(pymupdf.Rect(72, 250, 523, 320), PROSE, fontsize=11, fontname="helv") > 0
    doc.save(tmp_path / "t.pdf")
    out = read(tmp_path / "t.pdf")
    tables = [r for p in out.pages for r in p.regions if r.task == "table"]
    assert len(tables) == 1
    md = out.to_markdown(anchors=False)
    assert _grid(md) == [[("Name", True, 1), ("Age", True, 1), ("City", True, 1)],
                         [("Anna", False, 1), ("34", False, 1), ("Berlin", False, 1)],
                         [("Ben", False, 1), ("27", False, 1), ("Paris", False, 1)],
                         [("Carla", False, 1), ("45", False, 1), ("Rome", False, 1)]]
    assert md.count("auditors confirmed") == 2  # the paragraphs around it stay paragraphs


def test_a_bold_header_over_two_lines_is_one_header_row_and_the_body_starts_below_it():
    doc, page = _page()
    for y, names in ((140, ("Office", "Staff", "Part time", "Budget")), (152, ("", "", "share", "(kEUR)"))):
        for x, name in zip([72, 200, 300, 400], names):
            if name:
                page.insert_text((x, y), name, fontsize=10, fontname="hebo")
    _table(page, [("Berlin", "12", "25%", "1,204"), ("Lyon", "7", "", "410"), ("Porto", "9", "11%", "733")],
           [72, 200, 300, 400], y=170, gap=16, bold_head=False)
    grid = _grid(word_table(page_words(page)))
    assert grid[0] == [("Office", True, 1), ("Staff", True, 1), ("Part time share", True, 1),
                       ("Budget (kEUR)", True, 1)]
    assert grid[1] == [("Berlin", False, 1), ("12", False, 1), ("25%", False, 1), ("1,204", False, 1)]
    assert grid[2][2] == ("", False, 1) and len(grid) == 4


def test_a_header_whose_names_take_two_lines_is_one_row_in_the_finders_table():
    """A real page (docling's test PDF, corpora/realdocs/d11): PyMuPDF's finder gives the unruled header
    "State funded / legal aid" as two rows; it is one header cell."""
    from pathlib import Path

    import pymupdf4llm  # noqa: F401 - PyMuPDF's finder sees unruled tables with its layout loaded

    from app.core.layout.page_boxes import find_tables

    pdf = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "d11-wide-table.pdf"
    with pymupdf.open(pdf) as doc:
        found = [html for _, html in find_tables(doc[0]) if "State funded" in html]
    (html,) = found
    grid = _grid(html)
    assert grid[0][2:] == [("State funded legal aid", True, 1), ("CSOs", True, 1)]
    assert grid[1][:2] == [("yy", False, 1), ("Persons with disabilities", False, 1)]


def test_labels_and_their_figures_in_two_columns_are_a_table_but_a_list_of_numbers_is_not():
    doc, page = _page()
    rows = [("Clinical sign", "Rate"), ("Abnormal bleeding", "90.1%"), ("Abdominal pain", "19.4%"),
            ("Nausea", "15.2%"), ("Fatigue", "2.0%")]
    _table(page, rows, [72, 300], bold_head=False)
    grid = _grid(word_table(page_words(page)))
    assert grid[0] == [("Clinical sign", True, 1), ("Rate", True, 1)] and grid[4][1] == ("2.0%", False, 1)
    doc, page = _page()
    _table(page, [(f"{n}.", f"step {n}") for n in range(1, 6)], [72, 300], bold_head=False)
    assert word_table(page_words(page)) is None  # markers and words, no figures


@pytest.mark.slow
def test_a_scanned_borderless_table_the_layout_calls_text_is_read_as_a_table(tmp_path):
    from pipeline_kit import read

    doc, page = _page()
    assert page.insert_textbox(pymupdf.Rect(72, 72, 523, 142), PROSE, fontsize=11, fontname="helv") > 0
    _table(page, [("Name", "Age", "City"), ("Anna", "34", "Berlin"), ("Ben", "27", "Paris"),
                  ("Carla", "45", "Rome")],
           [72, 200, 300], y=170, bold_head=False, size=11, gap=18)
    page.get_pixmap(dpi=150).save(tmp_path / "scan.png")  # a scan: no text layer, the layout's OCR reads it
    out = read(tmp_path / "scan.png")
    (table,) = [r for p in out.pages for r in p.regions if r.task == "table"]
    grid = _grid(out.to_markdown(anchors=False))
    assert [c[0] for c in grid[0]] == ["Name", "Age", "City"]
    assert [c[0] for c in grid[3]] == ["Carla", "45", "Rome"]


def test_rows_that_label_a_group_of_rows_keep_a_table_a_table():
    doc, page = _page()
    rows = [("Strain", "", "Rate"), ("(a)", "", ""), ("SIV", "0.12", "0.20"), ("HIV-1", "0.39", "0.38"),
            ("(b)", "", ""), ("SIV", "0.087", "0.064"), ("HIV-1", "0.20", "0.17")]  # 4 full rows of 7
    _table(page, rows, [72, 200, 300])
    grid = _grid(word_table(page_words(page)))
    assert len(grid) == 7 and grid[4] == [("(b)", False, 1), ("", False, 1), ("", False, 1)]
    assert [c[0] for c in grid[5]] == ["SIV", "0.087", "0.064"]


def test_a_read_header_centred_over_two_columns_spans_them_and_a_cell_off_its_column_does_not():
    from app.core.text.tables import from_rows

    rows = [[((245, 0, 275, 10), "Sales")],
            [((0, 15, 40, 25), "Region"), ((200, 15, 222, 25), "2023"), ((300, 15, 322, 25), "2024")],
            [((0, 30, 40, 40), "North"), ((205, 30, 222, 40), "10"), ((295, 30, 322, 40), "12")],  # juts out
            [((0, 45, 40, 55), "South"), ((205, 45, 222, 55), "8"), ((305, 45, 322, 55), "9")]]
    grid = _grid(from_rows(rows, header_rows=2))
    assert grid[0] == [("", True, 1), ("Sales", True, 2)]
    assert grid[2] == [("North", False, 1), ("10", False, 1), ("12", False, 1)]


def test_a_row_whose_cell_runs_over_a_gutter_does_not_close_the_columns_of_the_rows_around_it():
    doc, page = _page()
    rows = [("Complaint", "N", "Pulse", "BP")]
    rows += [(f"Sign {n}", f"{100 + n}", f"{n}.5", f"{n}.1") for n in range(8)]
    _table(page, rows, [72, 200, 300, 400])
    for x, t in zip([72, 200, 400], ("Other", "not counted at the two sites", "0.4")):  # over N and Pulse
        page.insert_text((x, 100 + 15 * len(rows)), t, fontsize=10)
    for x, t in zip([72, 200, 300, 400], ("Total", "999", "9.9", "9.8")):
        page.insert_text((x, 100 + 15 * (len(rows) + 1)), t, fontsize=10)
    grid = _grid(word_table(page_words(page)))
    assert len(grid) == 11 and grid[10] == [("Total", False, 1), ("999", False, 1), ("9.9", False, 1),
                                            ("9.8", False, 1)]
    assert grid[9] == [("Other", False, 1), ("not counted at the two sites", False, 2), ("0.4", False, 1)]


def _contents(page, entries, y=100, gap=15, spaced=True):
    """Lines of a table of contents: each entry, a dot leader out to the right margin, its page number."""
    for n, (entry, number) in enumerate(entries):
        x_end = 500 - pymupdf.get_text_length(number, fontsize=10)
        leader = ". " if spaced else "."
        dots = leader * int((x_end - 80 - pymupdf.get_text_length(entry, fontsize=10)) / pymupdf.get_text_length(
            leader, fontsize=10)) if number else ""  # a part's title: no leader, no page
        page.insert_text((72, y + n * gap), f"{entry} {dots}".rstrip(), fontsize=10, fontname="helv")
        if number:
            page.insert_text((x_end, y + n * gap), number, fontsize=10, fontname="helv")


@pytest.mark.parametrize("spaced", [True, False])
def test_a_table_of_contents_is_a_table_of_entries_and_their_pages(spaced):
    doc, page = _page()
    _contents(page, [("Preface", "xi"), ("Part One", ""), ("Chapter 1. Securing the data", "1"),
                     ("1.1 Security fundamentals", "2"), ("1.2 Row and column access", "14")], spaced=spaced)
    grid = _grid(word_table(page_words(page)))
    assert [row[1][0] for row in grid] == ["xi", "", "1", "2", "14"]
    assert grid[2][0][0].startswith("Chapter 1. Securing the data") and grid[1][0][0] == "Part One"
    assert all(len(row) == 2 and not row[0][1] for row in grid)  # two columns, no header row


def test_lines_that_end_in_a_number_without_a_leader_are_no_table_of_contents():
    doc, page = _page()
    for n, line in enumerate(["The survey ran from May to June in 12", "offices, and its report came out on page 4",
                              "of the annual review, as chapter 3", "of its second part."]):
        page.insert_text((72, 100 + 15 * n), line, fontsize=10, fontname="helv")
    assert word_table(page_words(page)) is None


def test_the_real_redbook_contents_page_is_a_table_with_its_page_numbers_in_a_column():
    from pathlib import Path

    pdf = Path(__file__).resolve().parents[1] / "corpora" / "realdocs" / "pages" / "d13-redbook-table.pdf"
    with pymupdf.open(pdf) as doc:
        grid = _grid(word_table(page_words(doc[0])))
    pages = [row[1][0] for row in grid if row[1][0]]
    assert len(pages) >= 20 and pages[:3] == ["vii", "viii", "ix"]
    assert grid[1][0][0].startswith("Notices . . .")
