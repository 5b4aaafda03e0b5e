"""TEDS (app.bench.teds) against values worked out by hand from the metric's definition (Zhong et al. 2020), which
the PubTabNet implementation also gives for these tables."""
from app.bench.teds import page_teds, tables_in, teds

TWO_BY_TWO = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"


def _one(text):
    (table,) = tables_in(text)
    return table


def test_identical_tables_score_one():
    t = _one("<table><tr><th colspan='2'>Results</th></tr><tr><td>1</td><td></td></tr></table>")
    assert teds(t, t) == 1.0


def test_one_cell_text_changed_costs_one_node_of_eight():
    # table, tbody, two tr, four td = 8 nodes; "d" → "e" is a rename of normalised distance 1
    other = TWO_BY_TWO.replace("<td>d</td>", "<td>e</td>")
    assert abs(teds(_one(TWO_BY_TWO), _one(other)) - (1 - 1 / 8)) < 1e-9
    half = TWO_BY_TWO.replace("<td>d</td>", "<td>dx</td>")  # normalised distance 1/2
    assert abs(teds(_one(TWO_BY_TWO), _one(half)) - (1 - 0.5 / 8)) < 1e-9


def test_a_spanning_header_repeated_into_every_column_scores_below_one():
    span = "<table><tr><td colspan='2'>Results</td><td>x</td></tr><tr><td>a</td><td></td><td>c1</td></tr>" \
           "<tr><td>dd</td><td>e</td><td>f</td></tr></table>"
    repeated = "<table><tr><td>Results</td><td>Results</td><td>x</td></tr><tr><td>a</td><td>c1</td></tr>" \
               "<tr><td>dd</td><td>e</td><td>g</td></tr></table>"
    # 13 nodes; distance 4 (the span, the extra header cell, the lost empty cell, f → g)
    assert abs(teds(_one(span), _one(repeated)) - (1 - 4 / 13)) < 1e-9
    assert teds(_one(span), _one(repeated), structure_only=True) < 1.0


def test_markdown_and_html_tables_compare_and_pages_pair_tables():
    md = "| a | b |\n|---|---|\n| c | d |"
    html = "<table><tr><th>a</th><th>b</th></tr><tr><td>c</td><td>d</td></tr></table>"
    assert teds(_one(md), _one(html)) == 1.0
    assert page_teds(html, "no table here") == 0.0
    assert page_teds("no table", html) is None
    assert page_teds(html + TWO_BY_TWO, TWO_BY_TWO + "\n\n" + md) == 1.0
