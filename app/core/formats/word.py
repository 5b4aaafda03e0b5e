"""Word (DOCX, python-docx): the document as a person would go on editing it.

- a document title → Heading 1, a section title → Heading 2 (Word's own heading styles, so the navigation pane
  and a table of contents work); a figure or table title → Caption;
- text blocks → paragraphs (the Markdown's blank-line paragraphs; `- ` items as List Bullet; `**bold**`,
  `*italic*` and `` `code` `` as runs; inline `$…$` formulas kept as their LaTeX text);
- tables → real Word tables (Table Grid), merged cells where the HTML has colspan/rowspan, header cells bold; a table
  that is not HTML stays a paragraph;
- display formulas → Word equations (OMML), converted LaTeX → MathML (latex2mathml) → OMML (mathml-to-omml), with
  their number `(N)` after them; a formula the converters cannot read is written as its LaTeX source in a
  monospace run (readable, never an error);
- pictures → embedded at their size on the page (at most the text width); a crop that cannot be read back is a
  line in italics saying so;
- a page break between pages; the title, "Scriptorium" and the engine in the core properties;
- a paragraph, heading or table cell written right to left (Arabic, Hebrew) is a bidi paragraph (`w:bidi`)
  with its right-to-left runs marked `w:rtl`; its text stays in logical order.

Bytes are deterministic (no dates: the same document gives the same file).

What must never live here: file writing, the pipeline, Qt.
"""
from __future__ import annotations

import io
import re

from app.core.formats.model import ExportBlock, ExportDocument, deterministic_zip, table_grid, xml_text
from app.core.text.textcheck import RTL_SCRIPTS, right_to_left, script_of

MONOSPACE = "Consolas"
_INLINE = re.compile(r"(\*\*[^*\n]+\*\*|`[^`\n]+`|(?<![\w*])\*[^*\n]+\*(?![\w*])|(?<!\w)_[^_\n]+_(?!\w))")
_BULLET = re.compile(r"^[-*+] +")
OMML_NS = "http://schemas.openxmlformats.org/officeDocument/2006/math"


def render_docx(doc: ExportDocument) -> bytes:
    """The document as DOCX bytes."""
    from docx import Document
    from docx.enum.text import WD_BREAK

    word = Document()
    props = word.core_properties
    props.title = xml_text(doc.title)
    props.author = "Scriptorium"
    props.comments = xml_text(f"Read by Scriptorium with the {doc.engine} engine from {doc.file_name}")
    props.keywords = xml_text(f"engine={doc.engine}")
    props.last_modified_by = "Scriptorium"
    props.revision = 1
    _no_dates(props)
    width = _text_width(word)
    for k, page in enumerate(doc.pages):
        if k:
            word.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
        for block in page.blocks:
            _block(word, block, width)
    buf = io.BytesIO()
    word.save(buf)
    return deterministic_zip(buf.getvalue())


def _no_dates(props) -> None:
    """Leave the dates out (python-docx's template carries some): a fixed file for a fixed document."""
    el = props._element  # noqa: SLF001 - python-docx exposes no way to remove a property
    for child in list(el):
        if child.tag.endswith(("}created", "}modified", "}lastPrinted")):
            el.remove(child)


def _text_width(word) -> int:
    section = word.sections[0]
    return int(section.page_width - section.left_margin - section.right_margin)


def _block(word, block: ExportBlock, width: int) -> None:
    if block.task == "picture":
        _picture(word, block, width)
    elif block.task == "table":
        _table(word, block)
    elif block.task == "formula":
        _formula(word, block)
    else:
        _text(word, block)


def _text(word, block: ExportBlock) -> None:
    level = block.heading_level
    for para in re.split(r"\n\s*\n", block.markdown.strip()):
        para = para.strip()
        if not para:
            continue
        marks = re.match(r"^(#{1,6}) +", para)
        if level or marks:
            text = para[marks.end():] if marks else para
            _direct(word.add_heading(_plain(text), level=level or min(len(marks.group(1)), 9)), text)
            continue
        style = "Caption" if block.label in ("figure_title", "table_title", "chart_title") else None
        for item in _items(para):
            bullet = _BULLET.match(item)
            p = word.add_paragraph(style="List Bullet" if bullet else style)
            _runs(p, item[bullet.end():] if bullet else item)
            _direct(p, item)


def _items(para: str) -> list[str]:
    """A paragraph of list items → one item each; any other paragraph → itself, its line breaks as spaces."""
    lines = para.split("\n")
    if len(lines) > 1 and all(_BULLET.match(ln) for ln in lines):
        return lines
    return [" ".join(ln.strip() for ln in lines)]


