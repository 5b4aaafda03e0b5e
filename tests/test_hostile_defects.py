"""Each defect of issue 17, held by a test: (1) wrong-shape journals, settings and traces; (2) live HTML from OCR
text; (4) headers-only pages converted silently; (5) a wrong PDF password kept; (7) --device/--dtype ignored by
classic; (8) output sets, folder checks, stale temporaries, "1 pages", third-party noise; (9) a failed open shown as
"0 blocks". (3) and (6), interrupts and time budgets, are in test_hostile_interrupts.py."""
from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app.bench.hostile_corpus import PASSWORD, encrypted_pdf, journal_shapes, margins_only_pdf
from app.cli import main
from app.core.document.sample_documents import make_sample_pdf

ROOT = Path(__file__).resolve().parents[1]
ISSUE_JOURNALS = ("no-path", "state-str", "documents-str", "blocks-str", "saved-at-str")
HOSTILE = ("# T <script>alert(1)</script>\n\nx <img src=http://evil/x.png onerror=alert(2)> <iframe src=x></iframe> "
           "<object data=x></object> [a](javascript:alert(3)) <a href='javascript:alert(4)' onclick='f()'>b</a> "
           "<meta http-equiv=refresh content='0;url=http://e'> <style>@import url(http://e/x.css);</style> "
           "<svg onload=alert(5)></svg> <body onload=alert(6)>")


def _env() -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1")


def _convert(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "app", "convert", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=_env())


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return make_sample_pdf(tmp_path_factory.mktemp("defects") / "sample.pdf", pages=1)


# --- 1: the journal, settings and traces -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ISSUE_JOURNALS)
def test_1_a_wrong_shape_journal_is_set_aside_and_the_window_opens_and_says_so(qtbot, name):
    from app.core.base.paths import user_data_dir
    from app.gui.application import build_window
    from app.gui.prompts import Prompter

    text = dict(journal_shapes())[name]
    journal = user_data_dir() / "journal" / "work.json"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(text)
    window = build_window(object())  # what `python -m app` does, then offer_restore
    qtbot.addWidget(window)
    window.prompter = Prompter(interactive=False)
    window.show()
    assert window.offer_restore() is False
    assert "set aside" in window.banner.text and window.banner.action.text() == "Show file"
    kept = list(journal.parent.glob("work.broken-*.json"))
    assert len(kept) == 1 and kept[0].read_text() == text and not journal.exists()
    assert window.prompter.asked == []
    again = build_window(object())  # the next start: nothing to say any more
    qtbot.addWidget(again)
    assert again.offer_restore() is False and again.banner.text == ""


def test_1_a_second_broken_journal_never_overwrites_the_first(tmp_path):
    from app.gui.journal import Journal

    journal = Journal(tmp_path / "work.json")
    for n in range(3):
        journal.path.write_text(f"{{broken {n}")
        assert journal.load() is None
    kept = sorted(p.read_text() for p in tmp_path.glob("work.broken-*.json"))
    assert kept == ["{broken 0", "{broken 1", "{broken 2"]


def test_1_every_wrong_journal_shape_is_refused_by_the_schema_and_a_good_one_loads(tmp_path):
    from app.gui.journal import Journal

    for name, text in journal_shapes():
        journal = Journal(tmp_path / name / "work.json")
        journal.path.parent.mkdir()
        journal.path.write_text(text, errors="surrogateescape")
        assert journal.load() is None, name
        assert journal.set_aside is not None and journal.problem, name
    good = Journal(tmp_path / "good.json")
    good.save({"documents": [{"path": "/x.pdf", "blocks": []}], "current": 0})
    assert good.load() is not None and good.set_aside is None


def test_1_a_binary_settings_file_is_set_aside_and_defaults_are_used(tmp_path, qapp):
    from app.gui.settings import Settings

    path = tmp_path / "settings.ini"
    path.write_bytes(b"\x00\xff\xfe binary" * 50)
    settings = Settings(str(path))
    assert settings.set_aside is not None and settings.set_aside.read_bytes().startswith(b"\x00\xff")
    assert settings.get("theme") == "system" and settings.get("recent_files") == []
    settings.set("theme", "dark")
    assert Settings(str(path)).get("theme") == "dark"


def test_1_settings_values_of_the_wrong_type_fall_back_to_their_defaults(tmp_path, qapp):
    from app.gui.settings import Settings

    path = tmp_path / "settings.ini"
    path.write_text("[General]\nrecent_files=@ByteArray(x)\nrender_dpi=abc\ntheme=purple\n")
    settings = Settings(str(path))
    assert settings.set_aside is None
    assert settings.get("recent_files") == [] and settings.get("render_dpi") == 144
    assert settings.get("theme") == "system"


