"""Unlimited-OCR's raw output → regions, the same structure the layout + region-OCR pipeline produces.

The model writes `<PAGE>` before every page (multi-page runs), then blocks `<|det|>label [x1, y1, x2, y2]<|/det|>text`
with boxes normalised to 0..999 (pixel = v / 999 · size). Real outputs are not always well formed: a generation cut
by the token budget or by Cancel ends inside a tag, a box may have lost a number, text may precede the first tag, a
page may lack its `<PAGE>`, and the legacy DeepSeek form `<|ref|>label<|/ref|><|det|>[[x1, y1, x2, y2]]<|/det|>` may
appear. The parser never drops text: a block it had to repair keeps its text and gets the flag "malformed" (and a
reason in `extra["malformed"]`).

Labels are mapped onto the layout vocabulary (title → doc_title/paragraph_title, equation → formula, ...) so review,
assembly and export treat both engines alike; the model's own label stays in `extra["native_label"]`.

What must never live here: torch, tokenizers, anything that decodes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from app.core.document.regions import Region
from app.core.base.wording import count

PAGE_MARK = "<PAGE>"
DET_OPEN = "<|det|>"
DET_CLOSE = "<|/det|>"
REF_OPEN = "<|ref|>"
REF_CLOSE = "<|/ref|>"
# Strings a decode with skip_special_tokens=False may leave around the text.
NOISE_TOKENS = ("<｜end▁of▁sentence｜>", "<｜begin▁of▁sentence｜>", "<｜▁pad▁｜>", "<|grounding|>")
_NOISE_RE = re.compile("|".join(re.escape(t) for t in NOISE_TOKENS))

# Unlimited-OCR (DeepSeek-OCR family) labels → the layout vocabulary (PP-DocLayoutV3 names: docs/architecture.md,
# Labels, tasks and prompts).
LABEL_ALIASES = {
    "text": "text", "paragraph": "text", "list": "text", "list_item": "text", "plain_text": "text",
    "title": "paragraph_title", "sub_title": "paragraph_title", "subtitle": "paragraph_title",
    "section_title": "paragraph_title", "paragraph_title": "paragraph_title", "doc_title": "doc_title",
    "table": "table", "table_body": "table",
    "image": "image", "figure": "image", "picture": "image", "chart": "chart", "seal": "seal",
    "equation": "formula", "formula": "formula", "interline_equation": "formula", "display_formula": "formula",
    "inline_formula": "formula", "isolate_formula": "formula", "formula_number": "formula_number",
    "caption": "figure_title", "image_caption": "figure_title", "figure_caption": "figure_title",
    "table_caption": "figure_title", "figure_title": "figure_title", "table_footnote": "vision_footnote",
    "image_footnote": "vision_footnote",
    "header": "header", "page_header": "header", "footer": "footer", "page_footer": "footer",
    "footnote": "footnote", "page_number": "number", "number": "number",
    "reference": "reference_content", "references": "reference_content", "abstract": "abstract",
    "code": "algorithm", "algorithm": "algorithm", "aside_text": "aside_text", "content": "content",
}


def task_for_label(label: str, keep_headers: bool = False) -> str:
    """The task a layout label routes to (text | table | formula | picture | skipped): the pipeline's own table."""
    from app.core.document.regions import route

    return route(label, keep_headers=keep_headers)


@dataclass
class ParsedBlock:
    """One `<|det|>` block as written by the model: page index, native label, box in 0..999 (None when the model
    gave none), its text, and why it was repaired (empty when well formed)."""

    page: int
    label: str
    box: tuple[int, int, int, int] | None
    text: str
    problems: list[str] = field(default_factory=list)
    # offsets in the raw output text (special strings kept) as the model wrote it: the whole block (its tag
    # included) and the block's text (what `text.strip()` is cut from); None when parsed without positions
    span: tuple[int, int] | None = None
    text_span: tuple[int, int] | None = None

    @property
    def malformed(self) -> bool:
        return bool(self.problems)


