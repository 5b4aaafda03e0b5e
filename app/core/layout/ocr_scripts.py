"""The layout's OCR hook through the script router: a scanned page's lines that RapidOCR cannot read (Cyrillic,
Greek, Devanagari, Thai, Korean, Arabic…) are read by the recogniser that can (app.core.scripts) before
pymupdf4llm lays the page out.

Why here: pymupdf4llm writes what its OCR hook read into the page as text sized to each line box, and lays the
page out from that text. A line read as "." becomes a text line a few points high, one read as nothing is
dropped, and the regions built on them cut lines in half or miss them. Read right, the layout sees the page's
real lines, and the engines get them (`extra["ocr_lines"]`): the classic engine takes them as they are.

RapidOCR is asked for every piece it found (its own score threshold is 0.5); a piece the router does not take
keeps RapidOCR's reading when that threshold would have kept it, so a page the bundled recogniser reads is laid
out exactly as before. Runs in the layout's child process (app.core.layout.budget).

What must never live here: the layout itself, the engines, Qt.
"""
from __future__ import annotations

RAPIDOCR_TEXT_SCORE = 0.5  # RapidOCR's default text_score: what its OCR hook kept before
# the last page's lines as the hook returned them: text -> who read it and whether it stands upright (a
# vertical CJK column); pymupdf4llm keeps only the text, so the layout hands this back beside it
READ: dict[str, dict] = {}


def line_record(text: str, read: dict[str, dict]) -> dict | None:
    """What `read` (`read_lines` of the page) says of a layout line: its own record, or, for a line the layout
    joined from several the hook wrote (vertical columns side by side come back as one line), their readers
    joined by "+" and how many stood upright. None: the line holds none of them."""
    if text in read:
        return read[text]
    parts = [(t, r) for t, r in read.items() if len(t) >= 2 and t in text]
    if not parts:
        return None
    readers = list(dict.fromkeys(str(r.get("reader")) for _, r in parts))
    return {"reader": "+".join(readers), "vertical": sum(int(r.get("vertical") or 0) for _, r in parts)}


def read_lines() -> dict[str, dict]:
    """Per line text the layout's OCR wrote on the last page: {"reader": "rapidocr" | "tesseract:rus" …,
    "vertical": 1 for a column standing upright, else 0}; app.core.layout.budget sends it back with the
    page."""
    return dict(READ)


def route_layout_ocr() -> bool:
    """Wrap pymupdf4llm's RapidOCR hook (its `full_ocr`) with the script router; False when it has none."""
    try:
        from pymupdf4llm.ocr import rapidocr_api
    except Exception:  # noqa: BLE001 - no OCR hook: born-digital pages only
        return False
    inner = getattr(rapidocr_api, "full_ocr", None)
    if inner is None or getattr(inner, "routed", False) or rapidocr_api.rapidocr_backend != "rapidocr":
        return False
    from pymupdf4llm.ocr import rapidocr_391_backend

    from app.core.scripts.direction import vertical
    from app.core.scripts.pieces import READER
    from app.core.scripts.router import LOST, Routed, ScriptRouter

    from app.core.rapid.empty_lines import keep_empty

    router = ScriptRouter()
    keep_empty(rapidocr_391_backend.init_engine())  # (after the script mask: app.core.layout.budget)

    def full_ocr(img):
        from PIL import Image

        engine = rapidocr_391_backend.init_engine()
        result = engine(img, text_score=0.0)
        boxes, texts, scores = result.boxes, result.txts, result.scores
        if boxes is None or texts is None or scores is None:
            return []
        router.reset()  # one call is one page
        lines = [((min(p[0] for p in q), min(p[1] for p in q), max(p[0] for p in q), max(p[1] for p in q)),
                  str(t or ""), float(s)) for q, t, s in zip(boxes, texts, scores)]
        routed = router.route(Image.fromarray(img), lines)
        out = []
        READ.clear()
        for quad, (box, text, score), other in zip(boxes, lines, routed):
            if isinstance(other, Routed):
                out.append((quad, other.text, other.conf))
                READ[other.text] = {"reader": other.reader, "vertical": int(vertical(box))}
            elif text and LOST not in text and score >= RAPIDOCR_TEXT_SCORE:
                out.append((quad, text, score))
                READ[text] = {"reader": READER, "vertical": int(vertical(box))}
        return out

    full_ocr.routed = True
    rapidocr_api.full_ocr = full_ocr
    return True
