"""The page unit tests of `bench documents --corpus units` (app.bench.unit_checks): each kind passes and fails where
a reader would say so, and the corpus loads."""
from __future__ import annotations

import random

import pytest
from rapidfuzz.distance import Levenshtein

from app.bench.unit_checks import check, grids, near_starts, normalise, same_formula
from app.bench.unit_corpus import load


def _brute_starts(needle: str, hay: str, k: int) -> list[int]:
    return sorted({s for s in range(len(hay)) for e in range(s, len(hay) + 1)
                   if Levenshtein.distance(needle, hay[s:e]) <= k})


def test_near_starts_matches_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(60):
        hay = "".join(rng.choice("abc ") for _ in range(rng.randint(5, 25)))
        needle = "".join(rng.choice("abc") for _ in range(rng.randint(2, 5)))
        k = rng.randint(0, 2)
        assert near_starts(needle, hay, k) == _brute_starts(needle, hay, k), (needle, hay, k)


def test_present_absent_order() -> None:
    md = "# Title\n\nThe **quick** brown fox — jumps over the lazy dog.\n\nPage 3 of 9"
    assert check({"type": "present", "text": "quick brown fox - jumps"}, md)[0]
    assert not check({"type": "present", "text": "quick red fox"}, md)[0]
    assert check({"type": "present", "text": "quick red fox", "max_diffs": 5}, md)[0]
    assert not check({"type": "absent", "text": "Page 3 of 9"}, md)[0]
    assert check({"type": "absent", "text": "Page 3 of 9", "first_n": 20}, md)[0]
    assert check({"type": "order", "before": "Title", "after": "lazy dog"}, md)[0]
    assert not check({"type": "order", "before": "lazy dog", "after": "Title"}, md)[0]
    assert check({"type": "order", "before": "lazy dig", "after": "Page 3", "max_diffs": 1}, md)[0]
    assert normalise("“a”  <br>_b_") == '"a" b'


HTML = """<table>
<tr><th rowspan="2">Model</th><th colspan="2">Score</th></tr>
<tr><th>dev</th><th>test</th></tr>
<tr><td>A</td><td>1.0</td><td></td></tr>
<tr><td>B</td><td>2.0</td><td>3.0</td></tr>
</table>"""


def test_table_neighbours_and_headings_through_spans() -> None:
    g = grids(HTML)[0]
    assert g.slots[0] == [(0, 0), (0, 1), (0, 1)] and g.slots[1][0] == (0, 0)
    ok = lambda **t: check({"type": "table", **t}, HTML)[0]  # noqa: E731
    assert ok(cell="2.0", up="1.0", right="3.0", left="B", top_heading="dev")
    assert ok(cell="3.0", top_heading="test") and ok(cell="test", up="Score")
    assert ok(cell="B", left_heading="B") is False  # a cell is not its own heading
    assert ok(cell="2.0", left_heading="B")
    assert not ok(cell="2.0", right="1.0")
    assert ok(cell="dev", left="Model")  # the row-spanning header is beside the second header row
    assert not check({"type": "table", "cell": "x"}, "no table here")[0]
    pipe = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert check({"type": "table", "cell": "2", "top_heading": "b", "left": "1"}, pipe)[0]


def test_formulas_compare_as_meaning() -> None:
    assert same_formula(r"\frac{a}{b}", r"\dfrac{a}{ b }")
    assert same_formula(r"\sum_{i=1}^{n} x_i", r"\sum_{i = 1}^{n}{x_{i}}")
    assert not same_formula(r"\frac{a}{b}", r"a \\ b")
    assert not same_formula(r"x^{2}", r"x_{2}")
    md = "Inline $E = mc^2$ and\n\n$$\\int_0^1 f(x)\\,dx$$"
    assert check({"type": "math", "math": r"\int_{0}^{1} f(x) dx"}, md)[0]
    assert not check({"type": "math", "math": r"\int_{0}^{2} f(x) dx"}, md)[0]


def test_baseline() -> None:
    assert check({"type": "baseline", "max_length": 10}, "  \n12\n")[0]
    assert not check({"type": "baseline", "max_length": 10}, "a page with words")[0]
    assert not check({"type": "baseline"}, "")[0]
    assert not check({"type": "baseline"}, "text " + "ab" * 40)[0]
    assert not check({"type": "baseline"}, "text 中文")[0]
    assert check({"type": "baseline"}, "plain text")[0]


def test_the_corpus_loads() -> None:
    tests = load()
    assert len(tests) >= 100
    assert {t["type"] for t in tests} >= {"present", "absent", "order", "table", "math", "baseline"}
    with pytest.raises(ValueError):
        check({"type": "nonsense"}, "")


def test_a_formula_shown_inside_a_block_counts() -> None:
    block = r"\begin{aligned} \nabla \cdot \mathbf{E} & = \frac{\rho}{\epsilon_0} \\ \nabla \times \mathbf{E} & = -\frac{\partial \mathbf{B}}{\partial t} \end{aligned}"
    assert same_formula(r"\nabla \times \mathbf{E}=-\frac{\partial \mathbf{B}}{\partial t}", block)
    assert same_formula(r"\nabla \times E=-\frac{\partial B}{\partial t}", block)  # bold or not, the same picture
    assert not same_formula(r"\nabla \times \mathbf{E}=\frac{\partial \mathbf{B}}{\partial t}", block)


def test_operator_names_and_upright_words_compare_alike() -> None:
    assert same_formula(r"R / \operatorname{Ann}_{R}(x_{i})", r"R / \mathrm{Ann}_{R} ( x_{i} )")
    assert same_formula(r"\operatorname{lim}_{n} a_n", r"\lim_{n} a_{n}")
