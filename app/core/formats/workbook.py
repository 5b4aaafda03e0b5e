"""Excel (XLSX, openpyxl): the document's tables, one sheet each, named by page and region ("p1 r04"), in reading
order. Cells are placed as the HTML places them (colspan/rowspan → merged cells; a ragged row leaves its missing
cells empty). A cell that clearly holds a number ("1,204", "-3.5", "12%") is written as that number with a matching
number format (thousands separator, its decimals, percent); anything else ("007", "1.2.3", "Q1", dates) stays text.
The header (the leading rows of `<th>` cells, else the first row) is bold and frozen. A document without tables
gives one sheet saying so. Text is made XML-safe (control characters dropped). Bytes are deterministic (no dates).
A right-to-left table (Arabic, Hebrew) gets a sheet that runs from the right, its right-to-left cells reading
order 2 (right to left); their text stays in logical order.

What must never live here: file writing, the pipeline, Qt.
"""
from __future__ import annotations

import datetime as dt
import io
import re

from app.core.formats.model import Cell, ExportDocument, cell_number, deterministic_zip, table_grid, xml_text
from app.core.text.textcheck import right_to_left

EPOCH = dt.datetime(2000, 1, 1)  # the workbook's fixed created/modified date (openpyxl insists on one)
_PERCENT = re.compile(r"^\s*([+\-−]?\d+(?:\.\d+)?)\s*%\s*$")


def cell_value(text: str) -> tuple[object, str | None]:
    """What a table cell's text becomes in the sheet: (value, number format or None)."""
    m = _PERCENT.match(text)
    if m:
        number = cell_number(m.group(1))
        if number is not None:
            decimals = len(m.group(1).partition(".")[2])
            return round(number / 100, decimals + 2), "0" + ("." + "0" * decimals if decimals else "") + "%"
    number = cell_number(text)
    if number is None:
        return (text if text != "" else None), None
    decimals = len(text.strip().partition(".")[2])
    fmt = ("#,##0" if "," in text else "0") + ("." + "0" * decimals if decimals else "")
    return number, (fmt if fmt != "0" else None)


def sheet_name(page_index: int, block_id: str, taken: set[str]) -> str:
    """"p1 r04" from "p1-r04" (31 characters at most, none of []:*?/\\), unique in the workbook."""
    base = re.sub(r"[\[\]:*?/\\]", "_", block_id.replace("-", " "))[:28] or f"p{page_index + 1}"
    name, k = base, 2
    while name.lower() in taken:
        name, k = f"{base[:27]}-{k}", k + 1
    taken.add(name.lower())
    return name


def header_rows(cells: list[Cell], n_rows: int) -> int:
    """How many leading rows are the header: those whose cells are all `<th>`, else 1."""
    rows = 0
    for r in range(n_rows):
        row = [c for c in cells if c.row == r]
        if row and all(c.header for c in row):
            rows = r + 1
        else:
            break
    return rows or min(1, n_rows)


def render_xlsx(doc: ExportDocument) -> bytes:
    """The document's tables as XLSX bytes."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font
    from openpyxl.utils import get_column_letter

    wb = Workbook()
    wb.remove(wb.active)
    taken: set[str] = set()
    for page in doc.pages:
        for block in page.blocks:
            if block.task != "table" or "<table" not in block.markdown.lower():
                continue
            cells, n_rows, n_cols = table_grid(block.markdown)
            if not cells:
                continue
            ws = wb.create_sheet(sheet_name(page.index, block.id, taken))
            ws.sheet_view.rightToLeft = block.rtl or None  # an Arabic or Hebrew table runs from the right
            head = header_rows(cells, n_rows)
            for c in cells:
                value, fmt = cell_value(c.text)
                cell = ws.cell(row=c.row + 1, column=c.col + 1, value=value)
                if fmt:
                    cell.number_format = fmt
                align = dict(wrap_text=True, vertical="top") if "\n" in c.text else {}
                if right_to_left(c.text):  # reading order 2: right to left (the text stays in logical order)
                    align["readingOrder"] = 2
                if align:
                    cell.alignment = Alignment(**align)
                if c.row < head:
                    cell.font = Font(bold=True)
                if c.rowspan > 1 or c.colspan > 1:
                    ws.merge_cells(start_row=c.row + 1, start_column=c.col + 1,
                                   end_row=min(n_rows, c.row + c.rowspan), end_column=min(n_cols, c.col + c.colspan))
            ws.freeze_panes = ws.cell(row=head + 1, column=1)
            for col in range(1, n_cols + 1):
                width = max((len(str(ws.cell(row=r, column=col).value or "")) for r in range(1, n_rows + 1)),
                            default=8)
                ws.column_dimensions[get_column_letter(col)].width = min(60, max(8, width + 2))
    if not wb.worksheets:
        ws = wb.create_sheet("no tables")
        ws["A1"] = xml_text(f"{doc.file_name} has no tables")
    wb.properties.title = xml_text(doc.title)
    wb.properties.creator = "Scriptorium"
    wb.properties.created = wb.properties.modified = EPOCH
    from zipfile import ZIP_DEFLATED, ZipFile

    from openpyxl.writer.excel import ExcelWriter

    buf = io.BytesIO()
    with ZipFile(buf, "w", ZIP_DEFLATED) as archive:  # Workbook.save would stamp "modified" with the clock
        ExcelWriter(wb, archive).save()
    return deterministic_zip(buf.getvalue())
