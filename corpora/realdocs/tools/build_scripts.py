"""Add full pages in Greek, Cyrillic, Devanagari, Thai, Korean and Arabic/Persian script to corpora/realdocs
(run once: `python build_scripts.py REALDOCS`, each source repository fetched as a bare git directory under
/work/.mirror/OWNER+NAME/repo). Not part of the app; never anything the app imports.

Every page here is an image (kind `scan`), so that a converter has to read the script rather than copy a text
layer: a real scan with its source's own ground truth, or a born-digital page rendered to an image, its reference
the source's ground truth (docling's) or its text layer put in reading order (columns left to right, lines top
to bottom), with the layer's known encoding faults undone (named per source below). Pages `x…`; an entry with
the same id is replaced, so the script can be run again."""
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pymupdf
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
from build_tables import page_reference  # noqa: E402 - docling's ground truth of a page (one walker for all)

OUT = Path(sys.argv[1])
M = "/work/.mirror"
RENDER_DPI = 150


def git(repo, *args) -> bytes:
    gd = f"{M}/{repo.replace('/', '+')}/repo"
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True, check=True).stdout


def blob(repo, path, commit="HEAD") -> bytes:
    return git(repo, "show", f"{commit}:{path}")


def head(repo) -> str:
    return git(repo, "rev-parse", "HEAD").decode().strip()


def gray_png(im: Image.Image) -> bytes:
    b = io.BytesIO()
    im.convert("L").save(b, "PNG", optimize=True)
    return b.getvalue()


def render(page: pymupdf.Page, dpi: int = RENDER_DPI) -> bytes:
    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    return gray_png(Image.frombytes("L", (pix.width, pix.height), pix.samples))


# ---- a born-digital page's text layer in reading order ----
def _blocks(page, drop):
    out = []
    for x0, y0, x1, y1, text, _no, kind in page.get_text("blocks", sort=False):
        text = text.strip()
        if kind == 0 and text and not drop(x0, y0, x1, y1, text):
            out.append((x0, y0, x1, y1, text))
    return out


def column_order(page, drop=lambda *b: False) -> list[str]:
    """Blocks of a two-column page: full-width blocks cut the page into bands; in each band the left column's
    blocks top to bottom, then the right column's."""
    mid = page.rect.width / 2
    blocks = sorted(_blocks(page, drop), key=lambda b: b[1])
    full = [b for b in blocks if b[0] < mid - 20 and b[2] > mid + 20]
    out, cuts = [], [b[1] for b in full] + [page.rect.height + 1]
    top = -1.0
    for cut in cuts:
        band = [b for b in blocks if b not in full and top <= b[1] < cut]
        out += [b[4] for b in sorted(band, key=lambda b: (b[0] >= mid - 20, b[1]))]
        out += [b[4] for b in full if b[1] == cut]
        top = cut
    return out


def row_order(page, drop=lambda *b: False) -> list[str]:
    """A one-column page (with a small table): its text lines grouped into rows by height, rows top to bottom,
    the pieces of a row left to right."""
    pieces = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            text = "".join(s["text"] for s in line["spans"]).strip()
            x0, y0, x1, y1 = line["bbox"]
            if text and not drop(x0, y0, x1, y1, text):
                pieces.append(((y0 + y1) / 2, x0, text))
    rows: list[list] = []
    for yc, x0, text in sorted(pieces):
        if rows and abs(rows[-1][0][0] - yc) < 3:
            rows[-1].append((yc, x0, text))
        else:
            rows.append([(yc, x0, text)])
    return [" ".join(t for _y, _x, t in sorted(r, key=lambda p: p[1])) for r in rows]


def dehyphenate(text: str) -> str:
    return re.sub(r"(\w)-\n(?=\w)", r"\1", text)


# ---- per-source repairs of the text layer ----
_LATIN_AS_GREEK = str.maketrans("ABEHIKMNOPTXYZo", "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖο")


