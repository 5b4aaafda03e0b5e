"""The classic offline engine: RapidOCR (PP-OCR detection + recognition ONNX models shipped in its wheel) on CPU.

A region engine (kind "region") like the VLM engines, so the app produces real text on any machine with no
download. It has no rounds and no window to show: it emits RegionStarted and RegionFinished only.
Per task: text → the recognised lines in reading order, one per line; table → an HTML table built from the
line boxes (rows by vertical overlap, columns inferred from the pieces' x-positions across rows: app.core.text.tables);
formula → the recognised characters as they are (RapidOCR does not read LaTeX). Latin pages are read as Latin:
the recogniser's CJK classes are masked once a page reads as Latin (app.core.rapid.script_mask).

What must never live here: layout, assembly, Qt.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from app.core.engines import EngineUnavailable, RegionResult, no_emit
from app.core.engines.spec import EngineSpec
from app.core.scripts.direction import in_reading_order
from app.core.scripts.pieces import routed_pieces
from app.core.scripts.router import ScriptRouter
from app.core.base.cancel import CancelToken
from app.core.rapid.empty_lines import UNREAD, keep_empty
from app.core.rapid.det_input import fast_input
from app.core.rapid.script_mask import ScriptMask, install
from app.core.record.events import RegionFinished, RegionStarted
from app.core.text.tables import from_rows
from app.core.text.hyphens import join_lines
from app.core.text.textcheck import line_coverage, unread

_ENGINE = None
PAD = 24  # white pixels added around a crop before detection
KEEP_SCORE = 0.5  # RapidOCR's own text_score: a piece it reads less sure than this is not kept as its reading
_ENGINE_LOCK = threading.Lock()
SCRIPT_MASK = ScriptMask()  # the page's script, for the one RapidOCR instance of this process


def _rapidocr():
    """One RapidOCR instance per process (its first load takes a few seconds)."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            import logging

            try:
                from rapidocr import RapidOCR

                from app.core.base.threads import rapidocr_params
            except Exception as exc:  # noqa: BLE001
                raise EngineUnavailable(f"the classic engine needs RapidOCR (`pip install rapidocr onnxruntime`): {exc}") from exc
            try:
                _ENGINE = RapidOCR(params={
                    "Global.log_level": "error",
                    "Global.use_cls": False,  # layout crops are upright; the angle classifier only costs time
                    # detection on a crop: cap the long side instead of blowing the short side up to 736 px
                    "Det.limit_type": "max",
                    "Det.limit_side_len": 1600,
                    **rapidocr_params(),  # a `convert --jobs` worker's share of the cores
                })
            except Exception:  # noqa: BLE001 - older/newer params schema
                _ENGINE = RapidOCR()
            logger = logging.getLogger("RapidOCR")
            logger.setLevel(logging.ERROR)
            install(_ENGINE, SCRIPT_MASK)
            keep_empty(_ENGINE)  # a line read as nothing still reaches the script router
            fast_input(_ENGINE)  # the detector's input made in float32 (app.core.rapid.det_input)
        return _ENGINE


def group_lines(items: list[tuple[tuple[float, float, float, float], str]]) -> list[list[tuple[tuple, str]]]:
    """Group recognised pieces (box x0,y0,x1,y1 + text) into rows: a piece joins a row when it overlaps the row's
    vertical extent by at least half its own height. Rows top to bottom, pieces left to right."""
    rows: list[dict[str, Any]] = []
    for box, text in sorted(items, key=lambda it: ((it[0][1] + it[0][3]) / 2, it[0][0])):
        h = max(1e-6, box[3] - box[1])
        for row in rows:
            overlap = min(row["y1"], box[3]) - max(row["y0"], box[1])
            if overlap >= 0.5 * min(h, row["y1"] - row["y0"]):
                row["items"].append((box, text))
                row["y0"], row["y1"] = min(row["y0"], box[1]), max(row["y1"], box[3])
                break
        else:
            rows.append({"y0": box[1], "y1": box[3], "items": [(box, text)]})
    rows.sort(key=lambda r: r["y0"])
    return [sorted(r["items"], key=lambda it: it[0][0]) for r in rows]


def lines_to_text(rows: list[list[tuple[tuple, str]]]) -> str:
    """Visual lines of one layout region form one paragraph: joined by spaces, a hyphen at a line end rejoins the
    word ("recog-" + "nition" → "recognition": app.core.text.hyphens). A row of right-to-left pieces (Arabic, Hebrew) or of vertical CJK
    columns is read from its right end (app.core.scripts.direction)."""
    return join_lines(" ".join(t for _, t in in_reading_order(row)) for row in rows)


