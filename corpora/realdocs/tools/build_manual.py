# executed inside build.py: pages whose reference was made by hand or from a checked text layer
BYHAND = "transcribed by hand from the image (viewed enlarged), checked twice against it"

# ---- docling: the slide deck (PDF export of odf_presentation_01.odp); the reference from docling's .odp ground truth
SLIDE1 = """# Test Table Slide

With footnote

|  | Class1 |  |  | Class2 |  |  |
|---|---|---|---|---|---|---|
|  | A merged with B |  | C | A | B | C |
| R1 | True | False |  | False | True | True |
| R2 |  |  | True | False |  |  |
| R3 | False |  |  |  | False |  |
|  |  | True |  | True |  |  |
| R4 |  |  | False |  | False |  |
|  |  | True |  | True | False | False |
|  | True | False | True | False | True | False |"""
SLIDE2 = """# Second slide title

1. Let's introduce a list

- With foo
- Bar
- And baz things

A rectangle shape with this text inside."""
odp = blob("docling", "tests/data/odf/sources/odf_presentation_01.odp.pdf")
SLIDEHOW = ("from docling's ground truth of the slide deck's source (tests/data/odf/groundtruth/odf_presentation_01.odp.md, "
            "read from the .odp itself), this slide's part; list markers inside table cells removed")
add("d14-slide-table", pdf_page(odp, 0), "pdf", "docling", "tests/data/odf/sources/odf_presentation_01.odp.pdf",
    "born-digital", "latin", ["slide", "table"], SLIDE1, SLIDEHOW, page=0)
add("d15-slide-list", pdf_page(odp, 1), "pdf", "docling", "tests/data/odf/sources/odf_presentation_01.odp.pdf",
    "born-digital", "latin", ["slide"], SLIDE2, SLIDEHOW, page=1)

# ---- py-pdf sample-files: a LaTeX two-column page; reference = its text layer in content-stream order
mc = blob("pypdf", "026-latex-multicolumn/multicolumn.pdf")
doc = pymupdf.open(stream=mc, filetype="pdf")
paras = []
for b in doc[0].get_text("blocks", sort=False):
    t = b[4].strip()
    if not t:
        continue
    t = re.sub(r"-\n(?=[a-z])", "", t).replace("\n", " ").replace("ﬁ", "fi")
    if re.fullmatch(r"\d+", t):
        continue  # the page number
    paras.append(t)
add("d16-two-column-latex", pdf_page(mc, 0), "pdf", "pypdf", "026-latex-multicolumn/multicolumn.pdf", "born-digital",
    "latin", ["columns"], "\n\n".join(paras),
    "the page's text layer in content-stream order (LaTeX writes the left column, then the right), line-end "
    "hyphens joined, page number left out; read against the rendered page: columns in the right order", page=0)

# ---- docling's scanned one-liner (an image-only PDF, A4 at 600 dpi)
add("s10-scan-pdf-oneline", blob("docling", "tests/data/ocr/sources/ocr_test.pdf"), "pdf", "docling",
    "tests/data/ocr/sources/ocr_test.pdf", "scan", "latin", ["image-pdf"],
    "Docling bundles PDF document conversion to JSON and Markdown in an easy self contained package",
    "docling's ground truth for this file (tests/data/ocr/groundtruth/*/ocr_test.*.md, identical for all its OCR "
    "engines), checked against the image")