@dataclass
class ParsedOutput:
    blocks: list[ParsedBlock]
    pages_seen: int  # number of page segments the text had
    problems: list[str] = field(default_factory=list)  # document-level repairs (missing/extra <PAGE>)


def clean_raw(text: str) -> str:
    """The text with end-of-sequence and other stray special strings removed (the model's EOS ends a run)."""
    eos = "<｜end▁of▁sentence｜>"
    if eos in text:
        text = text[: text.index(eos)]
    for tok in NOISE_TOKENS:
        text = text.replace(tok, "")
    return text


def _clean_positions(text: str) -> tuple[str, list[int]]:
    """`clean_raw(text)` and, for each of its characters (plus one past the end), its offset in `text`."""
    eos = "<｜end▁of▁sentence｜>"
    if eos in text:
        text = text[: text.index(eos)]
    out: list[str] = []
    pos: list[int] = []
    last = 0
    for m in _NOISE_RE.finditer(text):
        out.append(text[last:m.start()])
        pos.extend(range(last, m.start()))
        last = m.end()
    out.append(text[last:])
    pos.extend(range(last, len(text)))
    pos.append(len(text))
    return "".join(out), pos


def _page_pieces(text: str, n_pages: int) -> tuple[list[list[tuple[int, int]]], list[str]]:
    """For each of `n_pages` pages, the (start, end) pieces of `text` that make its segment (see `split_pages`)."""
    problems: list[str] = []
    n_pages = max(1, n_pages)
    parts: list[tuple[int, int]] = []
    pos = 0
    while True:
        j = text.find(PAGE_MARK, pos)
        if j < 0:
            parts.append((pos, len(text)))
            break
        parts.append((pos, j))
        pos = j + len(PAGE_MARK)
    head, segments = parts[0], [[p] for p in parts[1:]]
    if not segments:  # no marker at all: single-page output, or a multi-page run that forgot them
        if n_pages > 1 and text[head[0]:head[1]].strip():
            problems.append("no <PAGE> marker in a multi-page output; all blocks assigned to page 1")
        segments = [[head]]
    elif text[head[0]:head[1]].strip():
        if len(segments) < n_pages:  # most likely the first page's marker is missing
            problems.append("the first page has no <PAGE> marker")
            segments = [[head]] + segments
        else:
            problems.append("text before the first <PAGE> assigned to page 1")
            segments[0] = [head] + segments[0]
    if len(segments) > n_pages:
        problems.append(f"{count(len(segments), '<PAGE> segment')} for {count(n_pages, 'page')}; the extra ones go to the last page")
        segments = segments[: n_pages - 1] + [[p for seg in segments[n_pages - 1:] for p in seg]]
    return segments + [[] for _ in range(n_pages - len(segments))], problems


def split_pages(text: str, n_pages: int) -> tuple[list[str], list[str]]:
    """Page segments for `n_pages` pages and the repairs made. Text before the first `<PAGE>` is the first page when
    the markers then fit the page count (its marker was lost), else it joins the first page; segments beyond the
    last page are appended to it; pages the output never reached get ""."""
    pieces, problems = _page_pieces(text, n_pages)
    return ["".join(text[a:b] for a, b in page) for page in pieces], problems


_LABEL_RE = re.compile(r"\s*([A-Za-z_][\w-]*)?")
_NUM_RE = re.compile(r"-?\d+")


def _parse_header(header: str) -> tuple[str, tuple[int, int, int, int] | None, list[str], str]:
    """Label, box and problems from the text between `<|det|>` and `<|/det|>` (legacy `[[...]]` accepted).
    Also returns what follows the box when the header was not closed (that is content)."""
    problems: list[str] = []
    m = _LABEL_RE.match(header)
    label = (m.group(1) or "").strip() if m else ""
    rest = header[m.end():] if m else header
    box = None
    lb = rest.find("[")
    if lb >= 0 and not rest[:lb].strip():
        rb = rest.find("]", lb)
        inner = rest[lb:rb + 1] if rb >= 0 else rest[lb:]
        tail = rest[rb + 1:] if rb >= 0 else ""
        if inner.startswith("[[") and rest[rb + 1:rb + 2] == "]":
            tail = rest[rb + 2:]
        nums = [int(v) for v in _NUM_RE.findall(inner)]
        if rb < 0:
            problems.append("unclosed box")
        if len(nums) >= 4:
            box = tuple(nums[:4])  # type: ignore[assignment]
            if len(nums) > 4:
                problems.append("extra numbers in box")
        else:
            problems.append(f"box with {len(nums)} numbers")
        rest = tail
    else:
        problems.append("no box")
    if not label:
        problems.append("no label")
    return label or "text", box, problems, rest


