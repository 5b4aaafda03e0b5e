"""The window's Export writes the formats Preferences → Files choose (any of `convert --formats`), the ALTO version
chosen there, and says why when a format does not exist."""
from __future__ import annotations

import pytest

from export_kit import assert_valid_alto
from test_gui_export_task import _feed


def test_export_writes_the_formats_and_alto_version_preferences_choose(qtbot, tmp_path):
    from app.core.document.sample_documents import make_sample_pdf
    from app.gui.main_window import MainWindow

    pdf = str(make_sample_pdf(tmp_path / "long.pdf", pages=8))
    w = MainWindow()
    qtbot.addWidget(w)
    w.open_files([pdf], run=False)
    _feed(w, pdf)
    assert w.settings.get("export_formats") == "md,json,html,pdf"  # as before, unless chosen
    w.settings.set("export_formats", "alto, docx,md")
    w.settings.set("alto_version", "2")
    written = w.export_current(tmp_path / "gui" / "long.md")
    assert [p.name for p in written] == ["long.md", "long.docx", "long.alto.xml"]
    tree = assert_valid_alto(written[2], 2)
    assert [s.get("CONTENT") for s in tree.iter("{http://www.loc.gov/standards/alto/ns-v2#}String")][:4] == \
        ["Page", "1", "block", "1"]

    w.settings.set("export_formats", "md,rtf")
    with pytest.raises(OSError, match="unknown output format 'rtf'"):
        w.export_current(tmp_path / "bad" / "long.md")
    assert "unknown output format 'rtf'" in w.banner.text and not (tmp_path / "bad").exists()
    assert w.actions.export.isEnabled() and not w.exporter.running
