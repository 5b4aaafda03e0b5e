"""The main window without a model: it appears fast and photographs itself; refuses what it cannot open; replays a
trace through its one entry point; keeps the preview offline; shows formulas as math."""
from __future__ import annotations

from app.core.record import events as ev
from app.core.document.regions import Region


def test_main_window_appears_and_is_photographed(qtbot, artifacts_dir):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    assert w.windowTitle().startswith("Scriptorium")
    assert not w.actions.run.isEnabled() and not w.actions.export.isEnabled()
    assert w.grab().save(str(artifacts_dir / "main_window_empty.png"))


def test_unsupported_files_are_reported_not_opened(qtbot, tmp_path):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    note = tmp_path / "notes.txt"
    note.write_text("hello")
    assert w.open_files([str(note), str(tmp_path / "missing.pdf")], run=False) == []
    assert "notes.txt" in w.banner.text and "missing.pdf" in w.banner.text
    assert w.work is None


def _trace_events(path):
    regions = [
        Region(id="p1-r01", page=0, box=(100, 100, 900, 160), label="text", task="text", order=0,
               box_pt=(50, 50, 450, 80), dpi=144).to_dict(),
        Region(id="p1-r02", page=0, box=(100, 200, 900, 300), label="formula", task="formula", order=1,
               box_pt=(50, 100, 450, 150), dpi=144).to_dict(),
    ]
    return [
        ev.RunStarted(engine="gravity", document=path),
        ev.DocumentOpened(path=path, page_count=1),
        ev.LayoutDone(page=0, regions=regions),
        ev.RegionStarted(region_id="p1-r01", page=0, task="text", engine="gravity"),
        ev.RoundVerified(region_id="p1-r01", round_index=0, k=2, candidates=[5, 6, 7], verified=[5, 6, 8],
                         new_tokens=[5, 6, 8], text="Hello wor", draft_ms=1.0, verify_ms=1.0, cache_len=10),
        ev.RoundVerified(region_id="p1-r01", round_index=1, k=1, candidates=[9, 3], verified=[9, 4],
                         new_tokens=[9, 4], text="ld.", draft_ms=1.0, verify_ms=1.0, cache_len=12),
        ev.RegionFinished(region_id="p1-r01", text="Hello world."),
        ev.RegionStarted(region_id="p1-r02", page=0, task="formula", engine="gravity"),
        ev.RegionFinished(region_id="p1-r02", text="E = m c^{2}"),
        ev.TextLayerCompared(page=0, blocks=[{"region_id": "p1-r01", "cer": 0.25, "reference": "Hello World"}]),
        ev.RunFinished(),
    ]


def test_replayed_trace_drives_the_window_like_a_live_run(qtbot, tmp_path):
    from app.core.record.trace import write_trace
    from app.gui.main_window import MainWindow

    missing = str(tmp_path / "recorded-elsewhere.pdf")  # a trace from another machine: no document here
    trace = write_trace(tmp_path / "run.jsonl", _trace_events(missing))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    assert w.open_trace(trace) == len(_trace_events(missing))
    qtbot.waitUntil(lambda: w.events_handled == len(_trace_events(missing)), timeout=5000)
    w.redraw()
    assert w.work.path == missing
    assert w.editor.block_text("p1-r01") == "Hello world."
    assert w.editor.block_text("p1-r02") == "$$\nE = m c^{2}\n$$"
    assert set(w.page_view.region_items) == {"p1-r01", "p1-r02"}
    assert w.work.blocks["p1-r01"].cer == 0.25
    # the decoding views' round selection lights up the region and the characters of that round
    w.show_text_span(w.work.path, "p1-r01", 9, 12)
    assert w.page_view.selected_id == "p1-r01"
    spans = [s for s in w.editor.extraSelections() if s.cursor.hasSelection()]
    assert spans and spans[-1].cursor.selectedText() == "ld."