# ---- RapidTable's table image
TABLE = """| Methods | R | P | F | FPS |
|---|---|---|---|---|
| SegLink [26] | 70.0 | 86.0 | 77.0 | 8.9 |
| PixelLink [4] | 73.2 | 83.0 | 77.8 | - |
| TextSnake [18] | 73.9 | 83.2 | 78.3 | 1.1 |
| TextField [37] | 75.9 | 87.4 | 81.3 | 5.2 |
| MSR [38] | 76.7 | 87.4 | 81.7 | - |
| FTSN [3] | 77.1 | 87.6 | 82.0 | - |
| LSE [30] | 81.7 | 84.2 | 82.9 | - |
| CRAFT [2] | 78.2 | 88.2 | 82.9 | 8.6 |
| MCN [16] | 79 | 88 | 83 | - |
| ATRR [35] | 82.1 | 85.2 | 83.6 | - |
| PAN [34] | 83.8 | 84.4 | 84.1 | 30.2 |
| DB [12] | 79.2 | 91.5 | 84.9 | 32.0 |
| DRRG [41] | 82.30 | 88.05 | 85.08 | - |
| Ours (SynText) | 80.68 | 85.40 | 82.97 | 12.68 |
| Ours (MLT-17) | 84.54 | 86.62 | 85.57 | 12.31 |"""
add("s11-table-image", blob("rtab", "tests/test_files/table.jpg"), "jpg", "rtab", "tests/test_files/table.jpg", "scan",
    "latin", ["table"], TABLE, BYHAND)

# ---- a newspaper page (docling's old_newspaper.png, The Oakland Observer): its top band (headline, the four
# columns of the lead article's start, an advertisement box), cropped at full resolution
NEWS = """# French Institute Creates A French Community At OU

An NDEA French Institute opened its doors on OU's campus last week with the arrival of its 48 participants, eight experienced professors of French, and four graduate assistants and natives of France.

The participants in the Institute (14 men and 34 women, 10 of them nuns) are teachers of French in junior and senior high schools in Michigan and 14 other states. Director of the Institute is OU's assistant professor of

strengthen the teacher's knowledge and control of the language.

Last week marked the beginning of an intensive program in the French language, methods of teaching the language, and the culture of France. Faculty and Institute participants meet together in study sessions all morning and afternoon. Classes are conducted entirely in French, with the exception of courses in language analysis and method-

ology. A demonstration class of first year students of French at the high school and junior high school level is to be conducted by Pierre Simonian, the Institute's teacher in charge of demonstration and methodology.

The participants eat lunch and dinner together and speak, it is expected, nothing but French. After dinner, participants share extracurricular activities together--films, music, lectures. Often the arranged program of activi-

ties continues until seven or eight in the evening. When they return to the dormitory (all participants are housed in Anibal House this summer), they are encouraged to continue speaking nothing but French. They are bound together in a linguistic and cultural island, and their very isolation within the French language and their tightness as a community is meant to increase their facility with the language.

Arnold
Rexall
Pharmacy

Prescriptions
Cosmetics
Sundry Items
Liquor, Beer, Wine"""
news = Image.open(io.BytesIO(blob("docling", "tests/data/ocr/sources/old_newspaper.png"))).convert("L")
add("s12-newspaper", jpg(news.crop((70, 85, 1380, 393)), 85), "jpg", "docling", "tests/data/ocr/sources/old_newspaper.png",
    "scan", "latin", ["newspaper", "columns"], NEWS, BYHAND + "; line-end hyphens joined",
    note="crop (x 70-1380, y 85-393 px) of the page's top band")

# ---- handwriting (HTRPipeline's sample pages)
HW1 = """This is a handwritten text recognition pipeline that operates on scanned pages and applies the following operations:

Detect words
Read words"""
HW2 = """The doorman turned his attention to the next red-eyed emerger from the dark; and we went on together to the station, the children silent because of the cruelty of the world. Finally Catherine said, her eyes wet again: 'I think its all absolutely beastly, and I can't bear to think about it.' And Philip said: 'But we've got to think about it, don't you see, because if we don't it'll just go on and on, don't you see?'"""
add("s13-handwritten-note", blob("htr", "data/sample_1.png"), "png", "htr", "data/sample_1.png", "scan", "latin",
    ["handwriting"], HW1, BYHAND + " (the text is also the repository README's first sentence)")
