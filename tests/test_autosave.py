"""The window's autosave policy (app.gui.autosave): a change schedules one save; changes while one is due add none;
a save made meanwhile (stop) leaves nothing due."""
from __future__ import annotations


def test_changes_while_a_save_is_due_make_one_save_and_stop_cancels_it(qtbot):
    from app.gui.autosave import Autosave

    saves: list[int] = []
    autosave = Autosave(lambda: 0.05, lambda: saves.append(1))
    assert not autosave.due
    for _ in range(5):  # a stream of tokens
        autosave.touch()
    assert autosave.due
    qtbot.waitUntil(lambda: saves == [1], timeout=30_000)
    assert not autosave.due
    qtbot.wait(200)
    assert saves == [1]  # one save for the five changes
    autosave.touch()
    autosave.stop()  # the window saved by itself meanwhile
    qtbot.wait(200)
    assert saves == [1] and not autosave.due
