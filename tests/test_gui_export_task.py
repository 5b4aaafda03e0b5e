"""The window's export writes off the GUI thread: while a multi-page document's files (the searchable PDF renders
every page) are written, the event loop runs (a timer fires, the window stays live) and Export is disabled; the
files are byte for byte those the same export writes on the calling thread; a failed export says why in the banner
and leaves nothing."""
from __future__ import annotations

from PySide6.QtCore import QTimer

from app.core.record import events as ev
from app.core.document.regions import Region

PAGES = 8


def _feed(window, path: str) -> None:
    events = [ev.RunStarted(engine="replay", document=path), ev.DocumentOpened(path=path, page_count=PAGES)]
    for page in range(PAGES):
        regions = [Region(id=f"p{page + 1}-r{i + 1:02d}", page=page, box=(120, 240 + 200 * i, 1000, 340 + 200 * i),
                          label="text", task="text", order=i, box_pt=(60, 120 + 100 * i, 500, 170 + 100 * i),
                          dpi=144).to_dict() for i in range(3)]
        events.append(ev.LayoutDone(page=page, regions=regions, source="test"))
        events += [ev.RegionFinished(region_id=r["id"], text=f"Page {page + 1} block {k + 1}\nits second line")
                   for k, r in enumerate(regions)]
    events.append(ev.RunFinished())
    for e in events:
        window.handle_event(e)


def test_export_runs_off_the_gui_thread_and_writes_the_same_files(qtbot, tmp_path):
    from app.core.document.sample_documents import make_sample_pdf
    from app.gui.export import export
    from app.gui.main_window import MainWindow

    pdf = str(make_sample_pdf(tmp_path / "long.pdf", pages=PAGES))
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_files([pdf], run=False)
    _feed(w, pdf)
    w.flow.set_text(w.work, "p2-r01", "Edited by a person")
    ticks, busy = [], []
    timer = QTimer(interval=5)
    timer.timeout.connect(lambda: (ticks.append(1), busy.append(not w.actions.export.isEnabled())))
    timer.start()
    written = w.export_current(tmp_path / "gui" / "long.md")
    timer.stop()
    assert ticks, "the event loop did not run while the export was written"
    assert any(busy) and w.actions.export.isEnabled() and not w.exporter.running
    assert [p.suffix for p in written] == [".md", ".json", ".html", ".pdf"]
    assert "Exported long.md" in w.statusBar().currentMessage()
    same = export(w.work, tmp_path / "here" / "long.md")  # written on this thread, as before
    for a, b in zip(written, same):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert "Edited by a person" in written[0].read_text()

    # not waiting (the menu's way): control comes back at once, the files follow
    with qtbot.waitSignal(w.exporter.finished, timeout=60_000) as done:
        assert w.export_current(tmp_path / "later" / "long.md", wait=False) == []
        assert w.exporter.running
    assert [p.read_bytes() for p in done.args[0]] == [p.read_bytes() for p in same]

    # closing the window while an export is written waits for it: the whole set, no temporaries left
    w.export_current(tmp_path / "closing" / "long.md", wait=False)
    w.close()
    assert not w.exporter.running
    assert sorted(p.name for p in (tmp_path / "closing").iterdir()) == sorted(p.name for p in same)


def test_a_failed_export_says_why_and_leaves_nothing(qtbot, tmp_path):
    import pytest

    from app.core.document.sample_documents import make_sample_pdf
    from app.gui.main_window import MainWindow

    pdf = str(make_sample_pdf(tmp_path / "long.pdf", pages=2))
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_files([pdf], run=False)
    _feed(w, pdf)
    (tmp_path / "blocked").write_text("a file where the folder should be")
    with pytest.raises(OSError):
        w.export_current(tmp_path / "blocked" / "long.md")
    assert w.banner.text.startswith("Nothing was exported") and not w.exporter.running
    assert w.actions.export.isEnabled() and not (tmp_path / "blocked").is_dir()
