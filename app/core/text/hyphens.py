"""Lines of a paragraph joined into one, a word broken over a line end made whole again.

A line that ends in a hyphen after a letter, followed by one that starts in lower case, is either a word split
for the line ("Fur-" / "thermore"), a compound that happens to break at its hyphen ("general-" / "purpose"), or a
hyphen left hanging before a conjunction ("double-" / "and triple-annotated"). Which one is settled by how common
each reading is in wordfreq's lists (LANGUAGES, the best of them):

    the joined word ("furthermore") at least as common as the hyphenated pair, less MARGIN  → joined
    the joined word unknown, the pair and each half known ("general-purpose")                → hyphen kept
    neither known: a name before the hyphen and a known word after ("DocLayNet-trained")     → hyphen kept
    otherwise (a rare word split in two: "Epi-" / "daurus")                                  → joined
    a conjunction after the hyphen ("double- and")                                           → as it stands
    a figure before the hyphen ("12-" / "month")                                             → hyphen kept

Every reading path joins its lines here: the text layer, the classic engine and the built-in engine write the
same paragraph for the same lines.

What must never live here: reading images, layout, Qt.
"""
from __future__ import annotations

import re
from functools import lru_cache

# wordfreq's lists of the languages most pages here are in: English's large one (rarer words: "clergymen",
# "ipsum"; about 0.1 s to load), the others' small ones (a few MB each; Russian's "научно-педагогической" is a
# compound, Greek's "απόφα-σης" a word split)
LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl", "pl", "cs", "sv", "da", "tr", "ru", "uk", "bg", "el")
# Zipf points the joined word may be rarer than the hyphenated pair and still be the reading: a pair is as rare as
# its rarer half, and the halves of a split word are often words ("clergy-men" 3.7 against "clergymen" 2.6,
# "ip-sum" 3.9 against "ipsum" 2.2), where a compound's joined form is far rarer ("high-quality" 5.0, 1.8)
MARGIN = 2.0
WORD = 3.0  # a compound's halves are words at least this common ("eir-" / "mod" is "eirmod" split)
HYPHENS = ("-", "\u00ad", "\u2010")  # hyphen-minus, soft hyphen, hyphen
# words after which a hanging hyphen stands for a shared second half ("pre- and post-processing")
CONJUNCTIONS = frozenset({"and", "or", "nor", "to", "und", "oder", "bis", "et", "ou", "y", "o", "e", "en"})
_HEAD = re.compile(r"([^\W\d_]+)[-\u00ad\u2010]$")  # the letters before a line-end hyphen
_TAIL = re.compile(r"^([^\W\d_]+)")  # the letters a line starts with
_FIGURE = re.compile(r"\d-$")  # a figure and a hyphen at the line end ("a 12-" / "month trial")


@lru_cache(maxsize=50_000)
def zipf(word: str) -> float:
    """How common `word` (or a hyphenated pair, as wordfreq reads it) is: the best Zipf value over LANGUAGES."""
    from wordfreq import zipf_frequency

    w = word.lower()
    return max(zipf_frequency(w, lang, wordlist="large" if lang == "en" else "small") for lang in LANGUAGES)


def broken_word(head: str, tail: str) -> str | None:
    """How `head` + "-" at a line end and `tail` at the next line's start are written together: the word
    joined, or kept hyphenated; None when the hyphen stays as it is, followed by a space."""
    if tail.lower() in CONJUNCTIONS:
        return None
    joined, pair = zipf(head + tail), zipf(f"{head}-{tail}")
    if joined > 0 and joined >= pair - MARGIN:
        return head + tail
    compound = pair > 0 and min(zipf(head), zipf(tail)) >= WORD
    if compound or (zipf(tail) > 0 and any(c.isupper() for c in head[1:])):  # "DocLayNet-trained": a name first
        return f"{head}-{tail}"
    return head + tail


def join_line(text: str, line: str) -> str:
    """`text` (the paragraph so far) and the next `line`, joined by a space, or rejoining a word the line end
    broke."""
    if not text:
        return line
    if not line:
        return text
    if _FIGURE.search(text) and line[:1].islower():  # "12-" / "month": the compound, whole
        return text + line
    head, tail = _HEAD.search(text), _TAIL.match(line)
    if head is None or tail is None or not line[:1].islower() or text.endswith("$-"):
        return f"{text} {line}"
    word = broken_word(head.group(1), tail.group(1))
    if word is None:
        return f"{text} {line}"
    return text[:head.start()] + word + line[tail.end():]


def join_lines(lines) -> str:
    """Lines of one paragraph → its text (empty lines skipped)."""
    out = ""
    for line in lines:
        out = join_line(out, line.strip())
    return out
