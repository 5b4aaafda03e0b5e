def test_main_window_appears_and_is_photographed(qtbot, artifacts_dir):
    from app.gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    assert w.windowTitle().startswith("Scriptorium")
    assert w.grab().save(str(artifacts_dir / "main_window_empty.png"))
