"""ALTO XML (Library of Congress): ALTO 4.4 by default (eScriptorium, Transkribus), ALTO 2.1 for the viewers that
need it (Kitodo, the DFG-Viewer); both valid against the official schemas (tests/schemas, checked by the tests).

    <alto> Description (MeasurementUnit pixel, sourceImageInformation/fileName, OCRProcessing) · Tags · Layout
      Page (WIDTH/HEIGHT: the page in pixels at its DPI; PHYSICAL_IMG_NR: 1-based) → PrintSpace (the whole page) →
        TextBlock per text or formula region (TAGREFS: its layout label) → TextLine → String (a word; WC where the
        engine gave a word confidence) and SP between words;
        a table: ComposedBlock TYPE="table" holding a TextBlock of its rows; a picture: ComposedBlock
        TYPE="illustration" holding an Illustration.

Coordinates are whole pixels at the page's DPI (the JSON's `box`), top-left origin. Reading order is the order of
the blocks. A line or word whose box we estimated (not measured on the page) carries TAGREFS="GEOMETRY_ESTIMATED"
(an OtherTag saying so). Text is made XML-safe (control characters dropped); nothing else is changed.
A right-to-left block or line (Arabic, Hebrew) keeps its Strings in logical (reading) order, the first one the
rightmost, and says BASEDIRECTION="rtl" (ALTO 4.3 and later; ALTO 2.1 has no attribute for it).

What must never live here: file writing, the pipeline, Qt.
"""
from __future__ import annotations

from lxml import etree

from app.core.formats.geometry import Line
from app.core.formats.model import ExportBlock, ExportDocument, ExportPage, xml_text

NAMESPACES = {4: "http://www.loc.gov/standards/alto/ns-v4#", 2: "http://www.loc.gov/standards/alto/ns-v2#"}
SCHEMAS = {4: "http://www.loc.gov/standards/alto/v4/alto-4-4.xsd",
           2: "http://www.loc.gov/standards/alto/v2/alto-2-1.xsd"}
XSI = "http://www.w3.org/2001/XMLSchema-instance"
ESTIMATED = "GEOMETRY_ESTIMATED"
ALTO_VERSIONS = (4, 2)


def render_alto(doc: ExportDocument, version: int = 4, software_version: str = "") -> bytes:
    """The document as ALTO `version` (4 → 4.4, 2 → 2.1), UTF-8 bytes."""
    if version not in NAMESPACES:
        raise ValueError(f"ALTO version {version} is not written; choose 4 or 2")
    if not doc.pages:  # ALTO's Layout holds at least one Page
        raise OSError("ALTO needs at least one page, and none was read")
    ns = NAMESPACES[version]

    def el(parent, tag: str, **attrs):
        e = etree.SubElement(parent, f"{{{ns}}}{tag}") if parent is not None else etree.Element(
            f"{{{ns}}}{tag}", nsmap={None: ns, "xsi": XSI})
        for k, v in attrs.items():
            if v is not None:
                e.set(k, str(v))
        return e

    root = el(None, "alto")
    root.set(f"{{{XSI}}}schemaLocation", f"{ns} {SCHEMAS[version]}")
    desc = el(root, "Description")
    el(desc, "MeasurementUnit").text = "pixel"
    el(el(desc, "sourceImageInformation"), "fileName").text = xml_text(doc.file_name)
    step = el(el(desc, "OCRProcessing", ID="OCR_0"), "ocrProcessingStep")
    el(step, "processingStepSettings").text = xml_text(f"engine: {doc.engine}")
    sw = el(step, "processingSoftware")
    el(sw, "softwareName").text = "Scriptorium"
    if software_version:
        el(sw, "softwareVersion").text = software_version

    tag_ids = _tag_ids(sorted({b.label for b in doc.blocks()}))
    tags = el(root, "Tags")
    for label, tag_id in tag_ids.items():
        el(tags, "LayoutTag", ID=tag_id, LABEL=xml_text(label))
    el(tags, "OtherTag", ID=ESTIMATED, LABEL="estimated geometry",
       DESCRIPTION="box placed by Scriptorium (not measured on the page): a line as a band of its region, "
                   "or a word as its share of its line")
    layout = el(root, "Layout")
    for page in doc.pages:
        _page(el, layout, page, tag_ids, version)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _tag_ids(labels: list[str]) -> dict[str, str]:
    """Layout label → a unique XML ID naming it ("LABEL_doc_title")."""
    out: dict[str, str] = {}
    for label in labels:
        base = "LABEL_" + "".join(c if c.isascii() and (c.isalnum() or c in "_-.") else "_" for c in label)
        tag, k = base, 2
        while tag in out.values():
            tag, k = f"{base}_{k}", k + 1
        out[label] = tag
    return out


