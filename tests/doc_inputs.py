"""Generated test inputs for the document tests (bad files, images, encrypted PDFs). Cached per session."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path


def big_png(path: Path, w: int, h: int) -> Path:
    """A real, valid 1-bit PNG of w × h white pixels, written in streaming fashion (a few KB, no big buffers)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    comp = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * ((w + 7) // 8)
    body = b"".join(comp.compress(row) for _ in range(h)) + comp.flush()
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0))
                     + chunk(b"IDAT", body) + chunk(b"IEND", b""))
    return path


def zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF (with a correct xref table) whose page tree is empty."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def encrypted_pdf(src: Path, path: Path, password: str = "secret") -> Path:
    import pymupdf

    doc = pymupdf.open(str(src))
    doc.save(str(path), encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=password, owner_pw=password + "-owner")
    doc.close()
    return path


def text_image(text: str = "Hello 2026", size=(360, 90)):
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    try:
        font = ImageFont.load_default(size=36)
    except TypeError:  # old Pillow
        font = ImageFont.load_default()
    draw.text((14, 22), text, fill="black", font=font)
    return img