_LEGACY_RE = re.compile(
    re.escape(REF_OPEN) + r"\s*([A-Za-z_][\w-]*)\s*" + re.escape(REF_CLOSE) + r"\s*" + re.escape(DET_OPEN))


def _legacy_to_det(segment: str, pos: list[int]) -> tuple[str, list[int]]:
    """The legacy form `<|ref|>label<|/ref|><|det|>` rewritten as `<|det|>label `, positions carried along (the
    rewritten tag's characters all point at the `<|ref|>` that began the block)."""
    out: list[str] = []
    opos: list[int] = []
    last = 0
    for m in _LEGACY_RE.finditer(segment):
        out.append(segment[last:m.start()])
        opos.extend(pos[last:m.start()])
        rep = DET_OPEN + m.group(1) + " "
        out.append(rep)
        opos.extend([pos[m.start()]] * len(rep))
        last = m.end()
    out.append(segment[last:])
    opos.extend(pos[last:])
    return "".join(out), opos


def _parse_page(segment: str, page: int, pos: list[int] | None = None) -> list[ParsedBlock]:
    """The blocks of one page segment. `pos[i]` is the raw-output offset of `segment[i]` (one entry past the end
    too); without it offsets are the segment's own."""
    if pos is None:
        pos = list(range(len(segment) + 1))
    # The legacy form names the label in <|ref|>…<|/ref|> right before <|det|>[[…]]<|/det|>.
    segment, pos = _legacy_to_det(segment, pos)

    def end_of(i: int) -> int:  # raw offset just after segment[:i] (removed noise strings after it stay out)
        return pos[i - 1] + 1 if i > 0 else pos[0]

    def spans(start: int, end: int, raw: str, text: str) -> tuple[tuple[int, int], tuple[int, int]]:
        """Raw offsets of segment[start:end] and of `text` (stripped) inside it: the text's own slice when the
        parser took it verbatim, else the whole content."""
        whole = (pos[start], end_of(end))
        t = text.strip()
        k = raw.find(t) if t else -1
        if k < 0:
            return whole, (pos[start], end_of(end))
        a = start + k
        return whole, (pos[a], end_of(a + len(t)))

    blocks: list[ParsedBlock] = []
    opens = [m.start() for m in re.finditer(re.escape(DET_OPEN), segment)]
    bounds = opens + [len(segment)]
    lead_end = bounds[0]
    lead = segment[:lead_end]
    if lead.strip():
        problems = ["text outside any <|det|> block"]
        raw_lead = lead
        for stray in (DET_CLOSE, REF_OPEN, REF_CLOSE):
            if stray in lead:
                problems.append(f"stray {stray}")
                lead = lead.replace(stray, "")
        block = ParsedBlock(page, "text", None, lead.strip("\n"), problems)
        whole, text_span = spans(0, lead_end, raw_lead, block.text)
        block.span, block.text_span = (whole[0], whole[1]), text_span
        blocks.append(block)
    for k, start in enumerate(opens):
        end = bounds[k + 1]
        piece = segment[start + len(DET_OPEN):end]
        close = piece.find(DET_CLOSE)
        if close >= 0:
            header, content = piece[:close], piece[close + len(DET_CLOSE):]
            content_start = start + len(DET_OPEN) + close + len(DET_CLOSE)
            label, box, problems, extra = _parse_header(header)
            if extra.strip():
                problems.append("text inside the tag")
                content = extra.strip() + content
        else:  # truncated: the tag never closed; whatever follows the box is content
            label, box, problems, content = _parse_header(piece)
            content_start = end - len(content)
            content = content.lstrip()
            problems.insert(0, "unclosed <|det|> tag")
        for stray in (DET_CLOSE, REF_OPEN, REF_CLOSE):
            if stray in content:
                problems.append(f"stray {stray}")
                content = content.replace(stray, "")
        if box is not None:
            fixed = tuple(min(999, max(0, v)) for v in box)
            x1, y1, x2, y2 = fixed
            if fixed != box:
                problems.append("box outside 0..999")
            if x1 > x2 or y1 > y2:
                problems.append("box corners swapped")
                x1, x2 = sorted((x1, x2))
                y1, y2 = sorted((y1, y2))
            box = (x1, y1, x2, y2)
        block = ParsedBlock(page, label, box, content.strip("\n"), problems)
        _, text_span = spans(content_start, end, segment[content_start:end], block.text)
        block.span, block.text_span = (pos[start], end_of(end)), text_span
        blocks.append(block)
    return blocks