def test_1_a_trace_line_of_the_wrong_shape_is_refused_naming_the_line(tmp_path):
    from app.bench.hostile_corpus import trace_shapes
    from app.core.record.trace import TraceError, load_trace

    for name, text in trace_shapes():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text, errors="surrogateescape")
        with pytest.raises(TraceError) as err:
            load_trace(path)
        assert path.name in str(err.value), name


# --- 2: HTML ---------------------------------------------------------------------------------------------------------

class _Live(HTMLParser):
    """Collects whatever would run or load in a browser."""

    def __init__(self) -> None:
        super().__init__()
        self.live: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "meta", "style", "link", "svg", "base", "form"):
            if not (tag == "meta" and attrs == [("charset", "utf-8")]) and not (tag == "style" and not attrs):
                self.live.append(tag)
        for key, value in attrs:
            v = (value or "").strip().lower()
            if key.startswith("on") or v.startswith("javascript:") or "@import" in v:
                self.live.append(f"{tag} {key}={value}")
            if tag == "img" and key == "src" and (":" in v or v.startswith("/")):
                self.live.append(f"img src={value}")


def _live(html: str) -> list[str]:
    parser = _Live()
    parser.feed(html)
    return parser.live


def _hostile_output(tmp_path):
    from app.core.pipeline.output import DocumentOutput, PageOutput
    from app.core.document.regions import Region

    regions = [Region(id="p1-r01", page=0, box=(0, 0, 10, 10), label="text", task="text", order=0, text=HOSTILE),
               Region(id="p1-r02", page=0, box=(0, 20, 10, 30), label="formula", task="formula", order=1,
                      text="\\text{</math><script>alert(7)</script>} + x^2"),
               Region(id="p1-r03", page=0, box=(0, 40, 10, 50), label="table", task="table", order=2,
                      text="<table><tr><td onmouseover='x()'>1</td></tr></table>")]
    for r in regions:
        r.extra["stats"] = {"tokens": 1}
    page = PageOutput(0, 100, 100, 72, 100, 100, regions=regions)
    return DocumentOutput(str(tmp_path / "hostile.pdf"), "test", "test", 1, pages=[page])


