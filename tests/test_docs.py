"""The documentation a newcomer reads: a short README that starts with the two commands, every docs/ page reachable
from it, no link that leads nowhere, and no pointer in the code to design notes the repository does not hold."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# pointers to notes that live outside the repository (or to modules that no longer exist)
# (spelled in pieces, so this check is not itself such a pointer)
_OUTSIDE = ("DESIGN" + " §", r"\.\./" + "shared", "shared" + "/reference", "reference" + r"/\w+\.md")
DEAD_POINTERS = re.compile("|".join(_OUTSIDE + (r"gravity\.md", "glmocr_engine")))


def prose(text: str) -> str:
    """The text without code blocks and code spans (a `[x](y)` there is code, not a link)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, spaces and hyphens kept),
    spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return LINK.findall(prose(path.read_text(encoding="utf-8")))


def test_the_slugs_are_githubs():
    assert slug("The self-speculative round") == "the-self-speculative-round"
    assert slug("One OCR pass per scan (`bench scan_pass`)") == "one-ocr-pass-per-scan-bench-scan_pass"
    assert slug("Ctrl+C") == "ctrlc"
    assert slug("Unlimited-OCR (`unlimited`)") == "unlimited-ocr-unlimited"


def test_the_readme_is_short_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    first_block = re.search(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    assert first_block, "the README has no command block"
    commands = [line.strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands[:2] == ["python3 make.py run", "python3 make.py test"]
    before = text[: first_block.start()]
    assert re.search(r"^## Quick start\s*$", before, re.M), "the first command block is the quick start"
    assert len(re.findall(r"^## ", before, re.M)) == 1, "the quick start is the first section"


def test_every_docs_page_is_linked_from_the_readme():
    assert PAGES, "docs/ holds no pages"
    targets = {(README.parent / link.split("#")[0]).resolve() for link in links(README) if not link.startswith("#")}
    missing = [p.name for p in PAGES if p.resolve() not in targets]
    assert not missing, f"docs pages the README does not link: {missing}"


def test_every_relative_link_leads_to_a_file_and_a_heading_that_exist():
    broken = []
    for page in [README, *PAGES]:
        for link in links(page):
            if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto: — not ours to check offline
                continue
            target, _, anchor = link.partition("#")
            path = (page.parent / target).resolve() if target else page
            if not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {link} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{page.relative_to(ROOT)}: {link} (no such heading)")
    assert not broken, "\n".join(broken)


def test_images_in_the_docs_stay_small():
    for image in (DOCS / "images").glob("*"):
        assert image.stat().st_size < 300 * 1024, image.name


def test_nothing_points_at_notes_outside_the_repository():
    this = Path(__file__).resolve()
    files = [*ROOT.joinpath("app").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py"), README, *PAGES]
    offenders = []
    for path in files:
        if path.resolve() == this:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if DEAD_POINTERS.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, "\n".join(offenders)
