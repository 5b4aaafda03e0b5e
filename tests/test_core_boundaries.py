"""app.core must never import Qt (the GUI depends on core, never the reverse)."""
import pkgutil
import subprocess
import sys
from pathlib import Path

import app.core


def test_core_imports_no_qt():
    names = [m.name for m in pkgutil.walk_packages(app.core.__path__, "app.core.")]
    code = (
        "import importlib, sys\n"
        f"for n in {names!r}:\n"
        "    importlib.import_module(n)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'PyQt6', 'PyQt5', 'qasync'))\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_core_sources_mention_no_qt():
    root = Path(app.core.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "PySide6" not in text and "qasync" not in text, path
