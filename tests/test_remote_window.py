"""The window against a REAL `transformers serve` (tests/remote_kit.py): queued documents read on the server with
the queue shown, the requests sent on the app's qasync loop, and Preferences → Servers' connection test.
"""
from __future__ import annotations


def test_the_window_reads_queued_documents_on_the_server_and_shows_the_queue(qtbot, server, checkpoint, tmp_path,
                                                                              artifacts_dir):
    from app.core.document.sample_documents import make_small_report
    from app.gui.main_window import MainWindow
    from app.gui.settings import Settings

    s = Settings()
    for key, value in (("engine", "remote"), ("remote_servers", server.url), ("remote_model", str(checkpoint)),
                       ("remote_concurrency", 4), ("layout", "pymupdf")):
        s.set(key, value)
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    assert w.engine_bar.engine.currentText().startswith("Remote server")
    paths = [make_small_report(tmp_path / f"{name}.pdf") for name in ("first", "second", "third")]
    w.open_files([str(p) for p in paths], run=False)
    w.runs.enqueue([str(p.resolve()) for p in paths])
    view = w.document_queue
    assert not w.queue_dock.isVisible()  # nothing queued yet: the queue takes no room
    view.refresh()
    assert w.queue_dock.isVisible()  # three documents queued: it shows itself, at the right
    assert [(r.name, r.state, r.position) for r in view.rows] == [
        ("first.pdf", "queued", 1), ("second.pdf", "queued", 2), ("third.pdf", "queued", 3)]
    view.list.setCurrentRow(2)  # third: move it to the front, then take second out of the queue
    view.up.click()
    view.up.click()
    view.list.setCurrentRow([r.name for r in view.rows].index("second.pdf"))
    view.remove.click()
    assert [(r.name, r.position) for r in view.rows if r.state == "queued"] == [("third.pdf", 1), ("first.pdf", 2)]
    w.run_presenter.next_in_queue()
    qtbot.waitUntil(lambda: view.rows and view.rows[0].state == "running", timeout=10000)
    assert view.rows[0].name == "third.pdf"
    qtbot.waitUntil(lambda: not w.decoder.running and not w.runs.queue, timeout=90000)
    view.refresh()
    states = {r.name: r.state for r in view.rows}
    assert states["first.pdf"] == "done" and states["third.pdf"] == "done" and states["second.pdf"] == "idle"
    assert view.overall.value() == view.overall.maximum() == 2
    first = next(d for d in w.session.documents if d.name == "first.pdf")
    text = [b for b in first.blocks.values() if b.region.task == "text"]
    assert text and all(b.region.extra["stats"]["server"] == server.url.removesuffix("/v1") for b in text)
    w.views.rounds_view.refresh()  # the rounds view's statistics: what the server said (here: nothing)
    hint = w.views.rounds_view.hint.text()
    assert "read on OCR servers" in hint and "reports no speculative-decoding statistics" in hint
    w.queue_dock.raise_()
    w.grab().save(str(artifacts_dir / "remote_queue.png"))


def test_the_windows_remote_run_sends_its_requests_on_the_apps_qasync_loop(qtbot, server, checkpoint, tmp_path,
                                                                         monkeypatch):
    """The app's real loop: the window's run (on its worker thread) hands its requests to the qasync loop the
    application installs (app.gui.application.install_event_loop), on the GUI thread, while Qt keeps running."""
    import asyncio
    import threading

    from PySide6.QtWidgets import QApplication

    from app.core.engines.remote import RemoteEngine
    from app.core.document.sample_documents import make_small_report
    from app.gui.application import close_event_loop, install_event_loop
    from app.gui.main_window import MainWindow
    from app.gui.settings import Settings

    seen = []
    read = RemoteEngine.decode_region_async

    async def watched(self, *args, **kwargs):  # the real request, with where it ran noted
        seen.append((asyncio.get_running_loop(), threading.get_ident()))
        return await read(self, *args, **kwargs)

    monkeypatch.setattr(RemoteEngine, "decode_region_async", watched)
    s = Settings()
    for key, value in (("engine", "remote"), ("remote_servers", server.url), ("remote_model", str(checkpoint)),
                       ("remote_concurrency", 3), ("layout", "pymupdf")):
        s.set(key, value)
    loop = install_event_loop(QApplication.instance())
    w = None
    try:
        w = MainWindow(s)
        qtbot.addWidget(w)
        w.show()
        path = make_small_report(tmp_path / "report.pdf")
        w.open_files([str(path)], run=True)

        async def until_read() -> None:
            while not seen or w.decoder.running:
                await asyncio.sleep(0.05)

        loop.run_until_complete(asyncio.wait_for(until_read(), 90))
    finally:
        if w is not None:  # the window and its threads end while the loop they post to still runs
            w.close()
            loop.run_until_complete(asyncio.sleep(0))  # what the close handed the loop runs before the loop goes
        close_event_loop(loop)  # (the loop's timers die here, on this thread: tests/test_event_loop_close.py)
        asyncio.set_event_loop(None)
    assert seen and all(where is loop for where, _ in seen)  # the application's loop, no loop of its own
    assert {thread for _, thread in seen} == {threading.main_thread().ident}  # on the GUI thread
    doc = w.session.documents[0]
    read_blocks = [b for b in doc.blocks.values() if "server" in b.region.extra.get("stats", {})]
    assert len(read_blocks) == len(seen)  # every request's result reached the window


def test_preferences_servers_test_connection_says_what_answers(qtbot, server, checkpoint):
    from app.core.tiny.serving import free_port
    from app.gui.preferences import PreferencesDialog
    from app.gui.settings import Settings

    s = Settings()
    dialog = PreferencesDialog(s)
    qtbot.addWidget(dialog)
    dialog.editors["remote_servers"].setText(server.url)
    dialog.connection_test.button.click()
    qtbot.waitUntil(lambda: dialog.connection_test.ok is not None, timeout=20000)
    assert dialog.connection_test.ok and str(checkpoint) in dialog.connection_test.result.text()
    dead = f"http://127.0.0.1:{free_port()}/v1"
    dialog.editors["remote_servers"].setText(dead)
    dialog.connection_test.ok = None
    dialog.connection_test.button.click()
    qtbot.waitUntil(lambda: dialog.connection_test.ok is not None, timeout=20000)
    assert not dialog.connection_test.ok and "cannot be reached" in dialog.connection_test.result.text()
    dialog.editors["remote_api_key_env"].setText("MY_OCR_KEY")
    dialog.accept()
    assert s.get("remote_servers") == dead and s.get("remote_api_key_env") == "MY_OCR_KEY"
