"""Tesseract's readings side by side (issue #38: identifying a page's script read sample lines in every installed
language one after another on one core). Tesseract gives each call its own API object (up to two per
language), and the script router reads the lines it will ask for next on the other core
(app.core.scripts.line_reads). What is read must not change with that: real Tesseract, real lines, read one at a
time and side by side."""
from __future__ import annotations

import threading

from script_pages import need_tesseract
from test_script_router_cost import LATIN, RUSSIAN, page

GREEK = "Η επιτροπή ενέκρινε τον προϋπολογισμό του έτους."
UKRAINIAN = "Комісія затвердила бюджет на наступний рік."


def _crops():
    from app.core.scripts.router import crop_line

    image, boxes = page([RUSSIAN, GREEK, UKRAINIAN, LATIN[0]])
    return image, boxes, [crop_line(image, box, isolate=False) for box in boxes]


def test_lines_read_side_by_side_read_as_they_read_one_at_a_time():
    from app.core.scripts.tesseract import PER_LANGUAGE, Tesseract

    base = need_tesseract("rus", "ell", "ukr", "eng")
    _, _, crops = _crops()
    asks = [(crop, lang) for crop in crops for lang in ("rus", "ell", "ukr", "eng")] * 2
    alone = Tesseract(base.folder)
    want = [alone.read(crop, lang) for crop, lang in asks]
    shared = Tesseract(base.folder)
    got: dict[int, object] = {}
    start = threading.Barrier(4)

    def reader(k0: int) -> None:
        start.wait()
        for k in range(k0, len(asks), 4):
            got[k] = shared.read(*asks[k])

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[k] for k in range(len(asks))] == want
    # each call had an API object of its own, never more of one language and mode than calls can run at once
    assert all(1 <= len(made) <= PER_LANGUAGE for made in shared._apis.values())
    assert all(len(shared._free[key]) == len(made) for key, made in shared._apis.items())  # all given back
    shared.close()
    assert shared._apis == {}


def test_reading_ahead_takes_a_started_reading_reads_a_queued_one_here_and_drops_the_rest():
    from app.core.scripts.line_reads import LineReads, _pool

    base = need_tesseract("rus", "ell")
    _, _, crops = _crops()
    asked: list[tuple[int, str, str]] = []

    def fetch(i: int, lang: str):
        asked.append((i, lang, threading.current_thread().name))
        return base.read(crops[i], lang)

    plain = LineReads(fetch)
    want = {(i, lang): plain.read(i, lang) for i in range(3) for lang in ("rus", "ell")}
    asked.clear()
    reads = LineReads(fetch)
    reads.ahead([2, 1, 0], "rus")
    reads.ahead([2, 1, 0], "ell")
    for i in range(3):
        assert reads.read(i, "rus") == want[i, "rus"]
        assert reads.read(i, "rus") is reads.read(i, "rus")  # read once
    reads.settle()  # the Greek readings not started are dropped: asked for later, they are read here
    assert reads.read(0, "ell") == want[0, "ell"]
    counts = {(i, lang): sum(1 for a in asked if a[:2] == (i, lang)) for i, lang, _ in asked}
    assert all(n == 1 for n in counts.values()), counts
    if _pool() is not None:  # a machine of two cores or more: some were read on the other thread
        assert any(name.startswith("tesseract-ahead") for _, _, name in asked)


def test_the_router_routes_the_same_with_and_without_reading_ahead(monkeypatch):
    """A Latin page with unread Cyrillic lines: the script found, the language of its family and every line's
    reading are the same when nothing is read on the other core."""
    from app.core.scripts import line_reads
    from app.core.scripts.router import ScriptRouter

    need_tesseract("rus", "ell", "ukr", "bul", "eng", "osd")
    image, boxes = page(LATIN + [RUSSIAN, UKRAINIAN, RUSSIAN])
    lines = [(box, text, 0.95) for box, text in zip(boxes, LATIN)] + [(box, "", 0.0) for box in boxes[len(LATIN):]]
    ahead = ScriptRouter().route(image, lines)
    monkeypatch.setattr(line_reads, "_pool", lambda: None)
    alone = ScriptRouter().route(image, lines)
    assert ahead == alone
    assert ahead[:len(LATIN)] == [None] * len(LATIN)
    assert all(r is not None and r.script == "cyrillic" for r in ahead[len(LATIN):]), ahead
