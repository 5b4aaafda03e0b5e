"""Assemble corpora/realdocs from local snapshots of the source repositories (run once: `python build.py OUT`,
with each repository fetched as a bare git directory under /work/.mirror/OWNER+NAME/repo). Not part of the app."""
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pymupdf
from PIL import Image

OUT = Path(sys.argv[1])
PAGES, REFS = OUT / "pages", OUT / "refs"
PAGES.mkdir(parents=True, exist_ok=True)
REFS.mkdir(parents=True, exist_ok=True)
M = "/work/.mirror"
REPOS = {
    "docling": ("docling-project/docling", "docling-project+docling", "MIT"),
    "tess": ("tesseract-ocr/test", "tesseract-ocr+test", "Apache-2.0 (UNLV/ISRI test pages)"),
    "ocrd": ("OCR-D/assets", "OCR-D+assets", "OCR-D test data; page images from the Deutsches Textarchiv (CC BY-SA 4.0)"),
    "rocr": ("RapidAI/RapidOCR", "RapidAI+RapidOCR", "Apache-2.0"),
    "rtab": ("RapidAI/RapidTable", "RapidAI+RapidTable", "Apache-2.0"),
    "rlay": ("RapidAI/RapidLayout", "RapidAI+RapidLayout", "Apache-2.0"),
    "pypdf": ("py-pdf/sample-files", "py-pdf+sample-files", "CC BY-SA 4.0"),
    "rpdf": ("RapidAI/RapidOCRPDF", "RapidAI+RapidOCRPDF", "Apache-2.0"),
    "htr": ("githubharald/HTRPipeline", "githubharald+HTRPipeline", "no licence file in the repository (sample page of its README); used for evaluation only"),
}


def git(key, *args):
    return subprocess.run(["git", "--git-dir", f"{M}/{REPOS[key][1]}/repo", *args], capture_output=True, check=True).stdout


def commit(key):
    return git(key, "rev-parse", "HEAD").decode().strip()


def blob(key, path):
    return git(key, "show", f"HEAD:{path}")


ENTRIES = []


def add(pid, file_bytes, ext, key, path, kind, script, features, ref_text, ref_how, page=0, note=""):
    f = PAGES / f"{pid}.{ext}"
    f.write_bytes(file_bytes)
    r = REFS / f"{pid}.md"
    r.write_text(ref_text.strip() + "\n", encoding="utf-8")
    repo, _, lic = REPOS[key]
    ENTRIES.append({"id": pid, "file": f"pages/{f.name}", "page": 0, "kind": kind, "script": script,
                    "features": features, "source": {"repo": repo, "path": path, "commit": commit(key),
                                                     "page": page},
                    "licence": lic, "reference": f"refs/{r.name}", "reference_made": ref_how, "note": note})


def pdf_page(data, index):
    src = pymupdf.open(stream=data, filetype="pdf")
    out = pymupdf.open()
    out.insert_pdf(src, from_page=index, to_page=index)
    return out.tobytes(garbage=3, deflate=True)


def png(im, mode=None):
    b = io.BytesIO()
    (im.convert(mode) if mode else im).save(b, "PNG", optimize=True)
    return b.getvalue()


def jpg(im, q=85):
    b = io.BytesIO()
    im.convert("RGB").save(b, "JPEG", quality=q, optimize=True)
    return b.getvalue()


# ---- docling ground truth (DoclingDocument JSON): one page's body items in reading order ----
def _table_md(t):
    cells = t["data"]["table_cells"]
    if not cells:
        return ""
    nr = max(c["end_row_offset_idx"] for c in cells)
    nc = max(c["end_col_offset_idx"] for c in cells)
    grid = [[""] * nc for _ in range(nr)]
    for c in cells:
        for r in range(c["start_row_offset_idx"], c["end_row_offset_idx"]):
            for k in range(c["start_col_offset_idx"], c["end_col_offset_idx"]):
                grid[r][k] = c["text"].replace("|", "/").replace("\n", " ")
    lines = ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * nc]
    lines += ["| " + " | ".join(row) + " |" for row in grid[1:]]
    return "\n".join(lines)


def docling_page(js, page_no):
    out = []

    def resolve(ref):
        _, kind, i = ref.split("/")
        return kind, js[kind][int(i)]

    def walk(ref):
        kind, item = resolve(ref)
        if item.get("content_layer", "body") != "body":
            return
        on_page = any(p["page_no"] == page_no for p in item.get("prov", []))
        if kind == "texts" and on_page:
            text = item["text"].strip()
            if item["label"] in ("section_header", "title"):
                text = "## " + text
            elif item["label"] == "formula":
                text = text or item.get("orig", "").strip()
                text = "$$" + text + "$$" if text else ""
            elif item["label"] == "list_item":
                text = "- " + text
            if text:
                out.append(text)
        elif kind == "tables" and on_page:
            for c in item.get("captions", []):
                pass
            out.append(_table_md(item))
        elif kind == "pictures":
            return  # text inside figures is not body text
        for ch in item.get("children", []):
            walk(ch["$ref"])

    for ch in js["body"]["children"]:
        walk(ch["$ref"])
    return "\n\n".join(out)


def docling_json(name):
    return json.loads(blob("docling", f"tests/data/pdf/groundtruth/{name}.json"))


DOCL = "reference from docling's own regression ground truth (tests/data/.../groundtruth, DoclingDocument JSON), body items of this page in its reading order, page headers/footers and text inside figures left out; checked against the page by eye"


def docling_pdf(pid, name, index, script, features, note=""):
    data = blob("docling", f"tests/data/pdf/sources/{name}.pdf")
    ref = docling_page(docling_json(name), index + 1)
    add(pid, pdf_page(data, index), "pdf", "docling", f"tests/data/pdf/sources/{name}.pdf", "born-digital",
        script, features, ref, DOCL, page=index, note=note)


