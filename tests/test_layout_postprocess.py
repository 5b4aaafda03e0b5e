"""Each layout post-processing step (docs/architecture.md, Layout post-processing) on small hand-made boxes; expected
outputs written from the rules."""
from __future__ import annotations

import random

from app.core.layout.postprocess import (
    Detection, area, clamp_boxes, drop_large_images, iou, merge_contained, nms, postprocess, sort_reading_order,
)


def D(label, score, box, order=0):
    return Detection(label, score, tuple(float(v) for v in box), order)


def test_area_and_iou_use_the_plus_one_convention():
    assert area((0, 0, 9, 9)) == 100
    # [0,0,9,9] and [5,0,14,9]: overlap 5×10 = 50, union 150
    assert iou((0, 0, 9, 9), (5, 0, 14, 9)) == 50 / 150
    assert iou((0, 0, 9, 9), (20, 20, 29, 29)) == 0.0


def test_nms_same_class_drops_at_iou_06():
    a = D("text", 0.9, (0, 0, 99, 99))
    b = D("text", 0.8, (0, 0, 99, 79))  # IoU 0.8 with a → dropped (same class, ≥ 0.6)
    c = D("text", 0.7, (0, 50, 99, 149))  # IoU 50*100/(10000+10000-5000) = 0.333 → kept
    assert nms([a, b, c]) == [a, c]


def test_nms_across_classes_only_drops_near_identical_boxes():
    a = D("text", 0.9, (0, 0, 99, 99))
    b = D("table", 0.8, (0, 0, 99, 79))  # IoU 0.8 < 0.98 across classes → kept
    c = D("paragraph_title", 0.7, (0, 0, 99, 99))  # identical box, other class → IoU 1 ≥ 0.98 → dropped
    assert nms([c, b, a]) == [a, b]


def test_large_image_dropped_on_portrait_page_only_above_93_percent():
    text = D("text", 0.9, (10, 10, 50, 20))
    big = D("image", 0.9, (0, 0, 100, 190))  # 100×190 of 100×200 = 95 % > 93 %
    ok = D("image", 0.9, (0, 0, 100, 180))  # 90 %: kept on a portrait page
    assert drop_large_images([text, big, ok], 100, 200) == [text, ok]
    # landscape page (200×100): limit 82 %; 90 % is too much there
    wide = D("image", 0.9, (0, 0, 180, 100))
    assert drop_large_images([text, wide], 200, 100) == [text]
    # a page whose only box is the image keeps it
    assert drop_large_images([big], 100, 200) == [big]


def test_contained_box_is_dropped_but_never_an_image_seal_or_chart():
    outer = D("text", 0.9, (0, 0, 99, 99))
    inner = D("text", 0.8, (10, 10, 49, 49))
    inner_image = D("image", 0.8, (10, 60, 49, 89))
    assert merge_contained([outer, inner, inner_image]) == [outer, inner_image]


def test_containment_threshold_is_80_percent_of_the_inner_area():
    outer = D("text", 0.9, (0, 0, 99, 99))
    mostly = D("table", 0.8, (90, 0, 139, 9))  # x 90..99 inside: 10 of 50 columns = 20 % → kept
    assert merge_contained([outer, mostly]) == [outer, mostly]
    eighty = D("table", 0.8, (60, 0, 109, 9))  # 40 of 50 columns = 80 % → dropped
    assert merge_contained([outer, eighty]) == [outer]


def test_mutual_containment_keeps_the_higher_score():
    a = D("text", 0.6, (0, 0, 99, 99))
    b = D("paragraph_title", 0.9, (1, 1, 99, 99))
    assert merge_contained([a, b]) == [b]


def test_reading_order_follows_the_model_rank():
    a, b, c = D("text", 0.9, (0, 500, 9, 509), 2), D("text", 0.9, (0, 0, 9, 9), 1), D("text", 0.5, (0, 900, 9, 909), 0)
    assert sort_reading_order([a, b, c]) == [c, b, a]


def test_clamp_clips_to_the_page_and_drops_degenerate_boxes():
    out = clamp_boxes([D("text", 1, (-5, -5, 50.4, 60.6)), D("text", 1, (120, 0, 130, 10)), D("text", 1, (5, 5, 5.5, 40))], 100, 100)
    assert [d.box for d in out] == [(0.0, 0.0, 50.0, 61.0)]


