"""A `DocumentOutput` as the format writers see it (app.core.formats.model.ExportDocument): each page's blocks in
reading order with the Markdown the export writes for them (a person's edit included), their plain lines (as the
searchable PDF holds them) and their lines and words placed by the one geometry model (app.core.formats.geometry;
a block taken from the PDF's text layer gets the layer's own lines and words, and a block whose engine reports only
text the lines found in its crop (app.core.pipeline.found_lines), both read from the source when it is at hand). Skipped regions are left out; a picture whose crop was not saved keeps its place without a file.

What must never live here: the formats themselves (app.core.formats), file writing (app.core.pipeline.output).
"""
from __future__ import annotations

from pathlib import Path
from app.core.formats.geometry import block_geometry
from app.core.formats.model import ExportBlock, ExportDocument, ExportPage, split_tag
from app.core.pipeline.assembly import assemble_blocks, formula_body
from app.core.pipeline.found_lines import found_lines
from app.core.pipeline.mathml import latex_to_mathml
from app.core.pipeline.quality import region_confidence
from app.core.pipeline.searchable_pdf import block_lines
from app.core.pipeline.text_source import TEXT_LAYER, text_source

EXPORTED_TASKS = ("text", "table", "formula", "picture")


def export_document(output, out_dir: Path | None = None, password: str | None = None) -> ExportDocument:
    """The writers' view of `output` (app.core.pipeline.output.DocumentOutput, which imports this module); picture
    paths (relative to `out_dir` in `output.pictures`) made absolute."""
    source = _open(output.path, password)
    try:
        title = (source.title if source is not None else "") or Path(output.path).stem
        doc = ExportDocument(output.path, title, output.engine)
        for page in output.pages:
            md = assemble_blocks(page.regions, output.pictures, output.edits)
            layer = _layer(source, page.index)
            ep = ExportPage(page.index, page.width_pt, page.height_pt, page.dpi, page.width_px, page.height_px)
            for r in sorted(page.regions, key=lambda r: r.order):
                if r.task not in EXPORTED_TASKS:
                    continue
                markdown = md.get(r.id, "")
                picture = output.pictures.get(r.id) if r.task == "picture" else None
                if r.task != "picture" and not markdown.strip():
                    continue
                lines = block_lines(markdown, r.task) if r.task != "picture" else []
                words = _words_in(layer, r.box_pt) if layer and text_source(r) == TEXT_LAYER else None
                seen = found_lines(source, r) if not words and lines else []
                conf = region_confidence(r)
                block = ExportBlock(
                    r.id, r.label, r.task, r.order, tuple(r.box_pt), markdown, lines, block_geometry(r, lines, words, seen),
                    str(Path(out_dir or ".") / picture) if picture else None, conf["mean"] if conf else None,
                    r.extra.get("engine", ""))
                block.picture_ref = picture
                if r.task == "formula":
                    block.latex, block.tag = split_tag(formula_body(markdown))
                    block.mathml = latex_to_mathml(block.latex, display=True)
                ep.blocks.append(block)
            doc.pages.append(ep)
        return doc
    finally:
        if source is not None:
            source.close()


def _open(path: str, password: str | None):
    from app.core.document import DocumentError, open_document

    if not Path(path).is_file():
        return None
    try:
        return open_document(path, password)
    except (DocumentError, OSError, RuntimeError, ValueError):
        return None  # the text layer's words are a refinement: without the source the lines are estimated


def _layer(source, index: int):
    if source is None:
        return None
    try:
        return source.text_layer(index)
    except (RuntimeError, ValueError, IndexError):
        return None


def _words_in(words, box) -> list:
    from app.core.text.textlayer import words_in_box

    return list(words_in_box(words, box))


class Renderers:
    """The app.core.formats writers of one output set, sharing one view of the output (made when the first of them
    runs, after the picture crops are saved): `table()` → format → a function giving its bytes."""

    def __init__(self, output, out_dir: Path, password: str | None, alto_version: int = 4) -> None:
        self.output, self.out_dir, self.password, self.alto_version = output, out_dir, password, alto_version
        self._view: ExportDocument | None = None

    def view(self) -> ExportDocument:
        if self._view is None:
            self._view = export_document(self.output, self.out_dir, self.password)
        return self._view

    def table(self) -> dict:
        return {"alto": self.alto, "hocr": self.hocr, "docx": self.docx, "xlsx": self.xlsx, "docling": self.docling}

    # each writer imported when its format is written: lxml, python-docx, openpyxl and docling-core load only for
    # the formats asked for (plain imports, so the bundle's analysis finds them)
    def alto(self) -> bytes:
        from app.core.formats.alto import render_alto

        return render_alto(self.view(), self.alto_version)

    def hocr(self) -> bytes:
        from app.core.formats.hocr import render_hocr

        return render_hocr(self.view())

    def docx(self) -> bytes:
        from app.core.formats.word import render_docx

        return render_docx(self.view())

    def xlsx(self) -> bytes:
        from app.core.formats.workbook import render_xlsx

        return render_xlsx(self.view())

    def docling(self) -> bytes:
        from app.core.formats.docling_json import render_docling

        return render_docling(self.view())
