"""The layout child lays a page out while the pipeline does work of its own (issue #38 and the born-digital wall
time of #33): `LayoutProcess.parse(meanwhile=...)` runs the caller's work after the page is sent and before its
answer is read, and the pipeline reads the page's text layer then. A real child process and a real PDF."""
from __future__ import annotations

import select


def _pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for k in range(30):
        page.insert_text((72, 72 + 22 * k), f"Line {k + 1} of a plain page of text, set for the layout to read.")
    return doc.tobytes()


def test_the_callers_work_runs_while_the_child_lays_the_page_out():
    from app.core.layout.budget import LayoutProcess

    proc = LayoutProcess()
    try:
        alone = proc.parse(_pdf(), False, timeout=120)  # started, and the page laid out once
        seen = []

        def meanwhile():
            # the page is with the child already: its answer arrives while this waits (nothing of it is read here)
            ready, _, _ = select.select([proc._proc.stdout], [], [], 60)
            seen.append(bool(ready))

        again = proc.parse(_pdf(), False, timeout=120, meanwhile=meanwhile)
        assert seen == [True]
        assert again["boxes"] == alone["boxes"]

        def fails():
            raise ValueError("the caller's own error, reported where it does the work again")

        assert proc.parse(_pdf(), False, timeout=120, meanwhile=fails)["boxes"] == alone["boxes"]
    finally:
        proc.stop()


def test_the_pipeline_reads_the_text_layer_while_the_page_is_laid_out(tmp_path, monkeypatch):
    from app.core.layout import budget
    from app.core.pipeline import Pipeline, PipelineOptions
    from app.core.pipeline.text_source import TextSource

    pdf = tmp_path / "page.pdf"
    pdf.write_bytes(_pdf())
    laying_out, first_read = [], []
    parse, layer = budget.LayoutProcess.parse, TextSource.layer

    def noting(self, *args, **kw):
        laying_out.append(True)
        try:
            return parse(self, *args, **kw)
        finally:
            laying_out.pop()

    def reading(self, index):
        if not first_read:
            first_read.append(bool(laying_out))
        return layer(self, index)

    monkeypatch.setattr(budget.LayoutProcess, "parse", noting)
    monkeypatch.setattr(TextSource, "layer", reading)
    pipe = Pipeline(PipelineOptions(engine="classic", layout="pymupdf", text_layer="prefer"))
    try:
        out = pipe.run(pdf)
    finally:
        pipe.close()
    assert first_read == [True]  # the text layer was first read while the child had the page
    assert "Line 30 of a plain page" in out.to_markdown(anchors=False)