def parse_output(text: str, n_pages: int = 1) -> ParsedOutput:
    """Parse a whole raw output (special tokens kept) for a run over `n_pages` pages. Each block carries its offsets
    in `text` (`span`, `text_span`)."""
    clean, cpos = _clean_positions(text)
    return _parse_clean(clean, cpos, n_pages, len(text), {})


def _parse_clean(clean: str, cpos: list[int], n_pages: int, raw_len: int, cache: dict) -> ParsedOutput:
    """The pages of the cleaned output; `cache` maps a page to (its pieces, its blocks) from an earlier call over a
    prefix of the same output, reused when the page's pieces (and so its text and offsets) did not change."""
    pieces, problems = _page_pieces(clean, n_pages)
    blocks: list[ParsedBlock] = []
    for page, parts in enumerate(pieces):
        end = cpos[parts[-1][1]] if parts else raw_len  # the raw offset just past the page
        key = (tuple(parts), end)
        hit = cache.get(page)
        if hit is not None and hit[0] == key:
            blocks += hit[1]
            continue
        segment = "".join(clean[a:b] for a, b in parts)
        pos = [i for a, b in parts for i in cpos[a:b]]
        pos.append(end)
        mine = _parse_page(segment, page, pos)
        cache[page] = (key, mine)
        blocks += mine
    return ParsedOutput(blocks, pages_seen=clean.count(PAGE_MARK) or (1 if clean.strip() else 0), problems=problems)


_EOS = NOISE_TOKENS[0]
_LONGEST = max(len(t) for t in NOISE_TOKENS)


class IncrementalParser:
    """`parse_output` for an output that only grows (the live generation): each call cleans only the new tail and
    re-parses only the pages whose pieces changed (in practice the page being written), so following a generation
    block by block costs about its length, not its length times its blocks. Gives exactly what `parse_output`
    gives for the same text (tests); a text that does not extend the last one starts over."""

    def __init__(self, n_pages: int = 1) -> None:
        self.n_pages = n_pages
        self._reset()

    def _reset(self) -> None:
        self._raw = ""  # the raw text consumed so far (up to a point no special string straddles)
        self._clean = ""
        self._cpos: list[int] = []  # raw offset of each clean character
        self._ended = False  # the end-of-sentence string was seen: nothing after it counts
        self._pages: dict[int, tuple] = {}

    def parse(self, text: str) -> ParsedOutput:
        if not text.startswith(self._raw):
            self._reset()
        if not self._ended:
            self._consume(text)
        tail = "" if self._ended else text[len(self._raw):]  # an unfinished special string is text until it completes
        committed = len(self._cpos)
        self._cpos.extend(range(len(self._raw), len(self._raw) + len(tail)))  # borrowed for this parse (no copy)
        self._cpos.append(len(self._raw) + len(tail))
        try:  # a page parsed with the tail may read differently once the tail completes: that parse is not kept
            return _parse_clean(self._clean + tail, self._cpos, self.n_pages, len(text),
                                dict(self._pages) if tail else self._pages)
        finally:
            del self._cpos[committed:]

    def _consume(self, text: str) -> None:
        start = len(self._raw)
        safe = len(text)
        window = text[max(start, safe - _LONGEST + 1):]
        for i in range(len(window)):  # a suffix that may still grow into a special string stays unconsumed
            if any(len(window) - i < len(t) and t.startswith(window[i:]) for t in NOISE_TOKENS):
                safe = len(text) - len(window) + i
                break
        chunk = text[start:safe]
        end = chunk.find(_EOS)
        if end >= 0:
            chunk, self._ended = chunk[:end], True
        last = 0
        pieces: list[str] = []
        for m in _NOISE_RE.finditer(chunk):
            pieces.append(chunk[last:m.start()])
            self._cpos.extend(range(start + last, start + m.start()))
            last = m.end()
        pieces.append(chunk[last:])
        self._cpos.extend(range(start + last, start + len(chunk)))
        self._clean += "".join(pieces)
        self._raw = text[:safe] if not self._ended else text[:start + len(chunk)]


