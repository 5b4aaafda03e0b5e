"""The layout child keeps ONNX Runtime's memory arena for pymupdf.layout's page-image feature model only (issue #38:
that model's forward was most of the child's time on a scanned page): its input is one page image of a fixed size,
so the arena never grows past one call. Real imports of pymupdf4llm in fresh processes, a real page laid out with
and without the arena."""
from __future__ import annotations

import json
import subprocess
import sys

_PROBE = r"""
import json, sys
import onnxruntime as ort
from app.core.layout.budget import arena_for_page_models, parse_page

made = ort.InferenceSession
assert "pymupdf" not in sys.modules  # importing it makes pymupdf.layout's sessions
if sys.argv[1] == "arena":
    with arena_for_page_models() as kept:
        import pymupdf
        import pymupdf4llm  # noqa: F401
else:
    import pymupdf
    import pymupdf4llm  # noqa: F401
    kept = []
doc = pymupdf.open()
page = doc.new_page(width=595, height=842)
page.insert_text((72, 60), "A Report on Reading", fontsize=20)
for k in range(24):
    page.insert_text((72, 110 + 22 * k), f"Line {k + 1} of a page of plain text, set for the layout to read.")
boxes = parse_page(pymupdf.open("pdf", doc.tobytes()), 0, False).get("boxes")
print(json.dumps({"kept": [{"arena": s.get_session_options().enable_cpu_mem_arena,
                             "shapes": [i.shape for i in s.get_inputs()]} for s in kept],
                  "restored": ort.InferenceSession is made, "boxes": boxes}))
"""


def _probe(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fixed_page_image(shapes: list) -> bool:
    """One input, a page image of a fixed height and width (only the batch may vary; the child sends one page a
    call): were its size free, the arena would grow to the largest input ever seen and the child's memory with it."""
    return len(shapes) == 1 and len(shapes[0]) == 4 and all(isinstance(d, int) for d in shapes[0][1:])


def test_only_the_fixed_size_page_image_model_keeps_the_arena_and_the_page_lays_out_the_same():
    with_arena, plain = _probe("arena"), _probe("plain")
    assert with_arena["restored"]
    assert len(with_arena["kept"]) == 1, with_arena["kept"]
    model = with_arena["kept"][0]
    assert model["arena"] is True
    assert _fixed_page_image(model["shapes"]), model["shapes"]
    assert with_arena["boxes"] and with_arena["boxes"] == plain["boxes"]


def test_the_layout_child_makes_that_model_with_the_arena():
    """The child itself (its imports in their real order: pymupdf makes the sessions when first imported)."""
    import pymupdf

    from app.core.layout.budget import LayoutProcess

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "One line for the layout to read.")
    proc = LayoutProcess()
    try:
        assert proc.parse(doc.tobytes(), False, timeout=120)["boxes"]
        assert len(proc.arena_inputs) == 1 and _fixed_page_image(proc.arena_inputs[0]), proc.arena_inputs
    finally:
        proc.stop()