def greek_layer(text: str) -> str:
    """The Greek gazette's layer: Latin capitals drawn as Greek ones inside Greek words (`TΗΣ`,
    `Tυπογραφείο`) and U+2206 INCREMENT for Δ; the page shows Greek letters there."""
    text = text.replace("\u2206", "Δ")
    return re.sub(r"\S+", lambda m: m.group(0).translate(_LATIN_AS_GREEK)
                  if re.search("[\u0370-\u03ff\u1f00-\u1fff]", m.group(0)) else m.group(0), text)


_THAI_TONES = str.maketrans({chr(0xC9 + k): chr(0x0E48 + k) for k in range(5)})


def thai_layer(text: str) -> str:
    """The Thai budget volume's layer (InDesign export): the raised tone marks and thanthakhat were written
    as Latin-1 É Ê Ë Ì Í (0xC9-0xCD); they are U+0E48-U+0E4C in that order (ที่, ทั้ง, ธิ์ on the page)."""
    return text.translate(_THAI_TONES)


ENTRIES = []


def add(pid, png, script, features, ref, how, repo, path, commit, page, licence, note):
    (OUT / "pages" / f"{pid}.png").write_bytes(png)
    (OUT / "refs" / f"{pid}.md").write_text(ref.strip() + "\n", encoding="utf-8")
    ENTRIES.append({"id": pid, "file": f"pages/{pid}.png", "page": 0, "kind": "scan", "script": script,
                    "features": features,
                    "source": {"repo": repo, "path": path, "commit": commit, "page": page},
                    "licence": licence, "reference": f"refs/{pid}.md", "reference_made": how, "note": note})


# ---- Greek: the Government Gazette (ΦΕΚ Α' 20/2018, two columns) from eellak/gsoc2018-3gm's data set ----
FEK_REPO, FEK_COMMIT = "eellak/gsoc2018-3gm", "f038de1247eb2b54f8cd72b4cc230b945170d5fc"
FEK_PATH = "data/2018/ΦΕΚ_A_20_-_08.02.2018.pdf"
FEK_LICENCE = ("official text of the Hellenic Republic (Government Gazette), excluded from copyright by Law "
               "2121/1993 art. 2(5); from the repository's data set (GPL-3.0 code)")
FEK_HOW = ("the PDF's text layer in reading order (masthead, then per band the left column and the right), line-end "
           "hyphens joined, Latin look-alike capitals inside Greek words and U+2206 read as the Greek letters the "
           "page shows; the signature stamp, the ornament glyphs, page numbers and the running header/footer left "
           "out; checked against the rendered page")


def fek_drop(page_no):
    def drop(x0, y0, x1, y1, text):
        if re.search(r"Digitally signed|Signature Not", text) or re.fullmatch(r"[EΙ]|\d{3}", text):
            return True
        return page_no > 0 and (y1 < 75 or y0 > 775)  # the inner pages' running header and the printer's footer
    return drop


fek = pymupdf.open(stream=blob(FEK_REPO, FEK_PATH, FEK_COMMIT), filetype="pdf")
for k, pid in enumerate(("x01-greek-gazette-p1", "x02-greek-gazette-p2")):
    paras = [greek_layer(dehyphenate(t)) for t in column_order(fek[k], fek_drop(k))]
    add(pid, render(fek[k]), "greek", ["columns"], "\n\n".join(paras), FEK_HOW, FEK_REPO, FEK_PATH, FEK_COMMIT, k,
        FEK_LICENCE, f"born-digital gazette page {k + 1} rendered at {RENDER_DPI} dpi, grey (no text layer)")

# ---- Korean and Arabic/Persian: docling's test PDFs rendered, docling's ground truth as the reference ----
DOCLING = "docling-project/docling"
DOCL_HOW = ("docling's own regression ground truth of this page (tests/data/pdf/groundtruth, DoclingDocument JSON), "
            "body items in its reading order, page headers/footers and text inside figures left out; checked "
            "against the rendered page")
