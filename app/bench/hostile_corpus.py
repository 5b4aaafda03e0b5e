"""The hostile corpus, built at test time (nothing of it is committed): damaged, encrypted, huge, empty and
malformed inputs for `convert` and the window's open path, and wrong shapes of every JSON file the app reads back
(the journal, trace files) plus a damaged settings file.

    documents = build_documents(folder, quick=True)     # [(path, what it is)]
    journals = journal_shapes()                          # [(name, text of a work.json)]
    traces = trace_shapes()                              # [(name, text of a trace file)]

`quick` is the CI subset (a few of each kind); the full corpus (`python -m app bench hostile`) has truncations at
many offsets and many bit flips. Every file is deterministic (seeded), so a failure can be rebuilt.

What must never live here: running anything (app.bench.hostile runs the corpus; tests/test_hostile.py the subset).
"""
from __future__ import annotations

import io
import json
import random
import struct
import zlib
from pathlib import Path

PASSWORD = "s3cret"


def graph_paper_pdf(path: Path, cells: tuple[int, int] = (100, 93)) -> Path:
    """One page of graph paper: a page image of a grid, ~18,600 short vector lines over it and a garbled text
    layer of 50 spans (the page that kept the layout busy for minutes)."""
    import pymupdf
    from PIL import Image, ImageDraw

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    img = Image.new("L", (1240, 1754), 250)
    draw = ImageDraw.Draw(img)
    for x in range(0, 1240, 12):
        draw.line([(x, 0), (x, 1754)], fill=180)
    for y in range(0, 1754, 12):
        draw.line([(0, y), (1240, y)], fill=180)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    page.insert_image(page.rect, stream=buf.getvalue())
    shape = page.new_shape()
    step_x, step_y = 595 / cells[0], 842 / cells[1]
    for i in range(cells[0]):
        for j in range(cells[1]):
            x, y = i * step_x, j * step_y
            shape.draw_line((x, y), (x + step_x, y))
            shape.draw_line((x, y), (x, y + step_y))
    shape.finish(color=(0.6, 0.7, 0.9), width=0.3)
    shape.commit()
    rng = random.Random(1)
    for _ in range(50):
        text = "".join(rng.choice("#@%&qwxzQWXZ") for _ in range(8))
        page.insert_text((rng.uniform(20, 500), rng.uniform(20, 800)), text, fontsize=rng.uniform(4, 9))
    doc.save(path)
    doc.close()
    return path


def margins_only_pdf(path: Path) -> Path:
    """A page whose only text is a running header and a page number (a layout labels them header/footer)."""
    import pymupdf

    doc = pymupdf.open()
    for n in range(3):
        page = doc.new_page(width=595, height=842)
        page.insert_text((50, 30), "ACME Corporation — Annual Report 2026", fontsize=8)
        page.insert_text((290, 820), f"{n + 1}", fontsize=8)
    doc.save(path)
    doc.close()
    return path


def encrypted_pdf(source: Path, path: Path, method: str) -> Path:
    import pymupdf

    methods = {"rc4": pymupdf.PDF_ENCRYPT_RC4_128, "aes": pymupdf.PDF_ENCRYPT_AES_256}
    with pymupdf.open(source) as doc:
        doc.save(path, encryption=methods[method], user_pw=PASSWORD, owner_pw=PASSWORD + "-owner",
                 permissions=int(pymupdf.PDF_PERM_ACCESSIBILITY))
    return path


def broken_xref_pdf(source: Path, path: Path) -> Path:
    """The xref table's offsets scrambled and `startxref` pointing nowhere: MuPDF must repair it (or refuse)."""
    data = bytearray(source.read_bytes())
    at = data.rfind(b"startxref")
    if at >= 0:
        data[at + 10:at + 20] = b"99999999  "
    xref = data.find(b"xref")
    if xref >= 0:
        for k in range(xref + 30, min(len(data), xref + 400), 7):
            if 48 <= data[k] <= 57:
                data[k] = 48 + (data[k] - 47) % 10
    path.write_bytes(bytes(data))
    return path


