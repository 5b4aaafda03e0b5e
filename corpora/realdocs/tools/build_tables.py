"""Add the table pages of docling's regression set to corpora/realdocs (run once: `python build_tables.py REALDOCS`,
with docling-project/docling fetched as a bare git directory under /work/.mirror). Not part of the app.

Each page of a docling test PDF whose ground truth holds a body table (four cells or more) and that the set does not
have yet becomes `tNN-…`: the one-page PDF, and a reference of the page's body items in docling's reading order
with its tables as HTML (`<th>` for docling's column-header cells, rowspan/colspan from its cell offsets, an empty
`<td>` where docling's grid has an empty cell), so that TEDS compares structure. The pages already in the set from the same ground truth (d01, d11, d13) get their
references' tables rewritten the same way (they were Markdown grids with a spanning cell repeated)."""
import json
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pymupdf

OUT = Path(sys.argv[1])
GIT = "/work/.mirror/docling-project+docling/repo"
PTN_GIT = "/work/.mirror/ibm-aur-nlp+PubTabNet/repo"
PTN = 20  # PubTabNet's example tables taken (all 20 in examples/), in the order of its .jsonl
PTN_HOW = ("PubTabNet's own annotation (examples/PubTabNet_Examples.jsonl: structure tokens and cell tokens) written "
           "as HTML, its <thead> cells as <th>, bold/italic marks dropped")
PTN_LICENCE = ("annotations CDLA-Permissive-1.0 (IBM); the table images are from the PMC Open Access Subset, "
               "used under its terms of use")
REPO = "docling-project/docling"
HOW = ("reference from docling's own regression ground truth (tests/data/pdf/groundtruth, DoclingDocument JSON), "
       "body items of this page in its reading order, tables as HTML with docling's spans and column headers "
       "(and the empty cells of its grid, which its cell list leaves out), "
       "page headers/footers and text inside figures left out")
# (new id, source name, page number in the source (1-based), features)
NEW = [
# (the larger arXiv PDFs with tables, 2203.01017v2, 2206.01062, 2305.03393v1, are not in the snapshot: LFS-sized)
    ("t09-redbook-p8", "redp5110_sampled", 8, ["table"]),
    ("t10-redbook-p9", "redp5110_sampled", 9, ["table"]),
    ("t11-redbook-p11", "redp5110_sampled", 11, ["table"]),
    ("t12-redbook-p12", "redp5110_sampled", 12, ["table"]),
# (normal_4pages' page 2, its one table page, is d06 already)
]
REFRESH = {"d01-table-paper": ("2305.03393v1-pg9", 1), "d11-wide-table": ("table_mislabeled_as_picture", 1),
           "d13-redbook-table": ("redp5110_sampled", 2)}


def git(*args, repo=GIT) -> bytes:
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, check=True).stdout


def pubtabnet_html(ann) -> str:
    """PubTabNet's structure tokens with the cells' texts put in (its own examples/utils.py does the same); a
    spanning cell comes as "<td", ' colspan="2"', ">"."""
    cells, out, head = iter(ann["html"]["cells"]), [], False

    def text() -> str:
        return escape(re.sub(r"</?(b|i|sub|sup|underline|overline|strike)>", "", "".join(next(cells)["tokens"])))

    for tok in ann["html"]["structure"]["tokens"]:
        if tok in ("<thead>", "</thead>"):
            head = tok == "<thead>"
        elif tok in ("<tbody>", "</tbody>"):
            continue
        elif tok == "<td>":
            out.append(("<th>" if head else "<td>") + text())
        elif tok == "<td":
            out.append("<th" if head else "<td")
        elif tok == ">":
            out.append(">" + text())
        elif tok == "</td>":
            out.append("</th>" if head else "</td>")
        else:
            out.append(tok)
    return "<table>" + "".join(out).replace("<tr>", "\n<tr>") + "\n</table>"


