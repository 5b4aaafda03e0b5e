"""Markdown → HTML for the HTML export, `convert --formats html` and the in-app preview, made safe whatever the
document's text holds.

OCR text is untrusted: a page can say `<script>`, `<img src=http://…>`, `<iframe>`, `javascript:` or
`<meta http-equiv=refresh>`. Three steps keep that text visible and harmless:

1. before Markdown sees a block, every raw HTML tag, comment or declaration that is not on the allow-list is
   escaped, so the person sees it as text (in the preview and the export alike) instead of losing it;
2. formulas become MathML (app.core.pipeline.mathml; `\\text{}` content is escaped there) or, for the preview, the
   rich-text subset Qt draws;
3. the whole result goes through nh3 (the maintained Ammonia sanitiser) with the allow-list below: tables,
   headings, lists, emphasis, code, MathML, links (http, https, mailto) and images whose source is a relative
   local path; no scripts, handlers, styles from the document, frames, forms or remote loads survive it.

What must never live here: Qt, file writing (app.core.pipeline.output writes the HTML file).
"""
from __future__ import annotations

import html
import re
from functools import lru_cache

import nh3

from app.core.pipeline.mathml import latex_to_mathml, latex_to_rich_text

MATHML_TAGS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "mtext", "ms", "mspace", "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot",
    "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "mfenced",
    "merror", "semantics", "annotation", "mmultiscripts", "mprescripts", "none", "mlabeledtr",
})
HTML_TAGS = frozenset({
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tfoot", "tr", "td", "th",
    "caption", "colgroup", "col", "ul", "ol", "li", "dl", "dt", "dd", "em", "strong", "b", "i", "u", "s", "del",
    "ins", "sub", "sup", "small", "mark", "code", "pre", "kbd", "samp", "var", "blockquote", "q", "cite", "abbr",
    "span", "div", "a", "img",
})
ALLOWED_TAGS = HTML_TAGS | MATHML_TAGS
_MATH_ATTRS = {"display", "xmlns", "mathvariant", "stretchy", "fence", "separator", "form", "accent", "accentunder",
               "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines", "frame",
               "linethickness", "lspace", "rspace", "width", "height", "depth", "notation", "displaystyle",
               "scriptlevel", "largeop", "movablelimits", "symmetric", "minsize", "maxsize", "encoding"}
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "td": {"colspan", "rowspan", "align"}, "th": {"colspan", "rowspan", "align", "scope"},
    "col": {"span"}, "colgroup": {"span"}, "ol": {"start"}, "a": {"href", "name", "title"},
    "img": {"src", "alt", "title", "width", "height"}, "abbr": {"title"},
    **{tag: set(_MATH_ATTRS) for tag in MATHML_TAGS},
}
URL_SCHEMES = {"http", "https", "mailto"}

_RAW_HTML = re.compile(r"<!--.*?(?:-->|$)|<![^>]*>?|<\?.*?(?:\?>|$)|</?([A-Za-z][A-Za-z0-9:-]*)[^>]*>?", re.S)
_VALUE = r"""(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))"""
_TAG = re.compile(rf"^</?[A-Za-z][A-Za-z0-9:-]*((?:\s+[A-Za-z_:][-\w:.]*{_VALUE}?)*)\s*/?>$")
_ATTR = re.compile(rf"([A-Za-z_:][-\w:.]*)({_VALUE}?)")
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$([^$\n]+?)\$(?!\$)")
_MARK = "\ue0ff"  # brackets a stashed formula's number while Markdown and the sanitiser work (private use)

CSS = """
body { line-height: 140%; }
table { border-collapse: collapse; margin: 6px 0; }
td, th { border: 1px solid #9aa0a6; padding: 3px 6px; }
th { font-weight: bold; }
code { font-family: monospace; }
h1 { font-size: x-large; } h2 { font-size: large; }
"""


def local_image_source(src: str) -> bool:
    """A relative path inside the output folder (no scheme, not absolute, no `..`): the only images we link."""
    s = src.strip().replace("\\", "/")
    if not s or s.startswith("/") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", s):
        return False
    return ".." not in s.split("/")


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    if tag == "img" and attribute == "src":
        return value if local_image_source(value) else None
    return value