def test_preview_blocks_remote_content_and_renders_math(qtbot):
    from app.gui.preview import Preview, block_html

    p = Preview()
    qtbot.addWidget(p)
    p.show()
    p.set_blocks([("b1", "![tracker](https://example.com/pixel.png)\n\nInline $x_i^2$ and\n\n$$\n\\frac{a}{b}\n$$")])
    p.render_now()
    p.grab()
    assert p.blocked == [] and "example.com" not in p.toHtml()  # the sanitiser drops remote sources: never asked
    # local images: from the app's own folder (picture crops) yes, scaled to the width; from elsewhere no
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QImage, QTextDocument

    from app.core.base.paths import user_data_dir

    own = user_data_dir() / "pictures" / "doc" / "p1-r04.png"
    own.parent.mkdir(parents=True)
    big = QImage(3000, 200, QImage.Format.Format_RGB32)
    big.fill(0x3366CC)
    big.save(str(own))
    big.save(str(user_data_dir().parent / "elsewhere.png"))
    p.set_blocks([("b1", "![Figure p1-r04](pictures/doc/p1-r04.png)"), ("b2", "![x](../elsewhere.png)"),
                  ("b3", f"![y]({(user_data_dir().parent / 'elsewhere.png').as_uri()})")])
    p.render_now()
    shown = p.document().resource(QTextDocument.ResourceType.ImageResource.value, QUrl("pictures/doc/p1-r04.png"))
    assert not shown.isNull() and shown.width() <= p.viewport().width()
    assert p.blocked == [] and "elsewhere" not in p.toHtml()  # `..` and absolute sources never reach a load
    html = block_html("Inline $x_i^2$ here")
    assert "<sub><i>i</i></sub>" in html and "<sup>2</sup>" in html and "$" not in html
    from app.gui.preview import markdown_to_html

    exported = markdown_to_html([("b1", "$$\n\\frac{a}{b}\n$$"), ("b2", "<table><tr><td>1</td></tr></table>")],
                                math="mathml")
    assert "<math" in exported and "<mfrac>" in exported and "<table>" in exported and 'name="b2"' in exported


def test_whole_document_engine_streams_into_a_provisional_block(qtbot, tmp_path):
    """Unlimited-OCR names its blocks only when each is complete: until then its text streams at the end."""
    from app.gui.main_window import MainWindow

    path = str(tmp_path / "scan.pdf")
    w = MainWindow()
    qtbot.addWidget(w)

    def step(i, text):
        return ev.WindowStepped(region_id="doc", step=i, token=i, text=text, prefix_len=10, decoded=i + 1,
                                attended=(0, i + 1), evicted=None, cache_positions=11 + i, cache_bytes=1,
                                full_positions=11 + i, full_bytes=1)

    region = Region(id="p1-r01", page=0, box=(10, 10, 400, 60), label="text", task="text", order=0,
                    box_pt=(5, 5, 200, 30), dpi=144, text="Hello").to_dict()
    for e in [ev.RunStarted(engine="unlimited", document=path), ev.DocumentOpened(path=path, page_count=1),
              ev.RegionStarted(region_id="doc", page=0, task="document", engine="unlimited"),
              step(0, "<|det|>text [1, 1, 9, 9]<|/det|>Hel"), step(1, "lo")]:
        w.handle_event(e)
    w.redraw()
    assert w.editor.block_ids() == ["doc"] and w.editor.block_text("doc") == "Hello"  # the header hidden
    w.actions.raw_stream.trigger()  # View → the raw tags, on request
    assert w.editor.block_text("doc") == "<|det|>text [1, 1, 9, 9]<|/det|>Hello"
    w.actions.raw_stream.trigger()
    for e in [ev.LayoutDone(page=0, regions=[region], source="unlimited"),
              ev.RegionFinished(region_id="p1-r01", text="Hello"), step(2, "<|det|>text")]:
        w.handle_event(e)
    w.redraw()
    assert w.editor.block_ids() == ["p1-r01", "doc"]
    assert w.editor.block_text("p1-r01") == "Hello" and w.editor.block_ids() == ["p1-r01", "doc"]
    assert "<|det|>" not in (w.editor.block_text("doc") or "")  # a header still streaming is not shown
    assert set(w.page_view.region_items) == {"p1-r01"}  # no frame for the stream
    w.handle_event(ev.RunFinished())
    w.redraw()
    assert w.editor.block_ids() == ["p1-r01"] and "doc" not in w.work.blocks


