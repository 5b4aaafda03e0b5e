"""The scripts Scriptorium knows how to read, which recogniser reads each, and how a person installs it.

`SCRIPTS` maps a script id (the names app.core.text.textcheck.script_of gives letters) to its Tesseract
languages (best first: the router tries the first to find the script, then the others of the same script to
pick the language), the name Tesseract's script detector (OSD) gives it, and whether it is written right to
left. Latin and the Chinese/Japanese scripts are the bundled recogniser's (PP-OCRv6): they need nothing
installed.

`install_hint(lang)` is the one line a person runs to get a language's model on this system (Debian/Ubuntu's
`apt install tesseract-ocr-<lang>`, Homebrew's `brew install tesseract-lang`, Fedora's langpack...).

What must never live here: reading images, Tesseract calls, the pipeline.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

BUNDLED = "bundled"  # the reader name of scripts the bundled recogniser reads


@dataclass(frozen=True)
class Script:
    id: str  # as app.core.text.textcheck.script_of names its letters
    title: str
    languages: tuple[str, ...]  # Tesseract language codes, best first ("" : the bundled recogniser reads it)
    osd: tuple[str, ...]  # the names Tesseract's OSD gives it
    rtl: bool = False
    # letters only one language of the script writes (language, letters): a reading in that language holding
    # one of them names the language where the models' confidences cannot (Persian beside Arabic)
    marks: tuple[tuple[str, str], ...] = ()


# the scripts a router reads (their languages are in CI's and the installer's package list) …
SCRIPTS: dict[str, Script] = {s.id: s for s in (
    Script("cyrillic", "Cyrillic", ("rus", "ukr", "bul", "srp"), ("Cyrillic",)),
    Script("greek", "Greek", ("ell",), ("Greek",)),
    Script("devanagari", "Devanagari", ("hin", "mar"), ("Devanagari",)),
    Script("thai", "Thai", ("tha",), ("Thai",)),
    Script("hangul", "Korean (Hangul)", ("kor",), ("Hangul", "Korean")),
    Script("arabic", "Arabic", ("ara", "fas"), ("Arabic",), rtl=True, marks=(("ara", "ةإ"), ("fas", "پچژگ"))),
    Script("hebrew", "Hebrew", ("heb",), ("Hebrew",), rtl=True),
)}
# … the bundled recogniser's …
BUNDLED_OSD = ("Latin", "Han", "Japanese", "Hiragana", "Katakana", "Fraktur", "Common", "Vietnamese")
# … and scripts Tesseract reads once their language is installed (named when a page needs one)
OTHER_SCRIPTS: dict[str, Script] = {s.osd[0]: s for s in (
    Script("georgian", "Georgian", ("kat",), ("Georgian",)),
    Script("armenian", "Armenian", ("hye",), ("Armenian",)),
    Script("bengali", "Bengali", ("ben",), ("Bengali",)),
    Script("tamil", "Tamil", ("tam",), ("Tamil",)),
    Script("telugu", "Telugu", ("tel",), ("Telugu",)),
    Script("kannada", "Kannada", ("kan",), ("Kannada",)),
    Script("malayalam", "Malayalam", ("mal",), ("Malayalam",)),
    Script("gujarati", "Gujarati", ("guj",), ("Gujarati",)),
    Script("gurmukhi", "Gurmukhi", ("pan",), ("Gurmukhi",)),
    Script("oriya", "Oriya", ("ori",), ("Oriya",)),
    Script("sinhala", "Sinhala", ("sin",), ("Sinhala",)),
    Script("khmer", "Khmer", ("khm",), ("Khmer",)),
    Script("lao", "Lao", ("lao",), ("Lao",)),
    Script("myanmar", "Myanmar", ("mya",), ("Myanmar",)),
    Script("tibetan", "Tibetan", ("bod",), ("Tibetan",)),
    Script("ethiopic", "Ethiopic", ("amh",), ("Ethiopic",)),
    Script("thaana", "Thaana", ("div",), ("Thaana",), rtl=True),
    Script("syriac", "Syriac", ("syr",), ("Syriac",), rtl=True),
)}
RTL_SCRIPTS = frozenset(s.id for s in (*SCRIPTS.values(), *OTHER_SCRIPTS.values()) if s.rtl)


def script_of_language(lang: str) -> Script | None:
    return next((s for s in (*SCRIPTS.values(), *OTHER_SCRIPTS.values()) if lang in s.languages), None)


def script_named_by_osd(name: str) -> Script | None:
    """The script OSD calls `name` (None: one the bundled recogniser reads, or one unknown here)."""
    return next((s for s in (*SCRIPTS.values(), *OTHER_SCRIPTS.values()) if name in s.osd), None)


def debian_package(lang: str) -> str:
    return "tesseract-ocr-" + lang.replace("_", "-").lower()


def install_hint(lang: str, *, platform: str | None = None, debian: bool | None = None) -> str:
    """The one line that installs Tesseract's `lang` model here."""
    platform = platform or sys.platform
    if platform == "darwin":
        return "brew install tesseract-lang"
    if platform.startswith("win"):
        return f"run the Tesseract installer again and tick the {lang} language (it adds {lang}.traineddata)"
    if debian if debian is not None else Path("/etc/debian_version").exists():
        return f"apt install {debian_package(lang)}"
    return (f"install Tesseract's {lang} language (Debian/Ubuntu: apt install {debian_package(lang)}; "
            f"Fedora: dnf install tesseract-langpack-{lang}; Arch: pacman -S tesseract-data-{lang})")


def install_all_hint(*, platform: str | None = None) -> str:
    """Every language the router reads and the script detector (OSD), for a person who wants them all (the
    README's line; and what a page needs when no detector can name its script)."""
    platform = platform or sys.platform
    if platform == "darwin":
        return "brew install tesseract-lang"
    langs = ["osd", *(lang for s in SCRIPTS.values() for lang in s.languages)]
    if platform.startswith("win"):
        return f"run the Tesseract installer again and tick these languages: {', '.join(langs)}"
    return "apt install " + " ".join(debian_package(lang) for lang in langs)
