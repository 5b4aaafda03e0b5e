"""Autosave and restore: the journal keeps documents, regions, texts and edits; after a crash (no clean close) a
new window offers the work back and shows the same content. No model is needed: the work is built from events,
exactly as a run or a replayed trace would build it."""
from __future__ import annotations

import json

from app.core.record import events as ev
from app.core.document.regions import Region
from app.gui.journal import Journal, atomic_write_text


def _regions(page=0, n=3):
    out = []
    for i in range(n):
        y = 60 + 80 * i
        label = "doc_title" if i == 0 else "text"
        out.append(Region(id=f"p{page + 1}-r{i + 1:02d}", page=page, box=(120, y * 2, 1000, y * 2 + 100), label=label,
                          task="text", order=i, box_pt=(60, y, 500, y + 50), dpi=144).to_dict())
    return out


def feed_run(window, path):
    events = [
        ev.RunStarted(engine="replay", document=path),
        ev.DocumentOpened(path=path, page_count=1),
        ev.LayoutDone(page=0, regions=_regions(), source="test"),
    ]
    for i, text in enumerate(["A Title", "First paragraph.", "Second paragraph."]):
        rid = f"p1-r{i + 1:02d}"
        events += [ev.RegionStarted(region_id=rid, page=0, task="text", engine="replay"),
                   ev.TokensCommitted(region_id=rid, step=0, tokens=[1], text=text, ms=1.0),
                   ev.RegionFinished(region_id=rid, text=text)]
    events.append(ev.RunFinished())
    for e in events:
        window.handle_event(e)
    window.redraw()


def test_journal_restore_after_crash(qtbot, tmp_path):
    from app.core.document.sample_documents import make_sample_pdf
    from app.gui.main_window import MainWindow

    pdf = str(make_sample_pdf(tmp_path / "doc.pdf", pages=1))
    first = MainWindow()
    qtbot.addWidget(first)
    first.open_files([pdf], run=False)
    feed_run(first, pdf)
    assert first.editor.block_text("p1-r02") == "First paragraph."
    first.editor.goto_block("p1-r02")
    first.editor.moveCursor(first.editor.textCursor().MoveOperation.EndOfBlock)
    first.editor.insertPlainText(" Fixed by hand.")
    first.save_journal()  # what the autosave timer does
    saved = json.loads(first.journal.path.read_text(encoding="utf-8"))
    assert saved["clean"] is False and saved["state"]["documents"][0]["path"] == pdf
    markdown = first.work.markdown()
    assert "Fixed by hand." in markdown

    # the process "dies" here: no closeEvent, so the journal stays unclean
    second = MainWindow()
    qtbot.addWidget(second)
    second.prompter.answers["restore_journal"] = True
    assert second.offer_restore()
    assert [k for k, _ in second.prompter.asked] == ["restore_journal"]
    assert second.work is not None and second.work.path == pdf
    assert second.work.markdown() == markdown
    assert second.work.blocks["p1-r02"].edited
    assert second.editor.toPlainText() == first.editor.toPlainText()
    assert second.documents.count() == 1
    assert second.documents.item(0).text().endswith("·  3 blocks")  # the list says how far the work got

    # a clean close marks the journal: the next start asks nothing
    second.close()
    third = MainWindow()
    qtbot.addWidget(third)
    assert not third.offer_restore()
    assert third.prompter.asked == []


def test_declined_restore_discards_and_broken_journal_is_set_aside(tmp_path):
    journal = Journal(tmp_path / "j" / "work.json")
    journal.save({"documents": [{"path": "/x.pdf", "blocks": []}], "current": 0})
    assert journal.needs_restore()
    journal.discard()
    assert not journal.needs_restore()
    atomic_write_text(journal.path, "{not json")
    assert journal.load() is None
    assert journal.set_aside is not None and journal.set_aside.name.startswith("work.broken-")
    assert journal.set_aside.read_text() == "{not json" and not journal.path.exists()


def test_journal_keeps_a_whole_document_runs_raw_offsets(tmp_path):
    """Unlimited-OCR blocks carry their place in the generation's raw output (extra["raw_span"] /
    ["raw_text_span"]); after a restore the R-SWA window can still be pointed at their text."""
    from app.core.review.session import Session

    regions = _regions(n=2)
    for r, span in zip(regions, [(3, 10), (20, 40)]):
        r["extra"] = {"raw_span": [span[0] - 2, span[1] + 2], "raw_text_span": list(span)}
    session = Session()
    work = session.add_document("doc.pdf")
    session.current = 0
    for e in (ev.RunStarted(engine="unlimited", document="doc.pdf"),
              ev.RegionStarted(region_id="doc", page=0, task="document", engine="unlimited"),
              ev.LayoutDone(page=0, regions=regions), ev.RegionFinished(region_id="p1-r01", text="Title"),
              ev.RegionFinished(region_id="p1-r02", text="A paragraph of text here."), ev.RunFinished()):
        session.apply(e, work)
    before = session.window_spans("doc", 5, 25)
    assert before and work.raw_stream == "doc"
    journal = Journal(tmp_path / "work.json")
    journal.save(json.loads(json.dumps(session.to_dict())))
    restored = Session()
    restored.load_dict(journal.load()["state"])
    again = restored.document
    assert again.raw_stream == "doc" and again.raw_spans == work.raw_spans
    assert again.blocks["p1-r02"].region.extra["raw_span"] == [18, 42]
    assert restored.window_spans("doc", 5, 25) == before


def test_exports_are_readable_by_the_persons_other_programs(tmp_path):
    """Atomic writes go through mkstemp (0600); exported files must get the permissions a plain open gives."""
    import os
    import stat

    from app.gui.export import atomic_write_text

    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "out.md", "# hi\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