def _pos(page: ExportPage, box) -> dict[str, int]:
    x0, y0, x1, y1 = page.px(box)
    return {"HPOS": x0, "VPOS": y0, "WIDTH": x1 - x0, "HEIGHT": y1 - y0}


def _page(el, layout, page: ExportPage, tags: dict[str, str], version: int) -> None:
    n = page.index + 1
    p = el(layout, "Page", ID=f"page_{n}", PHYSICAL_IMG_NR=n, WIDTH=page.width_px, HEIGHT=page.height_px)
    space = el(p, "PrintSpace", HPOS=0, VPOS=0, WIDTH=page.width_px, HEIGHT=page.height_px)
    for block in page.blocks:
        if block.task == "picture":
            cb = el(space, "ComposedBlock", ID=f"{block.id}_c", TAGREFS=tags[block.label], TYPE="illustration",
                    **_pos(page, block.box_pt))
            el(cb, "Illustration", ID=block.id, TYPE=xml_text(block.label), **_pos(page, block.box_pt))
        elif block.task == "table":
            cb = el(space, "ComposedBlock", ID=f"{block.id}_c", TAGREFS=tags[block.label], TYPE="table",
                    **_pos(page, block.box_pt))
            _text_block(el, cb, page, block, tags[block.label], version)
        else:
            _text_block(el, space, page, block, tags[block.label], version)


def _text_block(el, parent, page: ExportPage, block: ExportBlock, tag: str, version: int) -> None:
    rtl = direction(version, block.rtl)
    tb = el(parent, "TextBlock", ID=block.id, TAGREFS=tag, **_pos(page, block.box_pt), BASEDIRECTION=rtl)
    for k, line in enumerate(block.geometry, 1):
        _text_line(el, tb, page, line, f"{block.id}_l{k}", direction(version, line.rtl))


def direction(version: int, rtl: bool) -> str | None:
    """BASEDIRECTION (ALTO 4.3 and later; 2.1 has no such attribute) of a right-to-left block or line."""
    return "rtl" if rtl and version >= 4 else None


def _text_line(el, tb, page: ExportPage, line: Line, lid: str, base: str | None) -> None:
    words = [w for w in line.words if xml_text(w.text).strip()]
    if not words:
        return
    tl = el(tb, "TextLine", ID=lid, TAGREFS=None if line.measured else ESTIMATED, **_pos(page, line.box),
            BASEDIRECTION=base)
    for k, w in enumerate(words, 1):
        if k > 1:  # the gap between this word and the one before it in reading order (to its right: RTL)
            before, here = page.px(words[k - 2].box), page.px(w.box)
            left, right = (here[2], before[0]) if line.rtl else (before[2], here[0])
            el(tl, "SP", HPOS=left, VPOS=here[1], WIDTH=max(0, right - left))
        el(tl, "String", ID=f"{lid}_w{k}", TAGREFS=None if w.measured else ESTIMATED,
           CONTENT="".join(xml_text(w.text).split()), WC=None if w.conf is None else f"{w.conf:.3f}",
           **_pos(page, w.box))
