import subprocess
import sys

from app import __version__


def _run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=60, **kw)


def test_help_lists_subcommands():
    out = _run("--help")
    assert out.returncode == 0, out.stderr
    for name in ("convert", "replay", "bench", "models", "train"):
        assert name in out.stdout


def test_version():
    out = _run("--version")
    assert out.returncode == 0
    assert __version__ in out.stdout


def test_help_and_window_module_import_no_torch():
    """The window must appear before any model is needed: importing the GUI and CLI must not pull in torch."""
    code = (
        "import sys; import app.cli; app.cli.build_parser(); import app.gui.main_window; "
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_unknown_benchmark_is_named(capsys):
    from app.cli import main

    assert main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert "there is no benchmark 'nope'" in err and "selfspec" in err
