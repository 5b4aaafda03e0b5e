"""The held-out PDF check of the built-in model: fresh lines (texts never trained on) in fonts never trained on,
printed into PDFs as page images (no text layer), read with the app's own `convert`, scored per font.

    python -m app.core.training.heldout_pdf make runs/heldout_pdf            # one PDF per held-out font + truth
    python -m app convert runs/heldout_pdf/*.pdf -o runs/heldout_pdf/out --engine builtin --layout page --device cpu
    python -m app.core.training.heldout_pdf score runs/heldout_pdf runs/heldout_pdf/out

Texts: the held-out docstring paragraphs of the standard library and synthetic texts of held-out seeds
(linedata); fonts: linedata.HELD_OUT_FONTS (PyMuPDF's Courier family and Times-BoldItalic, DejaVu Sans Mono Bold
Oblique and DejaVu Serif Condensed Bold Italic); sizes 9-13 pt; pages rasterised at 300 DPI.

`make DIR --poor` prints them poorly instead, as a bad scan or fax would: rasterised at 100 DPI, blurred (Gaussian,
radius 0.7 px), with grey noise (σ 14) and on grey paper (`--dpi`, `--blur`, `--noise` to change them), so the same
check measures the reading of poor prints:

    python -m app.core.training.heldout_pdf make runs/heldout_poor --poor
    python -m app convert runs/heldout_poor/*.pdf -o runs/heldout_poor/builtin --engine builtin --layout page
    python -m app convert runs/heldout_poor/*.pdf -o runs/heldout_poor/classic --engine classic --layout page
    python -m app.core.training.heldout_pdf score runs/heldout_poor runs/heldout_poor/builtin   # and /classic
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from app.core.training.linedata import (
    HELD_OUT_SEED, docstring_text, font_charset, font_name, held_out_fonts, is_cjk,
)

PAGE_W, PAGE_H = 595, 842
MARGIN = 56
LINES_PER_PAGE = 22


def _texts(rng: random.Random, spec: str, count: int, max_width: float, fontsize: float, measure) -> list[str]:
    from app.core.training.synthetic import random_text

    charset = font_charset(spec)
    if spec.startswith("pymupdf:"):  # PyMuPDF writes its base-14 fonts with a Latin-1 encoding (€, “, … become ·)
        charset = "".join(ch for ch in charset if ord(ch) < 256)
    out: list[str] = []
    while len(out) < count:
        if rng.random() < 0.5:
            text = docstring_text(rng, 20, 80, held_out=True)
        else:
            text = random_text(rng, 12, 70, "".join(ch for ch in "€£°§±×–—‘’“”…" if ch in charset))
        text = " ".join(text.split())
        text = "".join(ch for ch in text if ch in charset)
        while text and measure(text, fontsize) > max_width:
            text = text[: text.rfind(" ")] if " " in text else text[:-1]
        if len(text) >= 3:
            out.append(text)
    return out


POOR_DPI, POOR_BLUR, POOR_NOISE, POOR_PAPER = 100, 0.7, 14.0, 225


def poor_print(pix, rng: random.Random, blur: float = POOR_BLUR, noise: float = POOR_NOISE) -> bytes:
    """PNG bytes of a grey page pixmap printed poorly: grey paper, blur, noise (seeded by `rng`)."""
    import io

    import numpy as np
    from PIL import Image, ImageFilter

    img = Image.frombytes("L", (pix.width, pix.height), pix.samples).filter(ImageFilter.GaussianBlur(blur))
    a = np.asarray(img).astype(np.float32) * (POOR_PAPER / 255.0)
    a += np.random.default_rng(rng.getrandbits(32)).normal(0.0, noise, a.shape)
    buf = io.BytesIO()
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def make(folder: str | Path, lines_per_font: int = 44, seed: int = 0, poor: bool = False, dpi: int = POOR_DPI,
         blur: float = POOR_BLUR, noise: float = POOR_NOISE) -> list[Path]:
    """One image-only PDF per held-out Latin font (and its truth); `poor`: printed at `dpi` with `blur` and
    `noise` on grey paper (poor_print), else at 300 DPI."""
    import io

    import pymupdf

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for spec in [f for f in held_out_fonts() if not is_cjk(f)]:  # Latin prints (docstring text)
        rng = random.Random(HELD_OUT_SEED + seed * 7 + sum(map(ord, spec)))
        if spec.startswith("pymupdf:"):
            kw = {"fontname": spec.split(":", 1)[1]}
            font = pymupdf.Font(kw["fontname"])
        else:
            kw = {"fontname": "F0", "fontfile": spec[5:]}
            font = pymupdf.Font(fontfile=spec[5:])
        measure = lambda t, s: font.text_length(t, fontsize=s)  # noqa: E731
        truth: list[list[str]] = []
        src = pymupdf.open()
        remaining = lines_per_font
        while remaining > 0:
            n = min(LINES_PER_PAGE, remaining)
            remaining -= n
            page = src.new_page(width=PAGE_W, height=PAGE_H)
            lines = []
            y = MARGIN + 14
            for _ in range(n):
                size = rng.choice((9, 10, 10, 11, 11, 12, 13))
                text = _texts(rng, spec, 1, PAGE_W - 2 * MARGIN, size, measure)[0]
                page.insert_text((MARGIN, y), text, fontsize=size, **kw)
                lines.append(text)
                y += size * 2.6
            truth.append(lines)
        out = pymupdf.open()  # the pages as images: no text layer to fall back on
        for page in src:
            pix = page.get_pixmap(dpi=dpi if poor else 300, colorspace=pymupdf.csGRAY)
            img_page = out.new_page(width=PAGE_W, height=PAGE_H)
            png = poor_print(pix, rng, blur, noise) if poor else pix.tobytes("png")
            img_page.insert_image(img_page.rect, stream=io.BytesIO(png))
        name = font_name(spec).replace(":", "-")
        path = folder / f"heldout-{name}.pdf"
        out.save(path, deflate=True)
        (folder / f"heldout-{name}.truth.json").write_text(json.dumps({"font": font_name(spec), "pages": truth},
                                                                      indent=1), encoding="utf-8")
        made.append(path)
    return made


def score(folder: str | Path, out_dir: str | Path) -> dict:
    """Per font: CER of the convert output (each page one region, lines joined by spaces) against the truth."""
    from app.core.text.textmetrics import errors as cer

    folder, out_dir = Path(folder), Path(out_dir)
    report: dict = {"fonts": {}}
    all_e = all_n = 0
    tok = fw = 0
    for truth_file in sorted(folder.glob("heldout-*.truth.json")):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        stem = truth_file.name[: -len(".truth.json")]
        js = out_dir / f"{stem}.json"
        if not js.is_file():
            report["fonts"][truth["font"]] = {"missing": str(js)}
            continue
        data = json.loads(js.read_text(encoding="utf-8"))
        e = n = 0
        f_tok = f_fw = 0
        for page, lines in zip(data["pages"], truth["pages"]):
            regions = page.get("blocks", page.get("regions", []))
            text = " ".join((r.get("text") or "") for r in regions)
            de, dn = cer(" ".join(lines), " ".join(text.split()))
            e, n = e + de, n + dn
            for r in regions:
                st = r.get("stats") or {}
                f_tok += int(st.get("tokens", 0) or 0)
                f_fw += int(st.get("forwards", 0) or 0)
        report["fonts"][truth["font"]] = {"cer": round(e / max(1, n), 5), "chars": n, "engine": data.get("engine"),
                                          "tpf": round(f_tok / max(1, f_fw), 3) if f_fw else None}
        all_e, all_n, tok, fw = all_e + e, all_n + n, tok + f_tok, fw + f_fw
    report["cer"] = round(all_e / max(1, all_n), 5)
    report["tpf"] = round(tok / max(1, fw), 3) if fw else None
    report["worst_font_cer"] = max((v.get("cer", 1.0) for v in report["fonts"].values()), default=None)
    return report


if __name__ == "__main__":  # pragma: no cover
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "make":
        import argparse

        ap = argparse.ArgumentParser(prog="heldout_pdf make")
        ap.add_argument("folder")
        ap.add_argument("--poor", action="store_true", help="print poorly (grey paper, blur, noise, low DPI)")
        ap.add_argument("--dpi", type=int, default=POOR_DPI, help=f"--poor: resolution (default {POOR_DPI})")
        ap.add_argument("--blur", type=float, default=POOR_BLUR, help=f"--poor: Gaussian radius (default {POOR_BLUR})")
        ap.add_argument("--noise", type=float, default=POOR_NOISE, help=f"--poor: noise σ (default {POOR_NOISE})")
        ap.add_argument("--lines", type=int, default=44, help="lines per font (default 44: two pages)")
        a = ap.parse_args(sys.argv[2:])
        for p in make(a.folder, a.lines, poor=a.poor, dpi=a.dpi, blur=a.blur, noise=a.noise):
            print(p)
    elif cmd == "score":
        print(json.dumps(score(sys.argv[2], sys.argv[3]), indent=1))
    else:
        print(__doc__)
        raise SystemExit(2)