docling_pdf("d01-table-paper", "2305.03393v1-pg9", 0, "latin", ["table", "columns"])
docling_pdf("d02-code-formula-1", "code_and_formula", 0, "latin", ["formula", "code"])
docling_pdf("d03-code-formula-2", "code_and_formula", 1, "latin", ["formula", "code"])
docling_pdf("d04-handbook", "amt_handbook_sample", 0, "latin", ["columns", "figure"])
docling_pdf("d05-report-p1", "normal_4pages", 0, "korean", [])
docling_pdf("d06-report-p2", "normal_4pages", 1, "korean", [])
docling_pdf("d07-picture-classification", "picture_classification", 0, "latin", ["figure"])
docling_pdf("d08-arabic-1", "right_to_left_01", 0, "arabic", ["rtl"])
docling_pdf("d09-arabic-2", "right_to_left_02", 0, "arabic", ["rtl"])
docling_pdf("d10-arabic-3", "right_to_left_03", 0, "arabic", ["rtl"])
docling_pdf("d11-wide-table", "table_mislabeled_as_picture", 0, "latin", ["table"])
docling_pdf("d12-multi-page-p1", "multi_page", 0, "latin", [])
docling_pdf("d13-redbook-table", "redp5110_sampled", 1, "latin", ["table"])

# ---- image of a two-column paper (docling's TIFF of 2206.01062: its frames are the paper's pages 1 and 3) and RapidLayout's page 7 image
# (s02 and s03: the paragraphs running over the page edges were then cut at the first and last visible words by hand) ----
tif = Image.open(io.BytesIO(blob("docling", "tests/data/tiff/sources/2206.01062.tif")))
dl = docling_json("2206.01062")
for k in range(tif.n_frames):
    tif.seek(k)
    add(f"s{k + 1:02d}-paper-image-p{k + 1}", png(tif.copy(), "L"), "png", "docling",
        "tests/data/tiff/sources/2206.01062.tif", "scan", "latin", ["columns"],
        docling_page(dl, (1, 3)[k]), DOCL.replace("this page", "the page (2206.01062.json, same paper)"), page=k,
        note="page image without text layer (rendered, not scanned)")
im = Image.open(io.BytesIO(blob("rlay", "tests/test_files/pp_doc_layoutv2_layout.jpg")))
add("s03-paper-image-p6", jpg(im, 90), "jpg", "rlay", "tests/test_files/pp_doc_layoutv2_layout.jpg", "scan", "latin",
    ["columns", "table"], docling_page(dl, 7),
    DOCL.replace("this page", "page 6 of the same paper (docling tests/data/pdf/groundtruth/2206.01062.json)"),
    note="page image of arXiv 2206.01062 page 6 (DocLayNet paper)")

# ---- tesseract UNLV scans with their ground truth ----
for pid, stem, feats in [("s04-unlv-8071", "8071_093.3B", ["columns"]), ("s05-unlv-8087", "8087_054.3B", []),
                         ("s06-eurotext", "eurotext", []), ("s07-phototest", "phototest", [])]:
    im = Image.open(io.BytesIO(blob("tess", f"testing/{stem}.tif")))
    ref = blob("tess", f"testing/{stem}.txt").decode("utf-8", "replace")
    add(pid, png(im, "1" if im.mode == "1" else "L"), "png", "tess", f"testing/{stem}.tif", "scan", "latin", feats,
        ref, "the source's ground truth (testing/%s.txt)" % stem)


# ---- OCR-D Kant pages (Fraktur) with PAGE-XML ground truth ----
def page_xml_text(xml):
    ns = {"p": re.match(r"\{(.*)\}", ET.fromstring(xml).tag).group(1)}
    root = ET.fromstring(xml)
    regions = {r.get("id"): r for r in root.iter(f"{{{ns['p']}}}TextRegion")}
    order = [x.get("regionRef") for x in sorted(root.iter(f"{{{ns['p']}}}RegionRefIndexed"),
                                                 key=lambda x: int(x.get("index")))]
    out = []
    for rid in order:
        reg = regions.get(rid)
        if reg is None:
            continue
        lines = []
        for ln in reg.findall("p:TextLine", ns):
            u = ln.find("p:TextEquiv/p:Unicode", ns)
            if u is not None and u.text:
                lines.append(u.text)
        if not lines:
            u = reg.find("p:TextEquiv/p:Unicode", ns)
            lines = [u.text] if u is not None and u.text else []
        if lines:
            out.append("\n".join(lines))
    return "\n\n".join(out)


for pid, n in [("s08-kant-17", "0017"), ("s09-kant-20", "0020")]:
    im = Image.open(io.BytesIO(blob("ocrd", f"data/kant_aufklaerung_1784/data/OCR-D-IMG/INPUT_{n}.tif")))
    ref = page_xml_text(blob("ocrd", f"data/kant_aufklaerung_1784/data/OCR-D-GT-PAGE/PAGE_{n}_PAGE.xml"))
    add(pid, jpg(im.convert("L"), 80), "jpg", "ocrd", f"data/kant_aufklaerung_1784/data/OCR-D-IMG/INPUT_{n}.tif",
        "scan", "latin", ["fraktur", "historical"], ref,
        "the source's ground truth (OCR-D-GT-PAGE PAGE-XML, line TextEquiv in the page's ReadingOrder)")

exec(open(Path(__file__).with_name("build_manual.py")).read())
Path(OUT / "_entries_auto.json").write_text(json.dumps(ENTRIES, ensure_ascii=False, indent=1), encoding="utf-8")
print(len(ENTRIES))
