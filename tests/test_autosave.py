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


def test_a_costly_save_spaces_the_next_ones_out(qtbot):
    """A save that costs (a long document's whole session) pushes the next one out to COST_FACTOR times its cost,
    so saving never takes more than a tenth of the time; a cheap one keeps the setting."""
    from app.gui.autosave import COST_FACTOR, Autosave

    cost = {"s": 0.0}
    autosave = Autosave(lambda: 2.0, lambda: None, cost=lambda: cost["s"])
    assert autosave.delay() == 2.0
    cost["s"] = 0.5  # 20 MB of JSON
    assert autosave.delay() == COST_FACTOR * 0.5 > 2.0
    autosave.touch()
    assert autosave._timer.isActive() and autosave._timer.interval() == 5_000
    autosave.stop()


def test_the_journal_records_what_its_save_cost(tmp_path):
    from app.gui.journal import Journal

    journal = Journal(tmp_path / "work.json")
    journal.save({"current": 0, "documents": []})
    assert journal.write_seconds > 0
    assert journal.load()["state"] == {"current": 0, "documents": []}
    assert "\n" not in (tmp_path / "work.json").read_text(encoding="utf-8")  # compact
    journal.close()
