"""DoclingDocument JSON (docling-core), the common currency of the RAG loaders (LangChain's DoclingLoader, LlamaIndex's
DoclingReader and node parser, Haystack's Docling converter), built with docling-core's own construction API and
checked by it (pydantic) before it is written.

Every item carries its provenance: the page (1-based) and its box in points, bottom-left origin as docling's own
converters write it, with the character span of its text. A document title → title, a section title → section
header, text → text (a page header or footer → furniture), formulas → formula items holding their LaTeX, tables →
table items (cells from the HTML, spans kept, header cells marked), pictures → picture items referring to their crop
(`NAME_images/…`, with its size and DPI) and a figure title next to a picture or table → its caption. The origin
names the source file and its hash. Text is made XML-safe like every other format (control characters dropped).

What must never live here: file writing, the pipeline, Qt.
"""
from __future__ import annotations

import hashlib
import json
import mimetypes
from pathlib import Path

from app.core.formats.model import ExportBlock, ExportDocument, ExportPage, table_grid, xml_text

CAPTION_LABELS = ("figure_title", "table_title", "chart_title")
FURNITURE = {"header": "page_header", "footer": "page_footer", "number": "page_footer"}


def render_docling(doc: ExportDocument) -> bytes:
    """The document as DoclingDocument JSON bytes (UTF-8)."""
    from docling_core.types.doc import DoclingDocument, Size

    dd = DoclingDocument(name=xml_text(Path(doc.source).stem) or "document")
    origin = _origin(doc.source)
    if origin is not None:
        dd.origin = origin
    for page in doc.pages:
        dd.add_page(page_no=page.index + 1, size=Size(width=page.width_pt, height=page.height_pt))
        captions = _captions(page.blocks)
        for block in page.blocks:
            if block.id in captions.values():
                continue  # written with the picture or table it captions
            _item(dd, page, block, next((b for b in page.blocks if b.id == captions.get(block.id)), None))
    data = dd.export_to_dict()
    DoclingDocument.model_validate(data)  # what we write is what docling-core reads back
    return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _origin(source: str):
    from docling_core.types.doc import DocumentOrigin

    path = Path(source)
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return DocumentOrigin(mimetype=mime, binary_hash=int.from_bytes(digest.digest()[:8], "big"), filename=path.name)


def _captions(blocks: list[ExportBlock]) -> dict[str, str]:
    """Picture or table id → the id of the figure title right after it (else right before it) in reading order."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for k, b in enumerate(blocks):
        if b.task not in ("picture", "table"):
            continue
        for j in (k + 1, k - 1):
            if 0 <= j < len(blocks) and blocks[j].label in CAPTION_LABELS and blocks[j].id not in used:
                out[b.id] = blocks[j].id
                used.add(blocks[j].id)
                break
    return out


def _prov(page: ExportPage, block: ExportBlock, text: str = ""):
    from docling_core.types.doc import BoundingBox, CoordOrigin, ProvenanceItem

    x0, y0, x1, y1 = block.box_pt
    h = page.height_pt
    box = BoundingBox(l=x0, t=h - y0, r=x1, b=h - y1, coord_origin=CoordOrigin.BOTTOMLEFT)
    return ProvenanceItem(page_no=page.index + 1, bbox=box, charspan=(0, len(text)))


def _text_of(block: ExportBlock) -> str:
    return xml_text(" ".join(block.lines)).strip()


def _item(dd, page: ExportPage, block: ExportBlock, caption: ExportBlock | None) -> None:
    from docling_core.types.doc import ContentLayer, DocItemLabel

    cap_item = None
    if caption is not None:
        text = _text_of(caption)
        cap_item = dd.add_text(label=DocItemLabel.CAPTION, text=text, prov=_prov(page, caption, text))
    if block.task == "picture":
        pic = dd.add_picture(caption=cap_item, prov=_prov(page, block), image=_image(block))
        _adopt(dd, pic, cap_item)
        return
    if block.task == "table":
        data = _table_data(block)
        if data is not None:
            table = dd.add_table(data=data, caption=cap_item, prov=_prov(page, block))
            _adopt(dd, table, cap_item)
            return
    text = _text_of(block)
    if not text:
        return
    prov = _prov(page, block, text)
    if block.task == "formula":
        dd.add_formula(text=xml_text(block.latex), orig=text, prov=prov)
    elif block.heading_level == 1:
        dd.add_title(text=text, prov=prov)
    elif block.heading_level == 2:
        dd.add_heading(text=text, level=1, prov=prov)
    elif block.label in FURNITURE:
        dd.add_text(label=DocItemLabel(FURNITURE[block.label]), text=text, prov=prov,
                    content_layer=ContentLayer.FURNITURE)
    elif block.label in CAPTION_LABELS:
        dd.add_text(label=DocItemLabel.CAPTION, text=text, prov=prov)
    elif block.label == "footnote":
        dd.add_text(label=DocItemLabel.FOOTNOTE, text=text, prov=prov)
    else:
        dd.add_text(label=DocItemLabel.TEXT, text=text, prov=prov)


def _adopt(dd, owner, caption) -> None:
    """Move a caption from the body into its picture or table (as docling's own converters nest it)."""
    if caption is None:
        return
    ref = caption.get_ref()
    dd.body.children = [c for c in dd.body.children if c.cref != ref.cref]
    caption.parent = owner.get_ref()
    owner.children.append(ref)


def _table_data(block: ExportBlock):
    from docling_core.types.doc import TableCell, TableData

    if "<table" not in block.markdown.lower():
        return None
    cells, n_rows, n_cols = table_grid(block.markdown)
    if not cells:
        return None
    return TableData(num_rows=n_rows, num_cols=n_cols, table_cells=[TableCell(
        text=c.text, row_span=c.rowspan, col_span=min(c.colspan, n_cols - c.col), start_row_offset_idx=c.row,
        end_row_offset_idx=c.row + c.rowspan, start_col_offset_idx=c.col,
        end_col_offset_idx=min(n_cols, c.col + c.colspan), column_header=c.header) for c in cells])


def _image(block: ExportBlock):
    """The crop as an ImageRef pointing at its file (None when it cannot be read back)."""
    from docling_core.types.doc import ImageRef, Size

    if not block.picture or not block.picture_ref:
        return None
    try:
        from PIL import Image

        with Image.open(block.picture) as im:
            im.verify()
        with Image.open(block.picture) as im:
            w, h = im.size
    except Exception:  # noqa: BLE001 - a crop that is gone or damaged: the picture item stays, without its image
        return None
    width_pt = max(1e-3, block.box_pt[2] - block.box_pt[0])
    return ImageRef(mimetype="image/png", dpi=max(1, round(w * 72.0 / width_pt)), size=Size(width=w, height=h),
                    uri=Path(block.picture_ref).as_posix())
