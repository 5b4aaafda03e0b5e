"""Bad inputs through `scriptorium convert`: each gives a clear message naming the file and the cause, and the
documented exit code (1 unreadable, 4 converted with warnings, 0 fine) — never a traceback."""
from __future__ import annotations

import os

import pymupdf
import pytest

from app.cli import main
from doc_inputs import big_png, encrypted_pdf, zero_page_pdf


@pytest.fixture(scope="module")
def small_pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "small.pdf"
    doc = pymupdf.open()
    for i in range(2):
        page = doc.new_page(width=240, height=90)
        page.insert_text((12, 40), f"Page {i + 1} says hello", fontsize=14)
    doc.save(str(path), garbage=3, deflate=True)
    return path


def convert(capsys, tmp_path, *args):
    rc = main(["convert", "-o", str(tmp_path / "out"), "--engine", "classic", "--layout", "page", "--pages", "1",
               "-q", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def test_encrypted_without_password(capsys, tmp_path, small_pdf):
    enc = encrypted_pdf(small_pdf, tmp_path / "locked.pdf")
    rc, out, err = convert(capsys, tmp_path, enc)
    assert rc == 1
    assert "locked.pdf: the PDF is encrypted; give its password" in err
    assert "locked.pdf: failed" in out


def test_encrypted_with_wrong_then_right_password(capsys, tmp_path, small_pdf):
    enc = encrypted_pdf(small_pdf, tmp_path / "locked.pdf", password="s3cret")
    rc, _, err = convert(capsys, tmp_path, enc, "--password", "nope")
    assert rc == 1 and "locked.pdf: the password given does not open this encrypted PDF" in err
    rc, out, _ = convert(capsys, tmp_path, enc, "--password", "s3cret")
    assert rc == 0, out
    assert "locked.pdf: 1 page," in out
    md = (tmp_path / "out" / "locked.md").read_text()
    assert "Page 1 says hello" in md


def test_truncated_beyond_repair(capsys, tmp_path, small_pdf):
    data = small_pdf.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 20])
    rc, out, err = convert(capsys, tmp_path, cut)
    assert rc == 1
    assert "cut.pdf: cannot be opened: it is damaged or truncated beyond repair" in err


def test_truncated_but_repairable_converts_with_a_warning(capsys, tmp_path, small_pdf):
    data = small_pdf.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: int(len(data) * 0.9)])
    rc, out, err = convert(capsys, tmp_path, cut)
    assert rc == 4
    assert "warning: cut.pdf: the file is damaged" in err and "was repaired" in err
    assert (tmp_path / "out" / "cut.md").is_file()


def test_random_bytes_named_pdf(capsys, tmp_path):
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(os.urandom(4096))
    rc, _, err = convert(capsys, tmp_path, junk)
    assert rc == 1
    assert "junk.pdf: cannot be opened: it is not a PDF" in err


def test_zero_page_pdf(capsys, tmp_path):
    rc, _, err = convert(capsys, tmp_path, zero_page_pdf(tmp_path / "empty.pdf"))
    assert rc == 1
    assert "empty.pdf: the document has no pages" in err


def test_huge_image_is_refused_with_its_size(capsys, tmp_path):
    rc, _, err = convert(capsys, tmp_path, big_png(tmp_path / "huge.png", 20000, 20000))
    assert rc == 1
    assert "huge.png: the image is 20000 × 20000 px (400 megapixels)" in err
    assert "Downscale it first" in err


def test_bad_page_range_and_missing_file(capsys, tmp_path, small_pdf):
    rc, _, err = convert(capsys, tmp_path, small_pdf, "--pages", "7")
    assert rc == 1 and "small.pdf: page 7 does not exist (the document has 2 pages)" in err
    rc, _, err = convert(capsys, tmp_path, tmp_path / "missing.pdf")
    assert rc == 2 and err.strip().endswith("missing.pdf: no such file") and err.count("\n") == 1


def test_one_bad_file_does_not_stop_the_others(capsys, tmp_path, small_pdf):
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"not a pdf at all")
    rc, out, _ = convert(capsys, tmp_path, junk, small_pdf)
    assert rc == 1
    assert "junk.pdf: failed" in out and "small.pdf: 1 page," in out


def test_missing_model_weights_exit_3_with_what_to_download(capsys, tmp_path, small_pdf):
    rc = main(["convert", "-o", str(tmp_path / "out"), "--engine", "glm", "-q", str(small_pdf), str(small_pdf)])
    out, err = capsys.readouterr()
    assert rc == 3 and "Traceback" not in out + err
    assert "engine 'glm' cannot be used" in err and "weights were not found" in err and "zai-org/GLM-OCR" in err
    assert out.count("failed (engine)") == 1  # the second input is not tried: it would fail the same way


@pytest.mark.parametrize("option, value, says", [
    ("--dpi", "0", "must be above 0"), ("--ocr-dpi", "-5", "must be above 0"), ("--dpi", "99999", "at most 1200"),
    ("--block-size", "0", "must be above 0"), ("--max-new-tokens", "x", "not a whole number"),
    ("--batch", "-1", "below 0"), ("--batch", "two", "not a whole number"),
])
def test_bad_numbers_are_usage_errors(capsys, tmp_path, small_pdf, option, value, says):
    with pytest.raises(SystemExit) as exit_info:
        convert(capsys, tmp_path, small_pdf, option, value)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: '{value}'" in err and says in err
    assert "Traceback" not in err


def test_unwritable_trace_file_is_named(capsys, tmp_path, small_pdf):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    rc, out, err = convert(capsys, tmp_path, small_pdf, "--trace", blocker / "run.jsonl")
    assert rc == 2
    assert f"cannot write the trace file {blocker / 'run.jsonl'}" in err


def test_unwritable_output_file_is_named(capsys, tmp_path, small_pdf):
    (tmp_path / "out" / "small.md").mkdir(parents=True)  # a folder where the Markdown file should go
    rc, out, err = convert(capsys, tmp_path, small_pdf)
    assert rc == 1
    assert f"cannot write {tmp_path / 'out' / 'small.md'}: " in err
    assert "small.pdf: failed (output)" in out


def test_inputs_with_the_same_name_do_not_overwrite_each_other(capsys, tmp_path, small_pdf):
    import shutil

    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        shutil.copy(small_pdf, tmp_path / sub / "small.pdf")
    rc, out, err = convert(capsys, tmp_path, tmp_path / "a" / "small.pdf", tmp_path / "b" / "small.pdf")
    assert rc == 0, err
    assert sorted(p.name for p in (tmp_path / "out").glob("*.md")) == ["small-2.md", "small.md"]
    assert "→ " + str(tmp_path / "out" / "small-2.md") in out