def to_pixels(box: Sequence[int], width: float, height: float) -> tuple[float, float, float, float]:
    """A 0..999 box → page pixels (v / 999 · size, as the authors' code does)."""
    x1, y1, x2, y2 = box
    return (x1 / 999 * width, y1 / 999 * height, x2 / 999 * width, y2 / 999 * height)


def to_regions(
    parsed: ParsedOutput,
    page_sizes: Sequence[tuple[float, float]],
    *,
    dpis: Sequence[float] | None = None,
    source: str = "unlimited",
    keep_headers: bool = False,
    page_numbers: Sequence[int] | None = None,
) -> list[Region]:
    """Regions with page-pixel boxes, layout labels, tasks and text, in reading order (the model's output order).
    `Region.page` indexes `page_sizes`; the stable id is the layout pipeline's (`p{N}-r{k}`, from
    `app.core.document.regions.region_id`) for the document page `page_numbers[page]` (default: the same index). A block
    without a box gets the whole page and the "malformed" flag."""
    from app.core.document.regions import region_id

    regions: list[Region] = []
    order: dict[int, int] = {}
    seen_title = False
    for block in parsed.blocks:
        page = min(block.page, len(page_sizes) - 1) if page_sizes else block.page
        width, height = page_sizes[page] if page_sizes else (999.0, 999.0)
        dpi = float(dpis[page]) if dpis else 72.0
        native = block.label
        label = LABEL_ALIASES.get(native.lower(), "text")  # an unknown label still carries text worth keeping
        if label == "paragraph_title" and native.lower() == "title" and not seen_title:
            label = "doc_title"  # the first title of the document is its title, later ones are section titles
        if label in ("doc_title", "paragraph_title"):
            seen_title = True
        box = to_pixels(block.box, width, height) if block.box is not None else (0.0, 0.0, float(width), float(height))
        k = order.get(page, 0)
        order[page] = k + 1
        extra = {"native_label": native}
        if block.box is not None:
            extra["box_999"] = list(block.box)
        if block.span is not None:  # where the block is in the raw output (the R-SWA window view's text)
            extra["raw_span"] = list(block.span)
            extra["raw_text_span"] = list(block.text_span or block.span)
        flags: list[str] = []
        if block.malformed:
            flags.append("malformed")
            extra["malformed"] = "; ".join(block.problems)
        scale = 72.0 / dpi
        regions.append(Region(
            id=region_id(page_numbers[page] if page_numbers else page, k),
            page=page,
            box=box,
            label=label,
            task=task_for_label(label, keep_headers),
            order=k,
            box_pt=tuple(v * scale for v in box),  # type: ignore[arg-type]
            dpi=dpi,
            text=block.text.strip(),
            source=source,
            flags=flags,
            extra=extra,
        ))
    return regions
