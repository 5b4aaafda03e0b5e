"""A word broken over a line end is made whole again the same way on every reading path (app.core.text.hyphens)."""
import pytest

from app.core.engines.classic import lines_to_text
from app.core.text.hyphens import join_lines


@pytest.mark.parametrize("lines, text", [
    (["for high-", "quality PDF"], "for high-quality PDF"),  # a compound that breaks at its hyphen
    (["Fur-", "thermore, we"], "Furthermore, we"),  # a word split for the line
    (["the cate-", "gories"], "the categories"),
    (["Every-", "one came"], "Everyone came"),  # both halves are words, the whole is commoner
    (["double- and", "triple-annotated"], "double- and triple-annotated"),  # a hanging hyphen stays
    (["pre-", "and post-processing"], "pre- and post-processing"),
    (["the DocLayNet-", "trained models"], "the DocLayNet-trained models"),  # a name, then a word
    (["of Epi-", "daurus"], "of Epidaurus"),  # a rare word split in two
    (["clergy-", "men and"], "clergymen and"),  # ... whose halves are words
    (["Lorem ip-", "sum dolor"], "Lorem ipsum dolor"),
    (["long-", "term effects"], "long-term effects"),
    (["nonumy eir-", "mod tempor"], "nonumy eirmod tempor"),  # halves that are barely words
    (["подготовки научно-", "педагогических кадров"], "подготовки научно-педагогических кадров"),
    (["σχετικής απόφα-", "σης του"], "σχετικής απόφασης του"),
    (["a 12-", "month trial"], "a 12-month trial"),
    (["Section 2 -", "Results"], "Section 2 - Results"),  # upper case after: no broken word
    (["one line", "", "and another"], "one line and another"),
])
def test_join_lines(lines, text):
    assert join_lines(lines) == text


def test_classic_engine_joins_its_rows_the_same_way():
    rows = [[((0, 0, 90, 10), "the general-")], [((0, 12, 90, 22), "purpose analysis")]]
    assert lines_to_text(rows) == "the general-purpose analysis"


def test_text_layer_paragraph_rejoins_broken_words():
    from app.core.document.base import TextWord
    from app.core.pipeline.text_source import paragraph

    lines = ["It holds high-", "quality text. Fur-", "thermore it ends."]
    words = [TextWord(w, (0.0, 12.0 * n, 10.0, 12.0 * n + 10), 0, n, k)
             for n, line in enumerate(lines) for k, w in enumerate(line.split())]
    assert paragraph(words[::-1]) == "It holds high-quality text. Furthermore it ends."
