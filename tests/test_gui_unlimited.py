"""The desktop app with Unlimited-OCR (engine "unlimited": the whole document in one R-SWA generation) on the tiny
REAL checkpoint, offscreen: drop a PDF, blocks arrive page by page, the R-SWA window view follows the generation
(its cache never above P + W), the window's characters are highlighted in the editor's blocks, and the recorded
trace replays to the same blocks. Screenshot: tests/artifacts/main_window_unlimited.png."""
from __future__ import annotations

import pytest

from app.core.record import events as ev
from app.core.record.trace import load_trace
from app.core.engines.unlimited_display import drop_specials
from tests.test_gui_review import drop_files, wait_run

torch = pytest.importorskip("torch")

MAX_NEW_TOKENS = 200  # enough for this tiny model to finish page 1 and stream on into page 2


@pytest.fixture(scope="module")
def two_page_pdf(tmp_path_factory):
    from app.core.document.sample_documents import make_sample_pdf

    return make_sample_pdf(tmp_path_factory.mktemp("docs") / "letters.pdf", pages=2)


def make_window(qtbot, model_dir=None):
    torch.set_num_threads(1)
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    if model_dir is not None:
        w.settings.set("max_new_tokens", MAX_NEW_TOKENS)  # for a whole-document engine: the whole output
        w.engine_bar.set_engine("unlimited")
        w.engine_bar.set_model_path(str(model_dir))
    w.show()
    qtbot.waitExposed(w)
    return w


def blocks_of(window) -> list[tuple]:
    return [(b.id, b.region.page, tuple(b.region.box_pt), b.region.label, b.markdown, b.status)
            for b in window.work.ordered()]


def window_text(window) -> tuple[str, str]:
    """The raw generation (what the window view streamed) and the part inside the window now."""
    stream = window.views.window_model.streams["doc"]
    a, b = stream.window_chars()
    return stream.text, stream.text[a:b]


def check_window_highlight(window) -> list[str]:
    """The editor marks exactly the block text inside the R-SWA window (raw offsets → blocks)."""
    window.redraw()
    window.views.flush()  # a frame: the views announce the window's span, the window maps it onto the blocks
    rid, a, b = window.views.window_view.window_span()
    assert rid == "doc" and b > a
    raw, inside = window_text(window)
    spans = window.session.window_spans("doc", a, b, raw)
    assert spans, "the window holds some block text"
    marked = window.editor.highlighted
    assert len(marked) == len(spans) and all(m for m in marked)
    for (bid, lo, hi), text in zip(spans, marked):
        block = window.work.blocks[bid]
        shown = block.markdown if block.provisional else (block.live_text or block.raw_text)  # the stream: tags hidden
        assert text == shown[lo:hi]  # the block's own characters, no tag
        assert drop_specials(text).strip() in drop_specials(inside)  # ... and they are inside the window
    return marked


def test_drop_a_pdf_read_by_unlimited_ocr(qtbot, tiny_unlimited_dir, two_page_pdf, artifacts_dir):
    w = make_window(qtbot, tiny_unlimited_dir)
    w.actions.record.setChecked(True)  # the run is also written to a trace file
    drop_files(w, [two_page_pdf])
    qtbot.waitUntil(lambda: any(b.status == "done" for b in w.work.blocks.values()), timeout=60_000)
    wait_run(qtbot, w)

    # blocks: every page laid out once in the page view's coordinates, the stream block gone, text in the editor
    blocks = [b for b in w.work.text_blocks() if b.status == "done"]
    assert blocks and {b.region.page for b in blocks} <= {0, 1}
    assert "doc" not in w.work.blocks and not w.banner.isVisible()
    assert all(b.region.dpi == 144.0 and b.region.source == "unlimited" for b in blocks)
    assert w.editor.block_ids() == [b.id for b in w.work.text_blocks() if b.markdown]
    shown = {b.id for b in blocks if b.region.page == w.page_view.page}
    assert shown and set(w.page_view.region_items) == shown

    # the R-SWA window view got the generation step by step; its cache figure never exceeds P + W
    views = w.views
    assert views.tabs.currentWidget() is views.window_view
    stream = views.window_model.streams["doc"]
    assert stream.finished and stream.output_len == MAX_NEW_TOKENS and stream.chunks == MAX_NEW_TOKENS
    assert stream.prefix_len > 0 and stream.window == 8
    assert max(stream.cache_positions) <= stream.prefix_len + stream.window == stream.bound
    assert stream.max_cache_positions <= stream.bound
    assert stream.full_positions[-1] > stream.bound  # full attention would have outgrown it

    # the window's characters are highlighted in the blocks that hold them (here: the end of the output)
    marked = check_window_highlight(w)
    assert marked[-1] in blocks[-1].raw_text  # the newest block (the window ends at the last token fed)
    w.grab().save(str(artifacts_dir / "main_window_unlimited.png"))

    # the recorded trace replays to the same blocks, and mid-replay the window highlights the streaming text too
    trace = w.traces.path
    assert trace is not None and trace.exists()
    live = blocks_of(w)
    w2 = make_window(qtbot)
    w2.open_trace(trace)
    player = w2.views.player
    player.pause()
    events = load_trace(trace).events
    first_layout = next(i for i, e in enumerate(events) if isinstance(e, ev.LayoutDone))
    steps_after = [i for i, e in enumerate(events) if isinstance(e, ev.WindowStepped) and i > first_layout]
    assert len(steps_after) > 4, "page 1 completes while the generation goes on"
    player.seek(steps_after[len(steps_after) // 2] + 1)  # blocks laid out, the rest still streaming
    assert any(b.status == "done" for b in w2.work.blocks.values())
    assert "doc" in w2.work.blocks and w2.work.blocks["doc"].region.extra.get("provisional")
    check_window_highlight(w2)
    player.play_all()
    w2.redraw()
    assert blocks_of(w2) == live
    check_window_highlight(w2)