def lines_to_table(rows: list[list[tuple[tuple, str]]]) -> str:
    return from_rows(rows)


def pieces_to_text(task: str, pieces) -> tuple[str, int]:
    """Recognised pieces (box, text, ...) of one region → its text for `task`, and its number of lines."""
    rows = group_lines([(p[0], p[1]) for p in pieces])
    return (lines_to_table(rows) if task == "table" else lines_to_text(rows)), len(rows)


def _word_boxes(word_result) -> list[list]:
    """RapidOCR's word boxes of one piece (text, score, quad) → [x0, y0, x1, y1, text, score] in crop pixels."""
    out = []
    for item in word_result or ():
        try:
            text, score, quad = item
            xs, ys = [float(p[0]) - PAD for p in quad], [float(p[1]) - PAD for p in quad]
        except (TypeError, ValueError):
            continue
        if str(text).strip():
            out.append([round(min(xs), 1), round(min(ys), 1), round(max(xs), 1), round(max(ys), 1), str(text),
                        round(float(score), 4)])
    return out


def line_geometry(pieces, words, readers=()) -> dict[str, Any]:
    """The lines the engine found (rows of pieces, as `pieces_to_text` groups them) as the stats record them for the
    geometry model (app.core.formats.geometry): `line_boxes` in crop pixels and `line_stats` (each row's text,
    measured words when RapidOCR's words spell the row's pieces exactly, and who read it: `reader`, the
    recognisers of its pieces joined by "+")."""
    if not pieces:
        return {}
    keyed = [((p[0], p[1]), w) for p, w in zip(pieces, words)] if len(words) == len(pieces) else []
    read_by = {(p[0], p[1]): r for p, r in zip(pieces, readers)} if len(readers) == len(pieces) else {}
    rows = group_lines([(p[0], p[1]) for p in pieces])
    boxes, per_line = [], []
    for row in rows:
        x0, y0 = min(b[0] for b, _ in row), min(b[1] for b, _ in row)
        x1, y1 = max(b[2] for b, _ in row), max(b[3] for b, _ in row)
        boxes.append([round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1)])
        row = in_reading_order(row)  # a right-to-left row's pieces from its right end, as its text reads
        text = " ".join(t for _, t in row)
        row_words = [w for piece in row for key, ws in keyed if key == piece for w in ws]
        st: dict[str, Any] = {"text": text}
        if row_words and [w[4] for w in row_words] == text.split():
            st["words"] = row_words
        names = list(dict.fromkeys(read_by[piece] for piece in row if piece in read_by))
        if names:
            st["reader"] = "+".join(names)
        per_line.append(st)
    return {"line_boxes": boxes, "line_stats": per_line}


