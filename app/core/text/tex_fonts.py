"""What a glyph of a TeX math font stands for, when the PDF does not say.

TeX's math fonts (Computer Modern's CMEX and CMSY, Latin Modern's copies of them, the AMS's MSBM) have their
own encodings and glyph names ("summationdisplay", "parenleftbigg", "radicalbig") that no ToUnicode map or
Adobe glyph list knows: PyMuPDF reads them as U+FFFD, or (with TEXT_CID_FOR_UNKNOWN_UNICODE) as the bare
character code, so a display sum comes out as "X" and a radical as "p". `glyph_char(font, code, known)` maps
such a glyph by its font and code to the Unicode character it draws (∑, √, a tall "(" or one piece of one);
`font_style(font)` says which alphabet a font's letters are (MSBM: `\\mathbb`, CMSY's capitals: `\\mathcal`,
EUFM: `\\mathfrak`); `bold_font(font)` whether it is a bold face (a formula's vectors: `\\mathbf`);
`unicode_math(c)` reads Unicode's mathematical letters (𝐸, 𝔾: what Word's and MathML's fonts write) as a letter
and its alphabet.

What must never live here: the LaTeX commands of characters (app.core.text.layer_math), formula structure
(app.core.text.formula_layout).
"""
from __future__ import annotations

import re
import unicodedata

_CMEX_FONT = re.compile(r"^(?:[A-Z]{6}\+)?(?:CMEX|LMEX|LMMathExtension|EUEX|TXEX|PXEX)", re.IGNORECASE)
_CMSY_FONT = re.compile(r"^(?:[A-Z]{6}\+)?(?:CMSY|CMBSY|LMSY|LMMathSymbols)", re.IGNORECASE)
_STYLES = ((re.compile(r"^(?:[A-Z]{6}\+)?(?:MSBM)", re.IGNORECASE), r"\mathbb"),
           (re.compile(r"^(?:[A-Z]{6}\+)?(?:EUFM|EUFB)", re.IGNORECASE), r"\mathfrak"),
           (re.compile(r"^(?:[A-Z]{6}\+)?(?:RSFS)", re.IGNORECASE), r"\mathscr"),
           (_CMSY_FONT, r"\mathcal"))

# CMEX (cmex10's layout, the same in Latin Modern's lmex10): sizes of delimiters, the pieces tall ones
# are built from, big operators in text and display size, radicals. Piece characters are those of Unicode's
# bracket pieces; "" is a glyph that draws nothing a formula's text needs (pieces of horizontal braces,
# arrows).
_DELIMS = "()[]⌊⌋⌈⌉{}⟨⟩⏐‖/\\"
CMEX: dict[int, str] = {**{i: _DELIMS[i] for i in range(16)},
                        **{0x10 + i: "()()[]⌊⌋⌈⌉{}⟨⟩/\\"[i] for i in range(16)},
                        **{0x20 + i: "()[]⌊⌋⌈⌉{}⟨⟩/\\/\\"[i] for i in range(16)}}
CMEX.update({0x30: "⎛", 0x31: "⎞", 0x32: "⎡", 0x33: "⎤", 0x34: "⎣", 0x35: "⎦", 0x36: "⎢", 0x37: "⎥",
             0x38: "⎧", 0x39: "⎫", 0x3A: "⎩", 0x3B: "⎭", 0x3C: "⎨", 0x3D: "⎬", 0x3E: "⎪", 0x3F: "",
             0x40: "⎝", 0x41: "⎠", 0x42: "⎜", 0x43: "⎟", 0x44: "⟨", 0x45: "⟩"})
for _code, _op in zip(range(0x46, 0x62, 2), "⨆∮⨀⨁⨂"):
    CMEX[_code] = CMEX[_code + 1] = _op
for _i, _op in enumerate("∑∏∫⋃⋂⨄⋀⋁"):
    CMEX[0x50 + _i] = CMEX[0x58 + _i] = _op
CMEX.update({0x60: "∐", 0x61: "∐", 0x62: "ˆ", 0x63: "ˆ", 0x64: "ˆ", 0x65: "˜", 0x66: "˜", 0x67: "˜",
             0x68: "[", 0x69: "]", 0x6A: "⌊", 0x6B: "⌋", 0x6C: "⌈", 0x6D: "⌉", 0x6E: "{", 0x6F: "}",
             **dict.fromkeys(range(0x70, 0x77), "√"), **dict.fromkeys(range(0x77, 0x80), "")})