for pid, name, index, script, features in [
    ("x03-korean-report-p3", "normal_4pages", 2, "korean", ["columns"]),
    ("x04-korean-report-p4", "normal_4pages", 3, "korean", ["columns"]),
    ("x05-arabic-essay", "right_to_left_01", 0, "arabic", ["rtl"]),
    ("x06-persian-prospectus", "right_to_left_03", 0, "arabic", ["rtl"]),
]:
    src = f"tests/data/pdf/sources/{name}.pdf"
    doc = pymupdf.open(stream=blob(DOCLING, src), filetype="pdf")
    gt = json.loads(blob(DOCLING, f"tests/data/pdf/groundtruth/{name}.json"))
    add(pid, render(doc[index]), script, features, page_reference(gt, index + 1), DOCL_HOW, DOCLING, src,
        head(DOCLING), index, "MIT", f"born-digital page rendered at {RENDER_DPI} dpi, grey (no text layer)")

# right_to_left_02's text layer (and so docling's ground truth from it) is garbled by a broken ToUnicode map
# ("صوو  عييهاوخ" for "صوب أعينها"): this page's reference, and d09's (the same page as a PDF), are by hand
D09 = """وعليه، فإن الحكومة المصرية تضع صوب أعينها خلال المرحلة المقبلة تكليف السيد رئيس الجمهورية لها بالعمل على تحقيق عدد من الأهداف على رأسها: وضع ملف بناء الإنسان المصري على رأس قائمة الأولويات، خاصة في مجالات الصحة والتعليم، العمل على تحقيق معدلات نمو قوية ومستدامة وشاملة في أغلب القطاعات، وكذا الحفاظ على محددات الأمن القومي المصري في ضوء التحديات الإقليمية والدولية، ومواصلة جهود تطوير المشاركة السياسية، واستمرار متابعة ملفات الأمن والاستقرار ومكافحة الإرهاب ، تطوير ملفات الثقافة والوعي الوطني، والخطاب الديني المعتدل على النحو الذي يرسخ مفاهيم المواطنة والسلام المجتمعي.

ووفقًا لما سبق، يستهدف برنامج الحكومة المصرية خلال الفترة (٢٠٢٤ - ٢٠٢٦) تحقيق أربعة أهداف استراتيجية رئيسة، وهي على النحو الآتي:

بناء الإنسان المصري

بناء اقتصاد تنافسي

حماية الأمن القومي المصري

تحقيق الاستقرار السياسي

تجدر الإشارة إلى أنه قد تم تحديد مستهدفات البرنامج بالاستناد بشكل رئيس على مستهدفات رؤية مصر 2023، وتوصيات جلسات الحوار الوطني، ومستهدفات الوزارات، والبرنامج الوطني للإصلاحات الهيكلية، ومختلف الاستراتيجيات الوطنية."""
BYHAND = ("transcribed by hand from the rendered page (viewed enlarged), checked twice against it; the text layer "
          "is garbled (broken ToUnicode map), so docling's ground truth made from it is not used; kashida left out, "
          "the four arrow labels read right to left, the page number (dark on dark) left out")
src = "tests/data/pdf/sources/right_to_left_02.pdf"
add("x07-arabic-programme", render(pymupdf.open(stream=blob(DOCLING, src), filetype="pdf")[0]), "arabic", ["rtl"],
    D09, BYHAND, DOCLING, src, head(DOCLING), 0, "MIT",
    f"born-digital page rendered at {RENDER_DPI} dpi, grey (no text layer)")
(OUT / "refs" / "d09-arabic-2.md").write_text(D09 + "\n", encoding="utf-8")