def test_decoding_dock_can_be_small_and_the_views_scroll_inside(qtbot, artifacts_dir):
    from PySide6.QtCore import Qt

    from app.bench.frames import synthetic_rounds_trace, synthetic_window_trace
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1200, 700)
    w.show()
    qtbot.waitExposed(w)
    views = w.views
    for event in synthetic_window_trace(300) + synthetic_rounds_trace(300):  # both views hold a run
        views.feed(event)
    views.render_frame(paint_now=True)
    assert views.minimumSizeHint().height() <= 160  # it was ~500: the dock could not be made small
    qtbot.wait(20)  # the window's first sizing of the dock
    w.resizeDocks([w.views_dock], [170], Qt.Orientation.Vertical)
    qtbot.waitUntil(lambda: w.views_dock.height() <= 200, timeout=2_000)
    qtbot.wait(20)
    for view in (views.rounds_view, views.window_view):  # a short dock scrolls the views; it never squeezes them
        views.tabs.setCurrentWidget(view)
        qtbot.wait(10)
        assert view.height() >= view.minimumSizeHint().height()
        assert views.scroller.verticalScrollBar().maximum() > 0
    bar = views.playback_bar.geometry()
    assert bar.bottom() < views.height() and bar.height() >= views.playback_bar.minimumSizeHint().height()
    w.grab().save(str(artifacts_dir / "main_window_short_dock.png"))


def test_editor_follows_the_block_being_decoded(qtbot, tmp_path):
    """A live run streams into a block far below the fold: the editor scrolls to it (the text cursor stays put),
    but not while the person works in the editor."""
    from PySide6.QtGui import QTextCursor

    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    path = str(tmp_path / "doc.pdf")
    regions = [Region(id=f"p1-r{i:02d}", page=0, box=(100, 40 * i, 900, 40 * i + 30), label="text", task="text",
                      order=i, box_pt=(50, 20 * i, 450, 20 * i + 15), dpi=144).to_dict() for i in range(40)]
    events = [ev.RunStarted(engine="gravity", document=path), ev.DocumentOpened(path=path, page_count=1),
              ev.LayoutDone(page=0, regions=regions)]
    for i in range(39):
        rid = f"p1-r{i:02d}"
        events += [ev.RegionStarted(region_id=rid, page=0, task="text", engine="gravity"),
                   ev.RegionFinished(region_id=rid, text=f"Paragraph {i} " + "words " * 30)]
    events += [ev.RegionStarted(region_id="p1-r39", page=0, task="text", engine="gravity"),
               ev.TokensCommitted(region_id="p1-r39", step=0, tokens=[1], text="The last one streams", ms=1.0)]
    for e in events:
        w.handle_event(e)
    w.redraw()
    editor = w.editor
    cursor_at = editor.textCursor().position()

    def end_visible(rid):
        _, last = editor._block_range(rid)
        cur = QTextCursor(last)
        cur.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        return editor.viewport().rect().contains(editor.cursorRect(cur).center())

    assert end_visible("p1-r39") and not end_visible("p1-r00")
    assert editor.textCursor().position() == cursor_at  # scrolled, the text cursor did not move
    preview = w.review.preview
    preview.render_now()
    assert preview.verticalScrollBar().value() > 0  # the preview shows the streaming block too
    # the person clicks into the editor and scrolls up: more text arrives, the view stays where they are
    editor.setFocus()
    qtbot.waitUntil(editor.hasFocus)
    editor.verticalScrollBar().setValue(0)
    preview.verticalScrollBar().setValue(0)
    w.handle_event(ev.TokensCommitted(region_id="p1-r39", step=1, tokens=[2], text=", and grows.", ms=1.0))
    w.redraw()
    preview.render_now()
    assert editor.verticalScrollBar().value() == 0 and preview.verticalScrollBar().value() == 0


def test_every_main_window_is_themed(qtbot):
    """`replay` (and anything else that builds the window without `run_app`) gets the same look as the app."""
    from PySide6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    app = QApplication.instance()
    assert getattr(app, "theme_follower", None) is not None


def test_a_failed_run_says_failed_and_why_in_the_list_and_the_status_bar(qtbot, tmp_path):
    """An engine whose weights are missing: the run fails, and the window says so (never "0 blocks" and "Ready")."""
    from app.core.document.sample_documents import make_sample_pdf
    from app.gui.main_window import MainWindow

    pdf = make_sample_pdf(tmp_path / "doc.pdf")
    w = MainWindow()
    qtbot.addWidget(w)
    w.engine_bar.set_engine("glm")  # no GLM-OCR weights on this machine (nor in the test's user folder)
    w.open_files([str(pdf)], run=True)
    qtbot.waitUntil(lambda: not w.decoder.running and w.work.run.outcome == "failed", timeout=60_000)
    row = w.documents.item(0).text()
    assert "failed: engine 'glm' cannot be used" in row and "0 blocks" not in row
    assert w.statusBar().currentMessage().startswith("The run failed: engine 'glm'")
    assert not w.banner.isHidden()
