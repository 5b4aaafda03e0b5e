"""Latin look-alikes: a bundled reading whose Latin letters make no words in any Latin-script language.

Why: the bundled recogniser reads a script it has no letters for as confident Latin ("UXOGU XIALU XU UICCU"
for a Hebrew line, "HETREHETH:ROTII" for a Sanskrit verse), so such a line is not a suspect by its confidence
or its coverage. Real Latin text is made of words. Counted are the letters of a reading's words of three
letters or more, and those of them in words that wordfreq's lists know at all (LANGUAGES: the Latin-script
languages it has); a reading with less than KNOWN_SHARE of them in known words is a look-alike — or codes,
names, a DNA sequence in a table (3 % of the Latin reference lines of corpora/realdocs), so the router asks
Tesseract's script detector before it believes it (router.py): a look-alike alone never changes a line.

What must never live here: reading images, choosing a script (router.py), Tesseract calls.
"""
from __future__ import annotations

import re
from functools import lru_cache

from app.core.text.textcheck import script_of

# wordfreq's Latin-script languages: a word any of them knows is a word
LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl", "pl", "sv", "da", "nb", "fi", "cs", "sk", "sl", "sh",
             "ro", "hu", "tr", "id", "ms", "vi", "ca", "lt", "lv", "is", "fil")
MIN_WORD = 3  # shorter letter runs ("HT", "of") say nothing either way
MIN_LETTERS = 6  # a reading with fewer letters in such words is not judged
KNOWN_SHARE = 0.5  # a reading with less than this share of those letters in known words is a look-alike
# wordfreq's "small" lists (words used at least once a million words): the "large" ones of 27 languages took
# 9 s and about 630 MB to load on the first unknown word, the small ones 2 s and 145 MB; a rarer word read as
# unknown only makes a line a suspect, which Tesseract's script detector then confirms or not (router.py)
WORDLIST = "small"
_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")  # runs of Latin letters (digits and marks cut words)


@lru_cache(maxsize=50_000)
def known(word: str) -> bool:
    """Is `word` in the word list of any of LANGUAGES?"""
    from wordfreq import zipf_frequency

    w = word.lower()
    return any(zipf_frequency(w, lang, wordlist=WORDLIST) > 0 for lang in LANGUAGES)


def known_share(text: str) -> float | None:
    """The share of the letters of `text`'s Latin words (MIN_WORD letters or more) that are in known words;
    None when there are fewer than MIN_LETTERS such letters."""
    words = [w for w in _WORD.findall(text) if len(w) >= MIN_WORD]
    letters = sum(map(len, words))
    if letters < MIN_LETTERS:
        return None
    return sum(len(w) for w in words if known(w)) / letters


def lookalike(text: str) -> bool:
    """Do `text`'s Latin letters make (mostly) no words? (False when there are too few to tell, and for a reading
    that holds a Chinese or Japanese character: the bundled recogniser read that script there, and the Latin words
    beside it are names — "Tensmeyer等，2019" on a Chinese page.)"""
    if any(script_of(c) == "cjk" for c in text):
        return False
    share = known_share(text)
    return share is not None and share < KNOWN_SHARE


def mostly_lookalikes(texts: list[str]) -> bool:
    """Are most of the readings that can be judged (more than half, two at least) look-alikes?"""
    judged = [s for s in map(known_share, texts) if s is not None]
    sham = sum(1 for s in judged if s < KNOWN_SHARE)
    return sham >= 2 and sham > 0.5 * len(judged)
