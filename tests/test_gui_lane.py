"""The decoding lane's GUI handle (app.gui.worker.DecodeClient) on its real worker thread: what a run records
goes to that run's own trace. No widgets, no model: the runs asked for here end at once (a missing file)."""
from __future__ import annotations

from app.core.record import events as ev


def test_a_cancelled_runs_late_events_go_to_its_own_trace_never_to_the_next_runs(qtbot, tmp_path):
    """The race: a trace recorder is set on the lane just before a run is submitted, and the run it replaces
    is only cancelled (it stops between two forwards), so its last events were written into the NEW run's
    trace, which a replay then applied as if the new run had read them."""
    from app.core.pipeline.options import PipelineOptions
    from app.core.review.runner import RunRequest
    from app.gui.worker import DecodeClient

    client = DecodeClient()
    first: list = []
    second: list = []
    try:
        client.recorder = first.append
        one = client.submit(RunRequest(str(tmp_path / "missing.pdf"), PipelineOptions(engine="classic")))
        client.recorder = second.append  # the next run records to its own trace
        client.submit(RunRequest(str(tmp_path / "missing.pdf"), PipelineOptions(engine="classic")))
        late = ev.RegionFinished(region_id="p1-r01", text="read by the cancelled run")
        client.emitter(one)(late)  # what the first run's pipeline emits on the worker, after the second began
        assert late in first and late not in second
        qtbot.waitUntil(lambda: not client.running, timeout=60_000)
    finally:
        client.shutdown()
    assert client._thread.isFinished()
