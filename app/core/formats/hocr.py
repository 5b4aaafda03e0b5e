"""hOCR 1.2 (XHTML): one `ocr_page` per page (`bbox` in pixels at the page's DPI, `scan_res`, `ppageno`, the source
file as `image`), an `ocr_carea` per region in reading order, an `ocr_par` in it, an `ocr_line` per line and an
`ocrx_word` per word, each with its `bbox`; `x_wconf` (0-100) where the engine gave a word confidence. A picture
region is an `ocr_photo`, a table's area an `ocr_table` (its rows as lines). The meta names `ocr-system` and
`ocr-capabilities` say what the file holds. Where a box was estimated (app.core.formats.geometry) its title adds
`x_estimated 1` (a custom property, ignored by readers that do not know it); measured boxes carry none. A
right-to-left paragraph and line (Arabic, Hebrew) carry `dir="rtl"`; their words are in logical (reading)
order, the first word the rightmost.

Consumers: OCRmyPDF's hOCR-to-PDF transform (tested: the words land in their boxes), hocr-tools, the IIIF/hOCR
viewers. Text is made XML-safe (control characters dropped).

What must never live here: file writing, the pipeline, Qt.
"""
from __future__ import annotations

from lxml import etree

from app.core.formats.model import ExportBlock, ExportDocument, ExportPage, xml_text

XHTML = "http://www.w3.org/1999/xhtml"
CAPABILITIES = "ocr_page ocr_carea ocr_par ocr_line ocrx_word ocr_photo ocr_table"


def render_hocr(doc: ExportDocument, software_version: str = "") -> bytes:
    """The document as one hOCR file (all its pages), UTF-8 bytes."""
    def el(parent, tag: str, text: str | None = None, **attrs):
        e = etree.SubElement(parent, f"{{{XHTML}}}{tag}")
        for k, v in attrs.items():
            if v is not None:
                e.set(k.rstrip("_"), str(v))
        if text is not None:
            e.text = text
        return e

    html = etree.Element(f"{{{XHTML}}}html", nsmap={None: XHTML})
    html.set("{http://www.w3.org/XML/1998/namespace}lang", "en")
    head = el(html, "head")
    el(head, "title", xml_text(doc.title) or xml_text(doc.file_name))
    el(head, "meta", **{"http-equiv": "Content-Type", "content": "text/html; charset=utf-8"})
    el(head, "meta", name="ocr-system", content=f"Scriptorium {software_version}".strip())
    el(head, "meta", name="ocr-capabilities", content=CAPABILITIES)
    el(head, "meta", name="ocr-number-of-pages", content=str(len(doc.pages)))
    el(head, "meta", name="ocr-engine", content=xml_text(doc.engine))
    body = el(html, "body")
    for page in doc.pages:
        _page(el, body, doc, page)
    return etree.tostring(html, xml_declaration=True, encoding="UTF-8", pretty_print=True,
                          doctype='<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
                                  '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">')


def _bbox(page: ExportPage, box) -> str:
    return "bbox {} {} {} {}".format(*page.px(box))


def _page(el, body, doc: ExportDocument, page: ExportPage) -> None:
    n = page.index + 1
    dpi = round(page.dpi)
    name = xml_text(doc.file_name).replace('"', "'")
    div = el(body, "div", class_="ocr_page", id=f"page_{n}",
             title=f'image "{name}"; bbox 0 0 {page.width_px} {page.height_px}; ppageno {page.index}; '
                   f"scan_res {dpi} {dpi}")
    for block in page.blocks:
        _block(el, div, page, block)


def _block(el, div, page: ExportPage, block: ExportBlock) -> None:
    bbox = _bbox(page, block.box_pt)
    if block.task == "picture":
        el(div, "div", class_="ocr_photo", id=f"photo_{block.id}", title=bbox)
        return
    area = el(div, "div", class_="ocr_carea", id=f"block_{block.id}", title=bbox)
    if block.task == "table":
        area = el(area, "div", class_="ocr_table", id=f"table_{block.id}", title=bbox)
    # a right-to-left block and line say so (`dir`, as HTML does); their words stay in logical order
    par = el(area, "p", class_="ocr_par", id=f"par_{block.id}", title=bbox, dir="rtl" if block.rtl else None)
    for k, line in enumerate(block.geometry, 1):
        words = [w for w in line.words if "".join(xml_text(w.text).split())]
        if not words:
            continue
        lid = f"line_{block.id}_{k}"
        span = el(par, "span", class_="ocr_line", id=lid,
                  title=_bbox(page, line.box) + ("" if line.measured else "; x_estimated 1"),
                  dir="rtl" if line.rtl else None)
        for j, w in enumerate(words, 1):
            title = _bbox(page, w.box)
            if w.conf is not None:
                title += f"; x_wconf {round(100 * w.conf)}"
            if not w.measured:
                title += "; x_estimated 1"
            if j > 1:
                span[-1].tail = " "
            el(span, "span", "".join(xml_text(w.text).split()), class_="ocrx_word", id=f"word_{block.id}_{k}_{j}",
               title=title)
