"""Shared by the export tests: the vendored ALTO schemas (validated offline), documents read once by the classic
engine (the bundled sample, a scanned page), and small hand-made export views."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

SCHEMAS = Path(__file__).parent / "schemas"
ALTO_XSD = {4: "alto-4-4.xsd", 2: "alto-2-1.xsd"}
ALL = ("md", "json", "html", "docx", "xlsx", "alto", "hocr", "docling")


@lru_cache(maxsize=None)
def alto_schema(version: int):
    """The official ALTO schema, its XLink import pointed at the vendored copy (no network)."""
    from lxml import etree

    text = (SCHEMAS / ALTO_XSD[version]).read_bytes()
    text = text.replace(b"http://www.loc.gov/standards/xlink/xlink.xsd", b"xlink.xsd")
    return etree.XMLSchema(etree.fromstring(text, base_url=str(SCHEMAS.resolve()) + "/"))


def assert_valid_alto(data: bytes | Path, version: int):
    """Every ALTO file a test writes goes through here; returns the parsed tree."""
    from lxml import etree

    raw = data.read_bytes() if isinstance(data, Path) else data
    tree = etree.fromstring(raw)
    schema = alto_schema(version)
    assert schema.validate(tree), schema.error_log
    assert tree.nsmap[None].endswith(f"ns-v{version}#")
    return tree


def scanned_page(folder: Path) -> Path:
    """The sample's first page as a 200-dpi PNG: a scan, no text layer."""
    import pymupdf

    from app.core.base.paths import sample_document

    path = folder / "scan.png"
    with pymupdf.open(sample_document()) as doc:
        doc[0].get_pixmap(dpi=200).save(str(path))
    return path


def convert(path: Path, out_dir: Path, layout: str = "auto", formats=ALL, alto_version: int = 4):
    """Read `path` with the classic engine and write `formats`; returns (the output, the files by format)."""
    from app.core.pipeline import Pipeline, PipelineOptions

    options = PipelineOptions(engine="classic", layout=layout, formats=tuple(formats), alto_version=alto_version,
                              text_layer="prefer", layout_timeout=0)  # no budget: a busy machine lays out slowly
    pipe = Pipeline(options, lambda e: None)
    try:
        out = pipe.run(str(path))
        files = pipe.write(out_dir)
    finally:
        pipe.close()
    return out, files


def view(blocks, width_pt=300.0, height_pt=200.0, dpi=144.0, source="hand.pdf"):
    """A hand-made ExportDocument of one page: blocks as (task, label, box_pt, markdown)."""
    from app.core.formats.geometry import bands
    from app.core.formats.model import ExportBlock, ExportDocument, ExportPage
    from app.core.pipeline.searchable_pdf import block_lines

    s = dpi / 72.0
    page = ExportPage(0, width_pt, height_pt, dpi, round(width_pt * s), round(height_pt * s))
    for k, (task, label, box, md) in enumerate(blocks):
        lines = block_lines(md, task) if task != "picture" else []
        page.blocks.append(ExportBlock(f"p1-r{k + 1:02d}", label, task, k, box, md, lines, bands(box, lines)))
    return ExportDocument(source, "Hand made", "classic", [page])
