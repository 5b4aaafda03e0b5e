"""PP-DocLayoutV3 (transformers `PPDocLayoutV3ForObjectDetection`) + the post-processing of docs/architecture.md.

The image processor resizes the page (800 × 800 for the real checkpoint), the model returns class logits, boxes
and a reading-order head; `post_process_object_detection(threshold=0.3)` gives scored, labelled boxes already
ranked by reading order (`order_seq`). One query can appear with several labels, so our NMS (same class IoU 0.6,
across classes 0.98), the large-image filter, the containment merge and the reading-order sort
(app.core.layout.postprocess) follow. Labels are the checkpoint's `config.id2label`; the SDK's finer names are
folded onto the routing vocabulary (display/inline formula → formula, vertical_text → text, header/footer
images → header/footer); the checkpoint's own name stays in `extra["native_label"]`.
"""
from __future__ import annotations

from app.core.layout.base import LayoutError, make_regions
from app.core.layout.postprocess import Detection, postprocess
from app.core.document.regions import Region

THRESHOLD = 0.3
FOLD = {
    "display_formula": "formula", "inline_formula": "formula", "vertical_text": "text",
    "header_image": "header", "footer_image": "footer",
}


class PPDocLayout:
    name = "ppdoclayout"

    def __init__(self, model_path=None, device=None, dtype=None, threshold: float = THRESHOLD, **_ignored) -> None:
        from app.core.checkpoints.loader import ModelError, load_model

        try:  # fp32 unless asked: the model is small, and its post-processing hands masks to OpenCV (no bf16)
            self.loaded = load_model("pp-doclayoutv3", model_path, device=device, dtype=dtype or "fp32")
        except ModelError as exc:
            raise LayoutError(str(exc)) from exc
        self.threshold = threshold
        self.id2label = {int(k): v for k, v in self.loaded.model.config.id2label.items()}

    def detect(self, image) -> list[tuple[Detection, str]]:
        """Raw detections (after the library's thresholding), each with its native label."""
        import torch

        lm = self.loaded
        inputs = lm.processor(images=[image.convert("RGB")], return_tensors="pt")
        inputs = {k: (v.to(lm.device, lm.dtype) if v.is_floating_point() else v.to(lm.device)) for k, v in inputs.items()}
        with torch.inference_mode():
            outputs = lm.model(**inputs)
        result = lm.processor.post_process_object_detection(
            outputs, threshold=self.threshold, target_sizes=[(image.height, image.width)]
        )[0]
        scores = result["scores"].float().tolist()
        labels = result["labels"].tolist()
        boxes = result["boxes"].float().tolist()
        order = result.get("order_seq")
        order = order.tolist() if order is not None else list(range(len(scores)))
        out = []
        for s, lab, box, rank in zip(scores, labels, boxes, order):
            native = self.id2label.get(int(lab), str(lab))
            out.append((Detection(FOLD.get(native, native), float(s), tuple(float(v) for v in box), int(rank)), native))
        return out

    def analyse(self, document, index, image, dpi, *, keep_headers: bool = False, cancel=None,
                timeout: float | None = None) -> list[Region]:
        if cancel is not None:
            cancel.check()  # one forward of a fixed-size input: its time does not depend on the page
        raw = self.detect(image)
        natives = {id(d): n for d, n in raw}
        kept = postprocess([d for d, _ in raw], image.width, image.height, threshold=self.threshold)
        # clamp_boxes builds new Detection objects; recover native labels by matching order/label/score
        lookup = {(d.order, d.label, d.score): natives[id(d)] for d, _ in raw}
        names = [lookup.get((d.order, d.label, d.score), d.label) for d in kept]
        return make_regions(kept, index, dpi, self.name, keep_headers=keep_headers, native_labels=names,
                            page_size=(float(image.width), float(image.height)))
