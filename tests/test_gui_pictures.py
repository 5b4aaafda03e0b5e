"""Picture crops kept for the editor and preview (user_data_dir()/pictures/<doc hash>/) are pruned when a run of
the document ends: a re-run that lays a page out again must not leave crops of regions that no longer exist."""
from __future__ import annotations

from PIL import Image

from app.core.record import events as ev
from app.core.document.regions import Region


def _layout(page: int, folder, ids_tasks):
    regions = []
    for i, (rid, task) in enumerate(ids_tasks):
        extra = {}
        if task == "picture":
            path = folder / f"{rid}.png"
            Image.new("RGB", (4, 4), "red").save(path)  # what the worker's pipeline saves at layout time
            extra["picture_path"] = str(path)
        regions.append(Region(id=rid, page=page, box=(0, 100 * i, 50, 100 * i + 50), label=task, task=task,
                              order=i, extra=extra).to_dict())
    return ev.LayoutDone(page=page, regions=regions)


def test_a_rerun_prunes_crops_of_regions_that_are_gone(qtbot):
    from app.core.base.paths import sample_document
    from app.gui.main_window import MainWindow
    from app.core.pipeline.pictures import pictures_dir

    w = MainWindow()
    qtbot.addWidget(w)
    doc = str(sample_document())
    w.open_files([doc], run=False)
    folder = pictures_dir(w.work.path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "p9-r01.png").write_bytes(b"left from an older run")
    for event in (ev.RunStarted(engine="classic", document=doc), ev.DocumentOpened(doc, 2),
                  _layout(0, folder, [("p1-r01", "text"), ("p1-r02", "picture"), ("p1-r03", "picture")]),
                  _layout(1, folder, [("p2-r01", "picture")]), ev.RunFinished()):
        w.handle_event(event)
    assert sorted(f.name for f in folder.glob("*.png")) == ["p1-r02.png", "p1-r03.png", "p2-r01.png"]
    # page 1 laid out again: p1-r03 became text, p1-r02 is gone; page 2 untouched
    for event in (ev.RunStarted(engine="classic", document=doc),
                  _layout(0, folder, [("p1-r01", "text"), ("p1-r03", "text"), ("p1-r04", "picture")]),
                  ev.RunCancelled(where="decoding")):
        w.handle_event(event)
    assert sorted(f.name for f in folder.glob("*.png")) == ["p1-r04.png", "p2-r01.png"]
    assert w.work.blocks["p2-r01"].region.extra["picture_path"] == str(folder / "p2-r01.png")


def test_closing_a_document_drops_its_crops(qtbot):
    from app.core.base.paths import sample_document
    from app.gui.main_window import MainWindow
    from app.core.pipeline.pictures import pictures_dir

    w = MainWindow()
    qtbot.addWidget(w)
    w.open_files([str(sample_document())], run=False)
    folder = pictures_dir(w.work.path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "p1-r02.png").write_bytes(b"crop")
    w.close_document(0)
    assert w.work is None and not folder.exists()


def test_closing_a_document_while_it_is_read_drops_its_crops_when_the_run_ends(qtbot):
    from app.core.base.paths import sample_document
    from app.gui.main_window import MainWindow
    from app.core.pipeline.pictures import pictures_dir

    w = MainWindow()
    qtbot.addWidget(w)
    w.open_files([str(sample_document())], run=False)
    folder = pictures_dir(w.work.path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "p1-r02.png").write_bytes(b"crop")
    w.runs.work = w.work  # as if its run were in flight: the worker may still write a crop
    w.close_document(0)
    assert folder.exists()
    w.run_presenter.finished(1, "")  # the worker says the (cancelled, discarded) run ended
    assert not folder.exists() and not w.runs.stale_pictures
