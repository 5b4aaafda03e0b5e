"""What every writer of this package is given: `ExportDocument` → `ExportPage`s → `ExportBlock`s in reading order,
each block with its label and task, its box in page points, the Markdown the export writes for it (a person's edit
included), its plain-text lines, its placed lines and words (app.core.formats.geometry) and, for a picture, the
crop's file. Plus the rules every writer shares: text XML can hold (`xml_text`), HTML tables as grids (`Cell`,
`table_grid`) and numbers read from cells (`cell_number`).

What must never live here: the pipeline's types (app.core.pipeline builds these), file writing, Qt.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from app.core.formats.geometry import Line
from app.core.text.textcheck import right_to_left

_TAG = re.compile(r"\\tag\{([^{}]*)\}\s*$")

# XML 1.0 holds no C0 control character but tab, newline and carriage return, no lone surrogate, no U+FFFE/U+FFFF
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """`text` with the characters XML cannot hold removed (a control character the OCR produced, say)."""
    return _XML_ILLEGAL.sub("", text or "")


@dataclass
class ExportBlock:
    id: str
    label: str
    task: str  # text | table | formula | picture
    order: int
    box_pt: tuple[float, float, float, float]
    markdown: str  # as the Markdown export writes it
    lines: list[str] = field(default_factory=list)  # plain text, one per line (a table: one per row)
    geometry: list[Line] = field(default_factory=list)
    picture: str | None = None  # the crop's file (absolute), for a picture block whose crop was saved
    picture_ref: str | None = None  # the same file as the Markdown links it (relative to the output folder)
    confidence: float | None = None  # the block's mean token probability, where the engine reports one
    engine: str = ""
    latex: str = ""  # a formula's LaTeX (its number apart, in `tag`)
    tag: str = ""
    mathml: str | None = None  # the formula as MathML (None: the converter could not read it)

    @property
    def rtl(self) -> bool:
        """Is the block written right to left (most of its letters Arabic or Hebrew)? Its text stays in
        logical order; the writers mark the direction (DOCX bidi, hOCR and HTML dir, ALTO BASEDIRECTION)."""
        return right_to_left(" ".join(self.lines) or self.markdown)

    @property
    def heading_level(self) -> int:
        """1 for a document title, 2 for a section title, 0 for anything else."""
        return {"doc_title": 1, "paragraph_title": 2}.get(self.label, 0)


@dataclass
class ExportPage:
    index: int  # 0-based
    width_pt: float
    height_pt: float
    dpi: float  # pixel coordinates (ALTO, hOCR) are at this resolution
    width_px: int
    height_px: int
    blocks: list[ExportBlock] = field(default_factory=list)

    def px(self, box) -> tuple[int, int, int, int]:
        """A box in points → whole pixels at the page's DPI, inside the page."""
        s = self.dpi / 72.0
        x0, y0, x1, y1 = (round(v * s) for v in box)
        x0, x1 = max(0, min(x0, self.width_px)), max(0, min(x1, self.width_px))
        y0, y1 = max(0, min(y0, self.height_px)), max(0, min(y1, self.height_px))
        return x0, y0, max(x0, x1), max(y0, y1)


@dataclass
class ExportDocument:
    source: str  # the input file
    title: str
    engine: str
    pages: list[ExportPage] = field(default_factory=list)

    @property
    def file_name(self) -> str:
        return Path(self.source).name

    def blocks(self):
        for p in self.pages:
            yield from p.blocks


@dataclass
class Cell:
    row: int
    col: int
    text: str
    rowspan: int = 1
    colspan: int = 1
    header: bool = False


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[dict]] = []
        self.cell: dict | None = None
        self.in_head = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "thead":
            self.in_head += 1
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self.cell = {"text": [], "header": tag == "th" or self.in_head > 0,
                         "rowspan": _span(a.get("rowspan")), "colspan": _span(a.get("colspan"))}
            self.rows[-1].append(self.cell)
        elif tag == "br" and self.cell is not None:
            self.cell["text"].append("\n")

    def handle_endtag(self, tag):
        if tag == "thead":
            self.in_head = max(0, self.in_head - 1)
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"].append(data)


def _span(v) -> int:
    try:
        return max(1, min(1000, int(str(v).strip())))
    except (TypeError, ValueError):
        return 1


def table_grid(html: str) -> tuple[list[Cell], int, int]:
    """An HTML table → its cells placed on a grid (rowspan/colspan honoured, each cell at the first free column of
    its row), and the grid's rows and columns. Ragged rows leave the missing cells empty; a span running past the
    table is cut at its edge."""
    p = _TableParser()
    p.feed(html)
    p.close()
    taken: set[tuple[int, int]] = set()
    cells: list[Cell] = []
    n_rows = len(p.rows)
    for r, row in enumerate(p.rows):
        c = 0
        for raw in row:
            while (r, c) in taken:
                c += 1
            rs = min(raw["rowspan"], n_rows - r)
            cs = raw["colspan"]
            text = " ".join("".join(raw["text"]).replace("\n", " \n ").split(" ")).strip()
            text = re.sub(r"[ \t]+", " ", text).replace(" \n ", "\n").strip()
            cells.append(Cell(r, c, xml_text(text), rs, cs, raw["header"]))
            for dr in range(rs):
                for dc in range(cs):
                    taken.add((r + dr, c + dc))
            c += cs
    n_cols = max((c + 1 for _, c in taken), default=0)
    return cells, n_rows, n_cols


_NUMBER = re.compile(r"^[+\-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$")


def split_tag(latex: str) -> tuple[str, str]:
    """A formula's LaTeX without its trailing `\\tag{N}`, and N ("" when untagged)."""
    m = _TAG.search(latex)
    return (latex[:m.start()].rstrip(), m.group(1).strip()) if m else (latex.strip(), "")


def deterministic_zip(data: bytes) -> bytes:
    """An OOXML package (a zip) rewritten with every member dated 1980-01-01 and stored in name order within its
    original sequence ([Content_Types].xml first): the same document gives the same bytes (the window's export and
    `convert` alike)."""
    import io
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o600 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def cell_number(text: str) -> int | float | None:
    """The number a cell clearly holds ("1,234.5", "-7", "12.50"), or None (anything else stays text: "1.2.3",
    "12 %", "007", "3/4", dates). Leading zeros keep a code as text."""
    t = text.strip().replace("−", "-")
    if not _NUMBER.match(t) or re.match(r"^[+-]?0\d", t):
        return None
    t = t.replace(",", "")
    try:
        return float(t) if "." in t else int(t)
    except ValueError:
        return None
