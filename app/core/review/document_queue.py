"""The document queue as the window shows it: every open document with its place in the run order and its state
(queued / running / done / failed / cancelled / idle), the queue's overall progress, and the two things a person
does to a queue (move a waiting document, take one out). Qt-free: it reads and edits the run controller's queue.

What must never live here: Qt, starting runs (app.core.review.runs owns that).
"""
from __future__ import annotations

from dataclasses import dataclass

STATES = ("queued", "running", "done", "failed", "cancelled", "idle")
_OUTCOME = {"finished": "done", "failed": "failed", "cancelled": "cancelled"}


@dataclass(frozen=True)
class DocumentQueueRow:
    path: str
    name: str
    state: str  # one of STATES
    position: int  # 1-based place among the queued documents (0: not waiting)
    read: int  # blocks read by its current or last run
    to_read: int


def queue_rows(runs) -> list[DocumentQueueRow]:
    """The running document first, then the waiting ones in order, then the rest (as the session lists them)."""
    running = runs.work if runs.lane.running else None
    docs = {d.path: d for d in runs.session.documents}
    rows: list[DocumentQueueRow] = []
    if running is not None and running.path in docs:
        rows.append(DocumentQueueRow(running.path, running.name, "running", 0, running.run.read, running.run.to_read))
    for k, path in enumerate(p for p in runs.queue if p in docs):
        d = docs[path]
        rows.append(DocumentQueueRow(path, d.name, "queued", k + 1, 0, 0))
    listed = {r.path for r in rows}
    for d in runs.session.documents:
        if d.path not in listed:
            rows.append(DocumentQueueRow(d.path, d.name, _OUTCOME.get(d.run.outcome, "idle"), 0, d.run.read, d.run.to_read))
    return rows


def overall(rows: list[DocumentQueueRow]) -> tuple[int, int]:
    """(documents finished, documents queued): the queue is what runs, waits, or ended since it was opened."""
    queued = [r for r in rows if r.state != "idle"]
    return sum(r.state in ("done", "failed", "cancelled") for r in queued), len(queued)


def move(runs, path: str, delta: int) -> bool:
    """Move a waiting document `delta` places (negative: earlier); False when it is not waiting or cannot move."""
    if path not in runs.queue:
        return False
    i = runs.queue.index(path)
    j = max(0, min(len(runs.queue) - 1, i + delta))
    if i == j:
        return False
    runs.queue.insert(j, runs.queue.pop(i))
    return True


def remove(runs, path: str) -> bool:
    """Take a waiting document out of the queue (it stays open)."""
    if path not in runs.queue:
        return False
    runs.queue.remove(path)
    return True