def table_html(item) -> str:
    cells = item["data"]["table_cells"]
    if not cells:
        return ""
    rows: dict[int, list] = {}
    for c in sorted(cells, key=lambda c: (c["start_row_offset_idx"], c["start_col_offset_idx"])):
        rows.setdefault(c["start_row_offset_idx"], []).append(c)
    # docling's cell list leaves empty cells out (its grid has them): a grid position no cell covers is an empty
    # <td>, so a value stays under its column
    covered = {(r, k) for c in cells for r in range(c["start_row_offset_idx"], c["end_row_offset_idx"])
               for k in range(c["start_col_offset_idx"], c["end_col_offset_idx"])}
    width = max(item["data"].get("num_cols") or 0, max(c["end_col_offset_idx"] for c in cells))
    out = []
    for r in range(max(c["end_row_offset_idx"] for c in cells)):
        tds = []
        starts = {c["start_col_offset_idx"]: c for c in rows.get(r, [])}
        for k in range(width):
            c = starts.get(k)
            if c is None:
                if (r, k) not in covered:
                    tds.append("<td></td>")
                continue
            tag = "th" if c.get("column_header") else "td"
            rs = c["end_row_offset_idx"] - c["start_row_offset_idx"]
            cs = c["end_col_offset_idx"] - c["start_col_offset_idx"]
            attrs = (f' rowspan="{rs}"' if rs > 1 else "") + (f' colspan="{cs}"' if cs > 1 else "")
            tds.append(f"<{tag}{attrs}>{escape(' '.join(c['text'].split()))}</{tag}>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    return "<table>\n" + "\n".join(out) + "\n</table>"


def page_reference(js, page_no: int) -> str:
    out = []

    def walk(ref):
        _, kind, i = ref.split("/")
        item = js[kind][int(i)]
        if item.get("content_layer", "body") != "body" or kind == "pictures":
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
            out.append(table_html(item))
        for ch in item.get("children", []):
            walk(ch["$ref"])

    for ch in js["body"]["children"]:
        walk(ch["$ref"])
    return "\n\n".join(t for t in out if t)


def one_page(data: bytes, index: int) -> bytes:
    src = pymupdf.open(stream=data, filetype="pdf")
    out = pymupdf.open()
    out.insert_pdf(src, from_page=index, to_page=index)
    return out.tobytes(garbage=3, deflate=True)


def main() -> None:
    commit = git("rev-parse", "HEAD").decode().strip()
    manifest_path = OUT / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    have = {p["id"] for p in manifest["pages"]}
    truth = {}

    def gt(name):
        if name not in truth:
            truth[name] = json.loads(git("show", f"HEAD:tests/data/pdf/groundtruth/{name}.json"))
        return truth[name]

    for pid, name, page_no, features in NEW:
        src = f"tests/data/pdf/sources/{name}.pdf"
        (OUT / "pages" / f"{pid}.pdf").write_bytes(one_page(git("show", f"HEAD:{src}"), page_no - 1))
        (OUT / "refs" / f"{pid}.md").write_text(page_reference(gt(name), page_no) + "\n", encoding="utf-8")
        if pid in have:
            continue
        manifest["pages"].append({
            "id": pid, "file": f"pages/{pid}.pdf", "page": 0, "kind": "born-digital", "script": "latin",
            "features": features, "source": {"repo": REPO, "path": src, "commit": commit, "page": page_no - 1},
            "licence": "MIT", "reference": f"refs/{pid}.md", "reference_made": HOW, "note": ""})
    for pid, (name, page_no) in REFRESH.items():
        (OUT / "refs" / f"{pid}.md").write_text(page_reference(gt(name), page_no) + "\n", encoding="utf-8")
        for p in manifest["pages"]:
            if p["id"] == pid:
                p["reference_made"] = HOW
    lines = git("show", "HEAD:examples/PubTabNet_Examples.jsonl", repo=PTN_GIT).decode().splitlines()
    ptn_commit = git("rev-parse", "HEAD", repo=PTN_GIT).decode().strip()
    for n, line in enumerate(lines[:PTN], start=1):
        ann = json.loads(line)
        pid = f"p{n:02d}-pubtabnet-{ann['filename'].split('.')[0].lower()}"
        src = f"examples/{ann['filename']}"
        (OUT / "pages" / f"{pid}.png").write_bytes(git("show", f"HEAD:{src}", repo=PTN_GIT))
        (OUT / "refs" / f"{pid}.md").write_text(pubtabnet_html(ann) + "\n", encoding="utf-8")
        if pid not in have:
            manifest["pages"].append({
                "id": pid, "file": f"pages/{pid}.png", "page": 0, "kind": "scan", "script": "latin",
                "features": ["table"], "source": {"repo": "ibm-aur-nlp/PubTabNet", "path": src, "commit": ptn_commit,
                                                  "page": 0},
                "licence": PTN_LICENCE, "reference": f"refs/{pid}.md", "reference_made": PTN_HOW,
                "note": "a table image cut from a PMC article (PubTabNet's examples)"})
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