# ---- Devanagari: scanned pages of a printed Sanskrit stotra book with their ground truth (Shreeshrii/imagessan,
# the set Tesseract's own Devanagari language tests use: tesseract-ocr/test langtests/deva_setup.sh) ----
IMS = "Shreeshrii/imagessan"
for k in (1, 2):
    im = Image.open(io.BytesIO(blob(IMS, f"shreelipi/p00{k}.png")))
    im = im.convert("L").resize((im.width // 2, im.height // 2), Image.LANCZOS)
    add(f"x{7 + k:02d}-sanskrit-stotra-p{k}", gray_png(im), "devanagari", [],
        blob(IMS, f"shreelipi/p00{k}-gt.txt").decode("utf-8"),
        f"the source's ground truth (shreelipi/p00{k}-gt.txt), checked against the image", IMS,
        f"shreelipi/p00{k}.png", head(IMS), 0,
        "no licence file in the repository (a test set published for OCR evaluation, used by Tesseract's "
        "langtests); used here for evaluation only — replace if the set is ever redistributed",
        "page scan downscaled from 400 to 200 dpi, grey")

# ---- Thai: a volume of the Thai budget bill documents (Bureau of the Budget, FY2565), two prose pages rendered ----
TH_REPO, TH_PATH = "kaogeek/thailand-budget-pdf2csv", "budget-pdf/31.pdf"
TH_HOW = ("the PDF's text layer, its lines in rows top to bottom (a row's pieces left to right), the raised tone "
          "marks the layer wrote as É-Í restored (U+0E48-U+0E4C); the small budget table kept row by row; "
          "checked against the rendered page")
th = pymupdf.open(stream=blob(TH_REPO, TH_PATH), filetype="pdf")
for pid, index in (("x10-thai-budget-farmers", 26), ("x11-thai-budget-royal", 74)):
    add(pid, render(th[index]), "thai", [], "\n".join(thai_layer(t) for t in row_order(th[index])), TH_HOW,
        TH_REPO, TH_PATH, head(TH_REPO), index,
        "official document of a Thai state agency, not subject to copyright (Thai Copyright Act B.E. 2537, s. 7)",
        f"born-digital page rendered at {RENDER_DPI} dpi, grey (no text layer)")

# ---- Cyrillic: a decree of the Government of the Russian Federation (No. 842 of 2013, a Word export), two pages of
# the Regulation it approves, from the documents folder of a dissertation template (removed there later) ----
RU_REPO, RU_COMMIT = "AndreyAkinshin/Russian-Phd-LaTeX-Dissertation-Template", "6b56b18b9bbf70748e9ef35edd1de4496ec9e8ed"
RU_PATH = "Documents/Government Decree 842.pdf"
RU_HOW = ("the PDF's text layer, its lines in rows top to bottom (a justified line's pieces joined left to right); "
          "the page number and the footer's document number left out; checked against the rendered page")
ru = pymupdf.open(stream=blob(RU_REPO, RU_PATH, RU_COMMIT), filetype="pdf")
for pid, index in (("x12-russian-decree-p5", 4), ("x13-russian-decree-p6", 5)):
    rows = row_order(ru[index], lambda x0, y0, x1, y1, text: y1 < 60 or y0 > 790)
    add(pid, render(ru[index]), "cyrillic", [], "\n".join(rows), RU_HOW, RU_REPO, RU_PATH, RU_COMMIT, index,
        "official document of the Government of the Russian Federation, not subject to copyright (Civil Code of "
        "the Russian Federation, art. 1259 p. 6)", f"born-digital page rendered at {RENDER_DPI} dpi, grey (no text layer)")

# ---- merge into the manifest (entries with these ids replaced) ----
manifest_path = OUT / "manifest.json"
manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
ids = {e["id"] for e in ENTRIES}
manifest["pages"] = [p for p in manifest["pages"] if p["id"] not in ids] + ENTRIES
for p in manifest["pages"]:
    if p["id"] == "d09-arabic-2":
        p["reference_made"] = BYHAND.replace("rendered page", "page")
manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
print(len(ENTRIES), "pages")