# CMSY (cmsy10's layout): used only for a glyph the PDF could not name (the others read right already)
_CMSY = ("−·×∗÷⋄±∓⊕⊖⊗⊘⊙◯∘∙≍≡⊆⊇≤≥⪯⪰∼≈⊂⊃≪≫≺≻←→↑↓↔↗↘≃⇐⇒⇑⇓⇔↖↙∝′∞∈∋△▽/ ∀∃¬∅ℜℑ⊤⊥ℵ"
         "ABCDEFGHIJKLMNOPQRSTUVWXYZ∪∩⊎∧∨⊢⊣⌊⌋⌈⌉{}⟨⟩|‖↕⇕\\≀√⨿∇∫⊔⊓⊑⊒§†‡¶♣♢♡♠")
CMSY: dict[int, str] = {i: c for i, c in enumerate(_CMSY) if c != " "}


# Adobe's private-use code points for bracket pieces (what the glyph list maps "bracketlefttp" and kin to)
ADOBE_PIECES = dict(zip(range(0xF8EB, 0xF8FF), "⎛⎜⎝⎡⎢⎣⎧⎨⎩⎪\u0000⎞⎟⎠⎤⎥⎦⎫⎬⎭"))
ADOBE_PIECES.update({0xF8F5: "", 0xF8E5: "", 0xF8E6: "", 0xF8E7: ""})  # integral/radical/arrow extenders


def is_extension_font(font: str) -> bool:
    """Is `font` a TeX math extension font (big operators, tall delimiters, radicals: CMEX and its copies)?
    Its glyphs hang below their baseline, so their baseline says nothing about the row they sit in."""
    return bool(_CMEX_FONT.match(font or ""))


def glyph_char(font: str, code: int, known: bool) -> str:
    """The character a glyph draws: `code` is what PyMuPDF read (the Unicode when `known`, else the font's own
    character code). A CMEX glyph is mapped by its code whenever it is below 0x80 (CMEX has no letters, so a
    low code is never real text); a CMSY glyph only when unknown. Other fonts: the character as read."""
    if code in ADOBE_PIECES:
        return ADOBE_PIECES[code]
    if is_extension_font(font) and code < 0x80:
        return CMEX.get(code, "")
    if known and code == 0x37 and _CMSY_FONT.match(font or ""):
        return ""  # CMSY's \mapstochar ("7"), the foot TeX sets before "→" to draw "↦"
    if not known and _CMSY_FONT.match(font or ""):
        return CMSY.get(code, "\ufffd")
    if not known or code < 0x20:  # a control character (a font with no Unicode for its glyph) says nothing
        return "\ufffd"
    return chr(code)


def font_style(font: str) -> str | None:
    """The alphabet command for the Latin capitals of `font` (None: plain math italic or roman letters)."""
    for pattern, style in _STYLES:
        if pattern.match(font or ""):
            return style
    return None


_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|^(?:[A-Z]{6}\+)?(?:CMBX|CMBXTI|LMRomanDemi)", re.IGNORECASE)


def bold_font(font: str) -> bool:
    """Is `font` a bold face (Times-Bold, Arial,Bold, CMBX10: where a formula sets its vectors and matrices)?"""
    return bool(_BOLD_FONT.search((font or "").split("+")[-1]))


_STYLE_WORDS = (("DOUBLE-STRUCK", r"\mathbb"), ("FRAKTUR", r"\mathfrak"), ("SCRIPT", r"\mathcal"),
                ("SANS-SERIF", r"\mathsf"), ("MONOSPACE", r"\mathtt"), ("BOLD", r"\mathbf"))


def unicode_math(c: str) -> tuple[str, str | None]:
    """A Mathematical Alphanumeric Symbol (U+1D400-U+1D7FF, what Word and MathML fonts such as Cambria Math
    write: 𝐸, 𝜌, 𝔾; and ℎ) as its plain letter and the alphabet command it is set in (None: italic or plain):
    ("E", None), ("ρ", None), ("G", "\\mathbb")."""
    o = ord(c[:1] or " ")
    if not (0x1D400 <= o <= 0x1D7FF or o == 0x210E):
        return c, None
    base = unicodedata.normalize("NFKC", c)
    if len(base) != 1:
        return c, None
    name = unicodedata.name(c, "")
    style = next((cmd for word, cmd in _STYLE_WORDS if word in name), None)
    if style == r"\mathbf" and ("ITALIC" in name or not base.isascii()):
        style = r"\boldsymbol"
    return base, style