def test_2_the_html_output_has_no_live_script_handler_remote_load_or_javascript_link(tmp_path):
    from app.core.pipeline.output import write_document

    files = write_document(_hostile_output(tmp_path), tmp_path / "out", "hostile", lambda *a: {},
                           ("md", "json", "html"))
    html = files["html"].read_text()
    assert _live(html) == [], _live(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown as text, not lost
    assert "<mtext>&lt;/math&gt;&lt;script&gt;alert(7)&lt;/script&gt;</mtext>" in html  # \text{} escaped
    assert "<table>" in html and "<math" in html
    assert "<script>alert(1)</script>" in files["markdown"].read_text()  # Markdown keeps the text as read


def test_2_convert_formats_option_writes_html_and_refuses_unknown_formats(sample, tmp_path):
    proc = _convert(sample, "-o", tmp_path / "out", "--engine", "classic", "--layout", "page", "--formats",
                    "html,md", "-q", "--ocr-dpi", "60")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["sample.html", "sample.md"]
    assert _live((tmp_path / "out" / "sample.html").read_text()) == []
    bad = _convert(sample, "-o", tmp_path / "out2", "--formats", "md,rtf")
    assert bad.returncode == 2 and "unknown output format 'rtf'" in bad.stderr and "Traceback" not in bad.stderr


def test_2_the_preview_shows_hostile_text_escaped_instead_of_hiding_it(qtbot):
    from app.gui.preview import Preview

    preview = Preview()
    qtbot.addWidget(preview)
    preview.set_blocks([("b1", HOSTILE), ("b2", "$$\\text{</math><script>alert(7)</script>}$$")])
    preview.render_now()
    shown = preview.toPlainText()
    assert "<script>alert(1)</script>" in shown and "<iframe src=x></iframe>" in shown
    assert "<script>alert(7)</script>" in shown
    assert not [u for u in preview.blocked if u.startswith("http")]


def test_2_prose_that_holds_a_less_than_sign_keeps_every_word_visible():
    from app.core.pipeline.html_render import block_html

    for text in ("if a<b then c>d", "x <a", "<p class=x>kept</p> and <table border='1'><tr><td>1</td></tr></table>"):
        html = block_html(text, "mathml")
        assert _live(html) == []
    assert "if a&lt;b then c&gt;d" in block_html("if a<b then c>d", "mathml")
    assert "<table>" in block_html("<table border='1'><tr><td>1</td></tr></table>", "mathml")


def test_2_the_windows_export_writes_the_same_safe_html(qtbot, tmp_path):
    from app.core.record import events as ev
    from app.core.document.regions import Region
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    region = Region(id="p1-r01", page=0, box=(0, 0, 100, 20), label="text", task="text", order=0,
                    box_pt=(0, 0, 50, 10), dpi=144).to_dict()
    for e in (ev.RunStarted(engine="replay", document="/x/doc.pdf"), ev.DocumentOpened(path="/x/doc.pdf", page_count=1),
              ev.LayoutDone(page=0, regions=[region]), ev.RegionFinished(region_id="p1-r01", text=HOSTILE),
              ev.RunFinished()):
        w.handle_event(e)
    written = w.export_current(tmp_path / "doc.md")
    html = next(p for p in written if p.suffix == ".html").read_text()
    assert _live(html) == [] and "&lt;script&gt;alert(1)" in html


# --- 4: pages of headers and footers only ----------------------------------------------------------------------------

def test_4_a_document_of_headers_and_footers_only_warns_and_exits_4(tmp_path):
    pdf = margins_only_pdf(tmp_path / "margins.pdf")
    proc = _convert(pdf, "-o", tmp_path / "out", "--engine", "classic", "--layout", "pymupdf", "--pages", "1", "-q")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "page 1 holds only headers, footers or page numbers" in proc.stderr and "--keep-headers" in proc.stderr
    assert "1 warning" in proc.stdout


# --- 5: a wrong PDF password in the window ---------------------------------------------------------------------------

def test_5_a_wrong_password_asks_again_and_a_reopened_document_asks_anew(qtbot, sample, tmp_path):
    from app.gui.main_window import MainWindow

    locked = encrypted_pdf(sample, tmp_path / "locked.pdf", "aes")
    w = MainWindow()
    qtbot.addWidget(w)
    w.settings.set("auto_run", False)
    w.prompter.answers["password"] = ["wrong", PASSWORD]
    w.open_files([str(locked)])
    qtbot.waitUntil(lambda: w.work is not None and w.work.page_count == 1, timeout=10_000)
    prompts = [text for key, text in w.prompter.asked if key == "password"]
    assert len(prompts) == 2 and "did not open it" in prompts[1]
    w.close_document(0)
    w.prompter.answers["password"] = [PASSWORD]
    w.open_files([str(locked)])
    qtbot.waitUntil(lambda: w.work is not None and w.work.page_count == 1, timeout=10_000)
    assert len([k for k, _ in w.prompter.asked if k == "password"]) == 3


def test_5_giving_up_on_the_password_says_why_in_the_banner_and_the_list(qtbot, sample, tmp_path):
    from app.gui.main_window import MainWindow

    locked = encrypted_pdf(sample, tmp_path / "locked.pdf", "rc4")
    w = MainWindow()
    qtbot.addWidget(w)
    w.settings.set("auto_run", False)
    w.prompter.answers["password"] = ["wrong", "wrong"]  # the same wrong one twice: stop asking
    w.open_files([str(locked)])
    qtbot.waitUntil(lambda: "password" in w.banner.text, timeout=10_000)
    assert "failed" in w.documents.item(0).text()


# --- 7: unknown device and dtype -------------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["classic", "auto"])
@pytest.mark.parametrize("flag", [("--device", "bogus"), ("--dtype", "fp99")])
def test_7_an_unknown_device_or_dtype_is_exit_3_for_every_engine(capsys, sample, tmp_path, engine, flag):
    rc = main(["convert", str(sample), "-o", str(tmp_path / "out"), "--engine", engine, *flag, "-q"])
    out, err = capsys.readouterr()
    assert rc == 3 and f"unknown {flag[0][2:]} {flag[1]!r}" in err and "Traceback" not in out + err


def test_7_the_pipeline_checks_the_device_for_classic_too(sample):
    from app.core.pipeline import Pipeline, PipelineError, PipelineOptions

    pipe = Pipeline(PipelineOptions(engine="classic", layout="page", device="gpu9"))
    with pytest.raises(PipelineError) as err:
        pipe.run(sample)
    pipe.close()
    assert err.value.kind == "engine" and "unknown device 'gpu9'" in str(err.value)


# --- 8: output sets, folder checks, temporaries, wording, noise ------------------------------------------------------

def test_8_a_failed_write_leaves_none_of_the_set_and_keeps_what_was_there(tmp_path, monkeypatch):
    from app.core.pipeline.output import DocumentOutput, write_document

    out = tmp_path / "out"
    first = write_document(_hostile_output(tmp_path), out, "doc", lambda *a: {}, ("md", "json", "html"))
    before = {p.name: p.read_bytes() for p in first.values() if p.is_file()}

    def broken(self, indent=1):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(DocumentOutput, "to_json", broken)
    changed = _hostile_output(tmp_path)
    changed.pages[0].regions[0].text = "new text"
    with pytest.raises(OSError, match="cannot write .*doc.json: No space left"):
        write_document(changed, out, "doc", lambda *a: {}, ("md", "json", "html"))
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # old set intact, no temps
    fresh = tmp_path / "fresh"
    with pytest.raises(OSError):
        write_document(changed, fresh, "doc", lambda *a: {}, ("md", "json"))
    assert list(fresh.iterdir()) == []


def test_8_the_output_folder_is_checked_before_any_decoding(capsys, sample, tmp_path, monkeypatch):
    import app.core.engines as engines

    opened = []
    real_open = engines.open_engine
    monkeypatch.setattr(engines, "open_engine", lambda name, **o: opened.append(name) or real_open(name, **o))
    out = tmp_path / "out"
    (out / "sample.json").mkdir(parents=True)  # something in the way of one file of the set
    rc = main(["convert", str(sample), "-o", str(out), "--engine", "classic", "-q"])
    out_text, err = capsys.readouterr()
    assert rc == 1 and "sample.json: a folder of that name is in the way" in err
    assert "sample.pdf: failed (output)" in out_text and not (out / "sample.md").exists()
    assert opened == []  # no OCR first: the engine was never opened


def test_8_stale_temporaries_of_ours_are_removed_and_nothing_else(capsys, sample, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = out / ".sample.md.999999-abc123.tmp"  # a killed run's (no such process)
    live = out / f".sample.json.{os.getpid()}-abc123.tmp"  # a run still writing (this process)
    foreign = out / ".notes.txt.999999-abc123.tmp"
    for p in (dead, live, foreign):
        p.write_text("partial")
    rc = main(["convert", str(sample), "-o", str(out), "--engine", "classic", "--layout", "page", "--ocr-dpi", "60",
               "-q"])
    out_text, _ = capsys.readouterr()
    assert rc == 0 and not dead.exists() and live.exists() and foreign.exists()
    assert "sample.pdf: 1 page, 1 region (1 read, 0 pictures)" in out_text  # never "1 pages"


def test_8_counts_are_plural_correct():
    from app.core.pipeline.options import parse_pages
    from app.core.base.wording import count

    assert [count(n, "page") for n in (0, 1, 2)] == ["0 pages", "1 page", "2 pages"]
    with pytest.raises(ValueError, match=r"has 1 page\)"):
        parse_pages("3", 1)


def test_8_third_party_noise_is_hidden_unless_verbose():
    script = ("import logging, numpy as np; from app.core.base.noise import quiet_third_party; import sys; "
              "quiet_third_party(verbose=sys.argv[1] == 'v'); "
              "logging.getLogger('RapidOCR').addHandler(logging.StreamHandler()); "
              "logging.getLogger('RapidOCR').warning('The text detection result is empty'); np.mean(np.array([]))")
    quiet = subprocess.run([sys.executable, "-c", script, "q"], capture_output=True, text=True, cwd=ROOT)
    loud = subprocess.run([sys.executable, "-c", script, "v"], capture_output=True, text=True, cwd=ROOT)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert "The text detection result is empty" in loud.stderr and "RuntimeWarning" in loud.stderr


# --- 9: a failed open in the document list ---------------------------------------------------------------------------

@pytest.mark.parametrize("run", [False, True])
def test_9_a_failed_open_says_failed_in_the_document_list(qtbot, tmp_path, run):
    from app.gui.main_window import MainWindow

    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"%PDF-1.7 but nothing else")
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_files([str(junk)], run=run)
    qtbot.waitUntil(lambda: "failed" in w.documents.item(0).text(), timeout=20_000)
    assert "0 blocks" not in w.documents.item(0).text()
    w.cancel_run(discard=True)