def test_chain_on_a_page():
    dets = [
        D("text", 0.95, (10, 10, 90, 30), 1),
        D("doc_title", 0.94, (10, 10, 90, 30), 1),  # same query, second label: cross-class duplicate
        D("text", 0.2, (10, 40, 90, 60), 2),  # below threshold
        D("image", 0.9, (0, 0, 100, 199), 3),  # covers 99.5 % of a portrait page
        D("table", 0.8, (10, 70, 90, 120), 0),
        D("text", 0.7, (12, 72, 50, 90), 4),  # inside the table
    ]
    out = postprocess(dets, 100, 200, threshold=0.3)
    assert [(d.label, d.box) for d in out] == [("table", (10.0, 70.0, 90.0, 120.0)), ("text", (10.0, 10.0, 90.0, 30.0))]


def test_invariants_over_random_boxes():
    rng = random.Random(7)
    for _ in range(200):
        dets = []
        for i in range(rng.randint(0, 12)):
            x, y = rng.uniform(-20, 180), rng.uniform(-20, 280)
            dets.append(D(rng.choice(["text", "table", "image", "chart", "doc_title"]), rng.random(),
                          (x, y, x + rng.uniform(0, 120), y + rng.uniform(0, 120)), rng.randint(0, 20)))
        out = postprocess(dets, 160, 260, threshold=0.3)
        assert len(out) <= len(dets)
        assert all(d.score >= 0.3 for d in out)
        assert all(0 <= d.box[0] < d.box[2] <= 160 and 0 <= d.box[1] < d.box[3] <= 260 for d in out)
        assert [d.order for d in out] == sorted(d.order for d in out)
        kept_same = [(a, b) for a in out for b in out if a is not b and a.label == b.label]
        # NMS ran on unclamped boxes; clamping only shrinks, so kept same-class pairs overlapped < 0.6 before
        assert len(out) == len({(d.label, d.box, d.order, d.score) for d in out}) or kept_same


def test_auto_layout_skips_ppdoclayout_without_a_working_torchvision(monkeypatch, tmp_path, tiny_doclayout_dir):
    import sys

    from app.core import layout

    (tmp_path / "pp-doclayoutv3").symlink_to(tiny_doclayout_dir)  # the user's model folder holds the checkpoint
    monkeypatch.setenv("SCRIPTORIUM_MODELS", str(tmp_path))
    assert layout.resolve_layout_name("auto") == "ppdoclayout"
    monkeypatch.setitem(sys.modules, "torchvision", None)  # what a missing or broken torchvision looks like
    assert layout.resolve_layout_name("auto") == "pymupdf"


def test_a_page_whose_only_text_is_a_header_reads_it():
    """A one-line image laid out as a lone header is that line, not page furniture; a running header alone on a tall
    page, or beside body text, is still skipped."""
    from app.core.layout.base import make_regions
    from app.core.layout.postprocess import Detection

    lone = make_regions([Detection("header", 0.9, (10, 5, 300, 30), 0)], 0, 72.0, "test", page_size=(320, 40))
    assert [r.task for r in lone] == ["text"] and lone[0].extra["margin_kept"]
    running = make_regions([Detection("header", 0.9, (10, 5, 300, 30), 0)], 0, 72.0, "test", page_size=(600, 800))
    assert [r.task for r in running] == ["skipped"]  # a blank book page's running header stays furniture
    both = make_regions([Detection("header", 0.9, (10, 5, 300, 30), 0),
                         Detection("text", 0.9, (10, 50, 300, 200), 1)], 0, 72.0, "test")
    assert [r.task for r in both] == ["skipped", "text"]


def test_text_up_the_margin_makes_no_line_band_of_headers():
    """arXiv's stamp runs up the left margin of a page and is a page header: it spans every line band, so it must
    not turn the abstract beside it into page furniture (it did: a scanned paper lost its abstract)."""
    from app.core.layout.page_boxes import margin_bands

    stamp = {"boxclass": "page-header", "x0": 10, "y0": 200, "x1": 30, "y1": 600}
    running = {"boxclass": "page-header", "x0": 100, "y0": 20, "x1": 500, "y1": 32}
    abstract = {"boxclass": "text", "x0": 50, "y0": 300, "x1": 300, "y1": 310}
    number = {"boxclass": "text", "x0": 520, "y0": 21, "x1": 540, "y1": 31}
    margin_bands([stamp, running, abstract, number])
    assert abstract["boxclass"] == "text" and number["boxclass"] == "page-header"