def huge_png(path: Path, width: int = 30000, height: int = 30000) -> Path:
    """A small file whose header declares a huge image (a decompression bomb: ~110 MB of pixels as 1-bit)."""
    raw = zlib.compress(b"".join(b"\x00" + b"\x00" * ((width + 7) // 8) for _ in range(height)), 9)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b""))
    return path


def _image(path: Path, size: tuple[int, int], fmt: str) -> Path:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, "white")
    ImageDraw.Draw(img).text((10, 10), "Hostile input 42", fill="black")
    img.save(path, fmt)
    return path


def _truncations(data: bytes, count: int) -> list[int]:
    """Offsets spread over the file, the very start and end included."""
    n = len(data)
    picks = {0, 1, 8, n // 2, n - 1} | {int(n * (k + 0.5) / count) for k in range(count)}
    return sorted(p for p in picks if 0 <= p < n)


def _bit_flips(data: bytes, count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        b = bytearray(data)
        for _ in range(rng.choice((1, 4, 32))):
            k = rng.randrange(len(b))
            b[k] ^= 1 << rng.randrange(8)
        out.append(bytes(b))
    return out


def build_documents(folder: Path, quick: bool = True) -> list[tuple[Path, str]]:
    """Write the document corpus into `folder`; returns (path, description) pairs."""
    from app.core.document.sample_documents import make_sample_pdf

    folder.mkdir(parents=True, exist_ok=True)
    files: list[tuple[Path, str]] = []

    def add(name: str, data: bytes, what: str) -> None:
        (folder / name).write_bytes(data)
        files.append((folder / name, what))

    pdf = make_sample_pdf(folder / "good.pdf", pages=1)
    png = _image(folder / "good.png", (400, 120), "PNG")
    files += [(pdf, "a valid PDF"), (png, "a valid PNG")]
    pdf_bytes, png_bytes = pdf.read_bytes(), png.read_bytes()
    for offset in _truncations(pdf_bytes, 4 if quick else 24):
        add(f"trunc-{offset:07d}.pdf", pdf_bytes[:offset], f"the PDF cut at byte {offset}")
    for offset in _truncations(png_bytes, 2 if quick else 10):
        add(f"trunc-{offset:07d}.png", png_bytes[:offset], f"the PNG cut at byte {offset}")
    for n, data in enumerate(_bit_flips(pdf_bytes, 3 if quick else 24, seed=7)):
        add(f"flip-{n:02d}.pdf", data, "the PDF with flipped bits")
    for n, data in enumerate(_bit_flips(png_bytes, 2 if quick else 12, seed=8)):
        add(f"flip-{n:02d}.png", data, "the PNG with flipped bits")
    add("empty.pdf", b"", "a zero-size PDF")
    add("empty.png", b"", "a zero-size PNG")
    add("text.pdf", b"just some text, not a PDF\n" * 20, "text named .pdf")
    add("pdf-as.png", pdf_bytes, "a PDF named .png")
    files.append((huge_png(folder / "huge.png"), "a PNG declaring 30000 x 30000 pixels"))
    files.append((_image(folder / "tiny.png", (1, 1), "PNG"), "a 1 x 1 pixel image"))
    files.append((encrypted_pdf(pdf, folder / "rc4.pdf", "rc4"), "an RC4-encrypted PDF (no password given)"))
    files.append((encrypted_pdf(pdf, folder / "aes.pdf", "aes"), "an AES-256-encrypted PDF (no password given)"))
    files.append((broken_xref_pdf(pdf, folder / "xref.pdf"), "a PDF with a broken xref table"))
    files.append((margins_only_pdf(folder / "margins.pdf"), "pages of headers and footers only"))
    if not quick:
        files.append((_image(folder / "wide.png", (12000, 40), "PNG"), "a 12000 x 40 pixel strip"))
        files.append((_image(folder / "scan.tif", (800, 600), "TIFF"), "a TIFF"))
        files.append((graph_paper_pdf(folder / "graph.pdf"), "a page of ~18,600 vector lines over a grid image"))
    return files


def journal_shapes() -> list[tuple[str, str]]:
    """work.json texts a start must survive: the issue's five, and more of the same kind."""
    doc = {"path": "/nowhere/x.pdf", "blocks": []}
    block = {"region": {"id": "p1-r01", "page": 0, "box": [0, 0, 10, 10], "label": "text", "task": "text",
                        "order": 0}}
    shapes = {
        "no-path": {"version": 1, "clean": False, "state": {"documents": [{"nopath": 1}]}},
        "state-str": {"version": 1, "clean": False, "state": "x"},
        "documents-str": {"version": 1, "clean": False, "state": {"documents": "abc"}},
        "blocks-str": {"version": 1, "clean": False, "state": {"documents": [{**doc, "blocks": "garbage"}]}},
        "saved-at-str": {"version": 1, "clean": False, "saved_at": "yesterday", "state": {"documents": [doc]}},
        "box-short": {"version": 1, "clean": False, "state": {"documents": [{**doc, "blocks": [
            {**block, "region": {**block["region"], "box": [1, 2]}}]}]}},
        "page-negative": {"version": 1, "clean": False, "state": {"documents": [{**doc, "blocks": [
            {**block, "region": {**block["region"], "page": -3}}]}]}},
        "sizes-nan": {"version": 1, "clean": False, "state": {"documents": [{**doc, "page_sizes": [["NaN", 1]]}]}},
        "current-str": {"version": 1, "clean": False, "state": {"current": "first", "documents": [doc]}},
        "version-9": {"version": 9, "clean": False, "state": {"documents": [doc]}},
        "list": [1, 2, 3],
        "null": None,
        "region-null": {"version": 1, "clean": False, "state": {"documents": [{**doc, "blocks": [{"region": None}]}]}},
        "extra-str": {"version": 1, "clean": False, "state": {"documents": [{**doc, "blocks": [
            {**block, "region": {**block["region"], "extra": "zzz"}}]}]}},
    }
    out = [(name, json.dumps(value)) for name, value in shapes.items()]
    out += [("not-json", "{not json"), ("binary", "\x00\x01\x02garbage"), ("deep", "[" * 100000 + "]" * 100000),
            ("nan-number", '{"version": 1, "saved_at": NaN, "clean": false, "state": {"documents": []}}')]
    return out


def trace_shapes() -> list[tuple[str, str]]:
    """Trace files of the wrong shape (each must be refused with a message naming the line, never a crash)."""
    header = json.dumps({"type": "trace_header", "format": 1, "app": "scriptorium", "version": "0"})
    lines = {
        "event-list": [header, "[1, 2, 3]"],
        "unknown-type": [header, json.dumps({"type": "nope"})],
        "missing-field": [header, json.dumps({"type": "region_started", "region_id": "p1-r01"})],
        "wrong-type": [header, json.dumps({"type": "round_verified", "region_id": "r", "round_index": "one",
                                           "k": 1, "candidates": [], "verified": [], "new_tokens": [], "text": "",
                                           "draft_ms": 0, "verify_ms": 0, "cache_len": 0})],
        "regions-str": [header, json.dumps({"type": "layout_done", "page": 0, "regions": "abc"})],
        "format-str": [json.dumps({"type": "trace_header", "format": "new"})],
        "header-only-garbage": ["\x00\xff garbage", json.dumps({"type": "run_finished"})],
        "deep": ["[" * 50000 + "]" * 50000, json.dumps({"type": "run_finished"})],
    }
    return [(name, "\n".join(ls) + "\n") for name, ls in lines.items()]


SETTINGS_SHAPES = [
    ("binary", b"\x00\x01\x02\xff\xfe" * 200),
    ("latin1", "[General]\nengine=caf\xe9\n".encode("latin-1")),
    ("wrong-types", b"[General]\nrecent_files=@ByteArray(x)\ntheme=@Variant(\\0\\0\\0\\x7f)\nrender_dpi=abc\n"),
]
