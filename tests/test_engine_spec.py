"""One place per engine: a toy engine (tests/toy_engine.py: one module) registered with one spec line is offered by
`convert --help` with its options, converts the sample, is in the window's engine box, and its options are rows of
Preferences — its secret kept out of the settings file. The specs' own checks, and the kind as a function of the
options (a remote engine under the Unlimited profile reads whole pages)."""
from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.engines import ENGINES, EngineOption, EngineSpec, fallback_engine, open_engine, register, unregister

TOY = EngineSpec(
    "shout", "Shouting OCR (toy)", "region", "toy_engine:open_engine",
    options=(EngineOption("case", str, "upper", "letter case of the text", choices=("upper", "lower"),
                          label="Letter case"),
             EngineOption("token", str, "", "a toy secret", secret=True)),
)


@pytest.fixture
def toy():
    register(TOY)
    yield TOY
    unregister(TOY.name)


def test_convert_help_offers_the_toy_engine_and_its_options(toy, capsys):
    with pytest.raises(SystemExit) as done:
        main(["convert", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "shout" in text.split("--engine", 1)[1].split("\n", 1)[0]  # among --engine's choices
    assert "--engine shout (Shouting OCR (toy))" in text and "--case {upper,lower}" in text
    assert "$SCRIPTORIUM_SHOUT_TOKEN" in text and "--token" not in text  # a secret is never a flag


def test_the_toy_engine_converts_the_sample(toy, tmp_path, monkeypatch):
    from app.core.document.sample_documents import make_small_report

    pdf = make_small_report(tmp_path / "report.pdf")
    monkeypatch.setenv("SCRIPTORIUM_SHOUT_TOKEN", "s3cret")
    out = tmp_path / "out"
    assert main(["convert", str(pdf), "-o", str(out), "--engine", "shout", "--case", "lower", "--layout", "pymupdf",
                 "--pages", "1", "--text-layer", "ignore", "--trace", str(tmp_path / "t.jsonl"), "-q"]) == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["engine"] == "shout"
    read = [b for b in doc["pages"][0]["blocks"] if b["task"] in ("text", "table")]
    assert read and all(b["engine"] == "shout" and b["stats"]["case"] == "lower" for b in read)
    assert all(b["stats"]["token_given"] for b in read)
    title = read[0]["text"]
    assert title == title.lower() and "field" in title and "notes" in title  # the sample's heading, "Field Notes"
    assert "s3cret" not in (tmp_path / "t.jsonl").read_text() + (out / "report.json").read_text()
    with pytest.raises(SystemExit) as refused:  # a value the option's choices refuse: a bad command line
        main(["convert", str(pdf), "-o", str(tmp_path / "bad"), "--engine", "shout", "--case", "sideways", "-q"])
    assert refused.value.code == 2


def test_the_window_offers_the_toy_engine_and_preferences_its_options(toy, qtbot, artifacts_dir):
    from PySide6.QtWidgets import QComboBox, QLineEdit

    from app.gui.main_window import MainWindow
    from app.gui.preferences import PreferencesDialog

    w = MainWindow()
    qtbot.addWidget(w)
    box = w.engine_bar.engine
    assert [box.itemData(i) for i in range(box.count())] == ["auto", *ENGINES] and "shout" in ENGINES
    w.engine_bar.set_engine("shout")
    assert box.currentText() == "Shouting OCR (toy)"
    assert w.engine_bar.pipeline_options().engine_options == {"case": "upper"}  # no secret given yet
    dialog = PreferencesDialog(w.settings, w)
    qtbot.addWidget(dialog)
    case, token = dialog.editors["shout_case"], dialog.editors["shout_token"]
    assert isinstance(case, QComboBox) and isinstance(token, QLineEdit)
    assert token.echoMode() == QLineEdit.EchoMode.Password
    case.setCurrentText("lower")
    token.setText("s3cret")
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.grab().save(str(artifacts_dir / "preferences_toy_engine.png"))
    dialog.accept()
    assert w.engine_bar.pipeline_options().engine_options == {"case": "lower", "token": "s3cret"}
    w.settings._qs.sync()
    saved = open(w.settings.path, encoding="utf-8").read()
    assert "shout_case=lower" in saved and "s3cret" not in saved and "shout_token" not in saved


def test_a_spec_checks_its_options():
    case = TOY.options[0]
    assert case.check("lower") == "lower" and case.widget_kind == "choice" and case.cli_flag == "--case"
    with pytest.raises(ValueError):
        case.check("sideways")
    with pytest.raises(ValueError):
        EngineOption("n", int, 0, minimum=1).check("0")
    with pytest.raises(ValueError):
        EngineSpec("x", "X", "pages", "m:f")  # a kind that is neither region nor document
    with pytest.raises(ValueError):
        register(ENGINES["classic"])  # a name already taken
    stream = next(o for o in ENGINES["remote"].options if o.name == "stream")
    assert stream.cli_flag == "--no-stream" and stream.widget_kind == "check"
    assert fallback_engine().name == "classic" and fallback_engine().manifest == ""  # auto's last resort: no weights


def test_the_remote_kind_follows_its_profile():
    remote = ENGINES["remote"]
    assert remote.kind_for({}) == "region" and remote.kind_for({"profile": "unlimited"}) == "document"
    for profile in ("glmocr", "unlimited"):
        engine = open_engine("remote", servers=["http://127.0.0.1:9/v1"], profile=profile, check=False)
        assert engine.kind == remote.kind_for({"profile": profile})
        engine.close()


def test_no_module_outside_the_engines_asks_an_engine_by_its_name():
    """What an engine is (its kind, whether it is the fallback, reads the layout's lines or formulas, its options)
    is asked of its spec: a name compared to a string outside app/core/engines is a second place to add an engine."""
    import re
    from pathlib import Path

    import app

    root = Path(app.__file__).parent
    names = "|".join(re.escape(n) for n in ENGINES)
    asked = re.compile(rf'(==|!=)\s*"({names})"|"({names})"\s*(==|!=)')
    found = [f"{path.relative_to(root)}:{n}" for path in root.rglob("*.py")
             if root / "core" / "engines" not in path.parents
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if asked.search(line)]
    assert not found, found


def test_convert_says_which_required_engine_option_is_missing(tmp_path, capsys):
    from app.core.document.sample_documents import make_small_report

    pdf = make_small_report(tmp_path / "report.pdf")
    assert main(["convert", str(pdf), "-o", str(tmp_path / "out"), "--engine", "remote", "-q"]) == 2
    assert "--engine remote needs --server" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # the spec's bounds are the flag's
        main(["convert", str(pdf), "-o", str(tmp_path / "out"), "--engine", "remote", "--concurrency", "0"])
    assert refused.value.code == 2 and "below 1" in capsys.readouterr().err