class ClassicEngine:
    name = "classic"
    kind = "region"
    title = "Classic OCR (RapidOCR, CPU)"
    device = "cpu"  # ONNX Runtime on the CPU
    input_dpi = 200.0  # crops are rendered at this DPI for recognition
    concurrency = 1

    def __init__(self, min_score: float = 0.3, *, name: str = "classic") -> None:
        self.name = name
        self.min_score = min_score
        self._ocr = _rapidocr()
        self._page: int | None = None  # the page being read: a new page starts a new script estimate
        self.router = ScriptRouter()  # lines in scripts RapidOCR cannot read: another recogniser's

    def close(self) -> None:
        self._ocr = None

    def read_lines(self, image) -> list[tuple[tuple[float, float, float, float], str, float]]:
        """The pieces RapidOCR read at least `min_score` (and KEEP_SCORE) sure (box in crop pixels, text, score);
        `last_words` their words. `last_pieces`: every piece it found, its empty and unsure ones too (the
        router's input)."""
        import numpy as np

        from PIL import ImageOps

        self.last_pieces: list = []
        if image.width < 4 or image.height < 4:
            return []
        # a white margin: text touching the crop's edge is detected poorly (split or clipped words)
        arr = np.asarray(ImageOps.expand(image.convert("RGB"), border=PAD, fill=(255, 255, 255)))
        # every step named: RapidOCR keeps the last call's use_det/use_cls/use_rec flags (and its word boxes)
        # every piece, however unsure (text_score 0): a line RapidOCR cannot read goes to the script router, and
        # the others are kept as RapidOCR's own threshold kept them (KEEP_SCORE)
        result = self._ocr(arr, use_det=True, use_cls=False, use_rec=True, return_word_box=True, text_score=0.0)
        boxes, txts, scores = getattr(result, "boxes", None), getattr(result, "txts", None), getattr(result, "scores", None)
        if boxes is None or txts is None:
            self.last_words = []
            return []
        out, words = [], []
        word_results = getattr(result, "word_results", None) or [()] * len(txts)
        for quad, text, score, wr in zip(boxes, txts, scores if scores is not None else [1.0] * len(txts),
                                         word_results):
            xs = [float(p[0]) - PAD for p in quad]
            ys = [float(p[1]) - PAD for p in quad]
            piece = ((min(xs), min(ys), max(xs), max(ys)), str(text or ""), float(score))
            self.last_pieces.append((*piece, _word_boxes(wr)))
            if not text or text == UNREAD or score < max(self.min_score, KEEP_SCORE):
                continue
            out.append(piece)
            words.append(_word_boxes(wr))
        self.last_words = words  # per piece: its words [x0, y0, x1, y1, text, score] in crop pixels
        return out

    def start_page(self, page: int | None) -> None:
        if page != self._page:
            self._page = page
            SCRIPT_MASK.reset()
            self.router.reset()

    def decode_region(self, image, task: str, *, region_id: str, page: int = 0, emit=no_emit,
                      cancel: CancelToken | None = None) -> RegionResult:
        emit(RegionStarted(region_id=region_id, page=page, task=task, engine=self.name))
        if cancel is not None and cancel.cancelled:
            emit(RegionFinished(region_id=region_id, text="", stats={"engine": self.name}, cancelled=True))
            return RegionResult(region_id, "", cancelled=True)
        t0 = time.perf_counter()
        self.start_page(page)
        self.read_lines(image)
        # lines RapidOCR could not read go to a recogniser that can (app.core.scripts)
        pieces, words, readers, route = routed_pieces(self.router, image, self.last_pieces,
                                                       max(self.min_score, KEEP_SCORE))
        text, lines = pieces_to_text(task, pieces)
        ms = (time.perf_counter() - t0) * 1000
        # a piece whose text covers little of its box was mostly not read (a script the recogniser lacks): its
        # score is capped by its coverage, so the block's confidence says so (app.core.text.textcheck)
        scores = [min(score, line_coverage(box, t)) for box, t, score in pieces]
        stats = {
            "engine": self.name, "ms": round(ms, 1), "lines": lines, "pieces": len(pieces), "chars": len(text),
            "mean_score": round(sum(s for *_, s in pieces) / len(pieces), 4) if pieces else 0.0,
            "line_scores": [round(x, 4) for x in scores],
            "unreadable_lines": sum(1 for box, t, _ in pieces if unread(box, t)),
            **line_geometry(pieces, words, readers),
            **route,
        }
        emit(RegionFinished(region_id=region_id, text=text, stats=stats))
        return RegionResult(region_id, text, stats=stats)


def recognise_lines(images) -> list[tuple[str, float]]:
    """Text line images → (text, score) each, recognition only (no detection), in one batched call: a quick check
    of what lines say."""
    import numpy as np

    from PIL import ImageOps

    ocr = _rapidocr()
    todo = [(k, np.asarray(ImageOps.expand(im.convert("RGB"), border=4, fill=(255, 255, 255))))
            for k, im in enumerate(images) if im.width >= 4 and im.height >= 4]
    out = [("", 0.0)] * len(images)
    if todo:
        result = ocr.recognize_txt([ocr.load_img(arr) for _, arr in todo])
        for (k, _), text, score in zip(todo, result.txts or (), result.scores or ()):
            out[k] = ("" if text == UNREAD else str(text), float(score))
    return out


def open_engine(**options: Any) -> ClassicEngine:
    """Factory named in app.core.engines.ENGINES; model options (model_path, device, dtype...) are ignored."""
    return ClassicEngine(min_score=float(options.get("min_score", 0.3)), name=options.get("engine") or "classic")


# its registration (pyproject's scriptorium.engines entry points name it)
CLASSIC = EngineSpec("classic", "Classic OCR (RapidOCR, CPU)", "region",
                     "app.core.engines.classic:open_engine", fallback=True, reads_layout_lines=True,
                     reads_formulas=False)