hw2 = Image.open(io.BytesIO(blob("htr", "data/sample_2.png"))).convert("L")
add("s14-handwritten-page", png(hw2.resize((hw2.width // 2, hw2.height // 2))), "png", "htr", "data/sample_2.png",
    "scan", "latin", ["handwriting"], HW2, BYHAND, note="downscaled to half size")

# ---- Chinese: a two-column CDLA-style journal page with two tables (RapidLayout's test page)
ZH_PAGE = """1.3.2 基于深度学习的表格结构识别方法

在传统的表格结构识别算法基础之上，基于深度学习的表格结构识别算法可以分为：自底向上的方法、自顶向下的方法和图像文本生成的方法。其中，自底向上的方法主要特点是先进行表格单元格和文本块的检测，再进行单元格关系的分类；自顶向下的方法则先进行表格行列的分割，之后对单元格进行合并等操作；图像文本生成方法是指基于表格图像直接生成表格结构所对应的序列文本（HTML、Latex等）。

针对近年来的一些具有代表性的方法及代表性数据集（ICDAR2013, PubTabNet），其效果总结如表4、表5所示。由于此类方法所采用的评测标准各有不同，因此在备注一栏会进行具体阐述。

表 4 ICDAR2013 表格结构识别结果比较
Table 4 Comparison results of table structure recognition on icdar2013

| 方法 | 结果 | 备注 |
|---|---|---|
| Shigarov，2016 | 93.64 | F1 |
| Schreiber 等，2017（DeepDeSRT） | 91.44 | F1 |
| Siddiqui 等，2019（DeepTabStR，Deep learning based Table Structure Recognition） | 92.98 | F1 |
| Tensmeyer 等，2019 | 95.26 | F1 |
| Paliwal 等，2019（TableNet） | 91.51 | F1，在 Marmot 上训练 |
| Khan 等，2019 | 93.39 | F1 |
| Chi 等，2019（GraphTSR） | 87.2 | F1 |
| Xue 等，2019（Res2TIM） | 74.04 | F1 |
| Zheng 等，2020（GTE） | 93.5 | F1 |
| Raja 等，2020（tabstruct-net） | 90.6 | F1，在 SCITSR 上训练 |
| Qiao 等，2021（LGPMA，Local and Global Pyramid Mask Alignment） | 97.9 | F1，在 SCITSR 上训练 |
| Long 等，2021 | 98.0 | F1 |
| Li 等，2021 | 57.78/90.63 | Row/column Segmentation Accuracy |

表 5 PubTabNet 表格结构识别结果比较
Table 5 Comparison results of table structure recognition on PubTabNet

| 方法 | 结果 | 备注 |
|---|---|---|
| Zhong 等，2020（EDD，Encoder-Dual-Decoder） | 88.3 | TEDS |
| Raja 等，2020（tabstruct-net） | 90.1 | TEDS，在 SciTSR 上训练 |
| Qiao 等，2021（LGPMA） | 94.6 | TEDS |
| Li 等，2021 | 95.32/97.39 | Row/column Segmentation Accuracy |
| Ye 等，2021（TableMaster） | 96.84 | TEDS |

自底向上的，基于单元格检测和单元格关系分类的深度学习算法的基本框架如图1所示（Qasim等，2019），图中前半部分为单元格检测阶段，后半部分为单元格关系判断阶段。

图 1 自底向上的表格结构识别深度学习算法框架

Fig.1 The framework of bottom-up algorithm for table structure recognition

Prasad等人（2020）主要在前半部分的单元格检测阶段进行研究，提出了CascadeTabNet，一种基于级联掩模区域的CNN高分辨率网络，同时检测单元格和表格。在检测表格位置的同时，将表格分类为有线的表格和无线的表格。对于有线的表格直接使用常规的行列检测算法，并使用行列交点来确定单元格；对于无线的表格则使用检测到的单元格来预"""
add("s15-chinese-journal", blob("rlay", "tests/test_files/layout.jpg"), "jpg", "rlay", "tests/test_files/layout.jpg", "scan",
    "chinese", ["columns", "table"], ZH_PAGE, BYHAND + "; text inside the figure left out")

ZH_POSTER = """正品促销
大桶装 更划算
强力去污 符合国标
-40°C深度防冻不结冰
日常价￥10.0起
直击底价
日常价￥10.0起
券后价￥5.8起
惊喜福利 不容错过
极速发货
冰点标准
破损就赔
假一赔十"""
add("s16-chinese-poster", blob("rocr", "python/tests/test_files/ch_en_num.jpg"), "jpg", "rocr",
    "python/tests/test_files/ch_en_num.jpg", "scan", "chinese", ["poster"], ZH_POSTER,
    BYHAND + "; the first line is also the source's test expectation (test_det_cls_rec.py)")
add("s17-chinese-vertical", jpg(Image.open(io.BytesIO(blob("rocr", "python/tests/test_files/text_vertical_words.png"))), 85),
    "jpg", "rocr", "python/tests/test_files/text_vertical_words.png", "scan", "chinese", ["vertical", "historical"],
    "有評是是非非之士師也\n是非不得問之人要取之\n已取之時不參一人見而",
    BYHAND + "; columns read right to left; the last glyph (而) is partly cut off")
add("s18-chinese-doc-snippet", blob("rocr", "python/tests/test_files/ch_doc_server.png"), "png", "rocr",
    "python/tests/test_files/ch_doc_server.png", "scan", "chinese", ["snippet"], "嫖娼",
    "the source's test expectation (test_rec_language.py), checked against the image")

# ---- other scripts: the RapidOCR language test images (screenshots / photos of short texts)
JA = """【素敵な四季を探す旅】 春分
農村の学校で、伝統演劇の特別クラス　浙江省
週間時事用語（政府間覚書、マイクロドラマ、脳型知能など）
三星堆の文化財レプリカが大阪・関西万博で展示へ
中国テイストのストリートダンスでダンスバトルを盛り上げる..."""
for pid, name, script, ref, how in [
    ("s19-japanese-list", "japan.jpg", "japanese", JA, BYHAND),
    ("s20-korean-headline", "korean.jpg", "korean", "베이징 차오양, 디지털 기술로 농업 새로운 발전 이끌어",
     BYHAND + "; its start is the source's test expectation"),
    ("s21-russian-line", "eslav.jpg", "cyrillic", "Славянские языки — большая языковая семья.",
     "the source's test expectation (test_rec_language.py), checked against the image"),
    ("s22-serbian-line", "cyrillic.png", "cyrillic", "Време је лепо данас.", BYHAND),
    ("s23-greek-line", "el_rec.jpg", "greek", "Ωραίος καιρός σήμερα.",
     "the source's test expectation (test_rec_language.py), checked against the image"),
    ("s24-persian-line", "arabic.png", "arabic", "امروز هوا خوبه.",
     "the source's test expectation (test_rec_language.py) plus the final full stop seen in the image"),
    ("s25-marathi-snippet", "devanagari.jpg", "devanagari",
     "मराठी कथा\nसर्व मराठी कथा वाचा\nमराठी चारोळी\nसर्व मराठी चारोळी वाचा", BYHAND),
    ("s26-thai-line", "th_rec.jpg", "thai", "การแพทย์แผนจีนช่วยให้เด็กสมองพิการในคาซัคสถานกลับมาเดินได้",
     "the source's test expectation (test_rec_language.py), checked against the image"),
]:
    data = blob("rocr", f"python/tests/test_files/{name}")
    ext = name.rsplit(".", 1)[1]
    feats = ["snippet"] if pid not in ("s19-japanese-list",) else ["list"]
    add(pid, data, ext, "rocr", f"python/tests/test_files/{name}", "scan", script, feats, ref, how)