# what follows w:bidi in a paragraph's properties (ECMA-376 CT_PPr's sequence): it goes before the first there
_AFTER_BIDI = ("w:adjustRightInd", "w:snapToGrid", "w:spacing", "w:ind", "w:contextualSpacing",
               "w:mirrorIndents", "w:suppressOverlap", "w:jc", "w:textDirection", "w:textAlignment",
               "w:textboxTightWrap", "w:outlineLvl", "w:divId", "w:cnfStyle", "w:rPr", "w:sectPr",
               "w:pPrChange")


def _direct(p, text: str) -> None:
    """A paragraph written right to left (most of its letters Arabic or Hebrew) is a bidi paragraph
    (`w:bidi`: Word lays it out from the right) and its runs of right-to-left letters are `w:rtl` runs; the
    text stays in logical order. python-docx has no paragraph API for it: the element goes where the schema
    puts it."""
    from docx.oxml import OxmlElement

    if not right_to_left(text):
        return
    p._p.get_or_add_pPr().insert_element_before(OxmlElement("w:bidi"), *_AFTER_BIDI)  # noqa: SLF001
    for run in p.runs:
        if any(script_of(ch) in RTL_SCRIPTS for ch in run.text):
            run.font.rtl = True


def _plain(text: str) -> str:
    return xml_text(re.sub(r"\*\*([^*]+)\*\*|`([^`]+)`", lambda m: m.group(1) or m.group(2), text))


def _runs(p, text: str) -> None:
    for part in _INLINE.split(xml_text(text)):
        if not part:
            continue
        if part.startswith("**") and part.endswith("**") and len(part) > 4:
            p.add_run(part[2:-2]).bold = True
        elif part.startswith("`") and part.endswith("`") and len(part) > 2:
            p.add_run(part[1:-1]).font.name = MONOSPACE
        elif part[:1] in "*_" and part[-1:] == part[:1] and len(part) > 2:
            p.add_run(part[1:-1]).italic = True
        else:
            p.add_run(part)


def _table(word, block: ExportBlock) -> None:
    cells, n_rows, n_cols = table_grid(block.markdown) if "<table" in block.markdown.lower() else ([], 0, 0)
    if not cells:
        _text(word, block)
        return
    table = word.add_table(rows=n_rows, cols=n_cols)
    table.style = "Table Grid"
    for c in cells:
        target = table.cell(c.row, c.col)
        if c.rowspan > 1 or c.colspan > 1:
            target = target.merge(table.cell(min(n_rows, c.row + c.rowspan) - 1, min(n_cols, c.col + c.colspan) - 1))
        lines = c.text.split("\n")
        para = target.paragraphs[0]
        for k, line in enumerate(lines):
            run = para.add_run(line)
            run.bold = c.header or None
            if k < len(lines) - 1:
                run.add_break()
        _direct(para, c.text)
    word.add_paragraph()  # Word needs a paragraph between two tables; it also keeps the next text apart


def _formula(word, block: ExportBlock) -> None:
    p = word.add_paragraph()
    omml = _omml(block.mathml) if block.mathml else None
    if omml is not None:
        math_para = _math_para(omml)
        p._p.append(math_para)  # noqa: SLF001 - python-docx has no equation API; OMML goes in the paragraph
    else:
        p.add_run(xml_text(block.latex)).font.name = MONOSPACE
    if block.tag:
        p.add_run(f"\t({xml_text(block.tag)})")


def _omml(mathml: str):
    """MathML → an `m:oMath` element, or None when the converter cannot take it."""
    from lxml import etree

    try:
        from math_ml2omml import convert

        fragment = convert(mathml)
        return etree.fromstring(f'<m:wrap xmlns:m="{OMML_NS}">{fragment}</m:wrap>')[0]
    except Exception:  # noqa: BLE001 - any failure: the LaTeX is written instead
        return None


def _math_para(omath):
    from lxml import etree

    para = etree.Element(f"{{{OMML_NS}}}oMathPara", nsmap={"m": OMML_NS})
    para.append(omath)
    return para


def _picture(word, block: ExportBlock, width: int) -> None:
    from docx.shared import Pt

    if block.picture:
        try:
            from PIL import Image

            with Image.open(block.picture) as im:
                im.verify()
            w = min(Pt(max(1.0, block.box_pt[2] - block.box_pt[0])), width)
            word.add_picture(block.picture, width=w)
            return
        except Exception:  # noqa: BLE001 - a crop that is gone or damaged: said in the document, never a crash
            pass
    p = word.add_paragraph()
    p.add_run(f"[picture {block.id}: its image could not be read]").italic = True