def sanitize_html(fragment: str) -> str:
    """`fragment` with everything off the allow-list removed (script and style contents included)."""
    return nh3.clean(fragment, tags=set(ALLOWED_TAGS), attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
                     attribute_filter=_attribute_filter, link_rel="noopener noreferrer nofollow",
                     strip_comments=True)


def _well_formed(tag: str, name: str) -> bool:
    """`<name attr="v" …>` as a tag is written, not prose that happens to hold a `<` ("if a<b then c>d": `then`
    is no attribute of `b`): every attribute has a value or is one the allow-list knows for this tag."""
    m = _TAG.match(tag)
    if m is None:
        return False
    allowed = ALLOWED_ATTRIBUTES.get(name, set())
    return all(value or attr.lower() in allowed for attr, value in _ATTR.findall(m.group(1)))


def escape_unlisted_html(text: str) -> str:
    """Escape raw HTML in Markdown source that is not on the allow-list (tags, comments, declarations, and
    allowed tags that are not written as tags), so that it shows as text; allowed tags stay for Markdown and the
    sanitiser."""
    def one(m: re.Match) -> str:
        name = (m.group(1) or "").lower()
        if name in ALLOWED_TAGS and _well_formed(m.group(0), name):
            return m.group(0)
        return html.escape(m.group(0), quote=False)

    return _RAW_HTML.sub(one, text)


def _math(latex: str, display: bool, mode: str) -> str:
    if mode == "mathml":
        mathml = latex_to_mathml(latex, display)
        if mathml:
            return f"<div class='math'>{mathml}</div>" if display else mathml
        return f"<code>{html.escape(latex)}</code>"
    return latex_to_rich_text(latex, display)


@lru_cache(maxsize=4096)
def block_html(markdown_text: str, math: str = "rich") -> str:
    """One block of Markdown as safe HTML. Math is cut out before Markdown sees it (so `_` and `*` inside a formula
    are not taken for emphasis) and put back rendered. The preview's rich-text math (`math="rich"`) carries our
    own inline styles, so it is put back after the sanitiser; MathML goes through it."""
    import markdown

    stash: list[str] = []

    def keep(rendered: str) -> str:
        stash.append(rendered)
        return f"{_MARK}{len(stash) - 1}{_MARK}"

    text = markdown_text.replace(_MARK, "")
    text = _DISPLAY.sub(lambda m: "\n\n" + keep(_math(m.group(1), True, math)) + "\n\n", text)
    text = _INLINE.sub(lambda m: keep(_math(m.group(1), False, math)), text)
    out = markdown.markdown(escape_unlisted_html(text), extensions=["tables", "fenced_code", "sane_lists"],
                            output_format="html")
    out = re.sub(f"<p>\\s*({_MARK}\\d+{_MARK})\\s*</p>", r"\1", out)
    put_back = re.compile(f"{_MARK}(\\d+){_MARK}")
    if math == "mathml":
        return sanitize_html(put_back.sub(lambda m: stash[int(m.group(1))], out))
    return put_back.sub(lambda m: stash[int(m.group(1))], sanitize_html(out))


def directed(fragment: str, text: str) -> str:
    """A block written right to left (most of its letters Arabic or Hebrew) in a `dir="rtl"` division: the text
    stays in logical order, the browser lays it out from the right."""
    from app.core.text.textcheck import right_to_left

    return f'<div dir="rtl">{fragment}</div>' if right_to_left(text) else fragment


def markdown_to_html(blocks: list[tuple[str, str]], math: str = "rich", title: str = "") -> str:
    """A whole page: each block after an anchor named by its region id. `math="mathml"` for browsers (the export),
    "rich" for Qt's preview."""
    parts = [f'<a name="{html.escape(rid)}"></a>{directed(block_html(md, math), md)}' for rid, md in blocks
             if md.strip()]
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title><style>{CSS}</style>"
    return f"<html><head>{head}</head><body>\n" + "\n".join(parts) + "\n</body></html>"
