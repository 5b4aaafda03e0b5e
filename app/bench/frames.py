"""`python -m app bench frames [--quick] [--tokens N]`: how long the decoding views take to digest and draw a long run.

A synthetic 10,000-token trace (self-speculative rounds for the rounds view, R-SWA steps for the window view;
event shapes exactly as the engines emit them) is fed into `DecodingViews` on the offscreen platform. Printed:
the cost of feeding events (µs per event, what the GUI thread pays while a run streams in) and the frame time
(ms to flush pending state and paint every visible widget of a view) at several points of the run. The budget
is 16.7 ms a frame (60 fps). Then the player: a fast replay of the window trace (frames drawn a second against the
views' cap of about 60, whatever the event rate) and a ×5 slow playback (rounds played in 0.3 s against the
rounds its 12 ms × 5 minimum allows), `--reps` times each.

The synthetic traces also serve the view tests before/beside traces of real tiny-model runs.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from app.core.record.events import (
    Event,
    NgramBanned,
    PrefixLaid,
    RegionFinished,
    RegionStarted,
    RoundVerified,
    RunFinished,
    RunStarted,
    WindowStepped,
)

WORDS = "the of and a in to is was for on with as by at from that this an are be or which table formula".split()


def _word_tokens(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        w = rng.choice(WORDS)
        out.append(" " + w if out and rng.random() > 0.08 else ("\n" + w if out else w))
    return out[:n]


def synthetic_rounds_trace(tokens: int = 10_000, *, block_size: int = 8, seed: int = 0, region_id: str = "p0-r0") -> list[Event]:
    """A self-speculative run of one region: RoundVerified events obeying the accept rule (docs/architecture.md, The
    self-speculative round)."""
    rng = random.Random(seed)
    texts = _word_tokens(rng, tokens + block_size + 2)
    vocab = {t: i + 10 for i, t in enumerate(sorted(set(texts)))}
    events: list[Event] = [
        RunStarted(engine="gravity", document="synthetic.pdf", model="synthetic", device="cpu", block_size=block_size),
        RegionStarted(region_id=region_id, page=0, task="text", engine="gravity", prompt_tokens=64, max_new_tokens=tokens),
    ]
    pos, r, cache = 0, 0, 64
    while pos < tokens:
        n = block_size + 1
        k = min(n, int(rng.expovariate(0.45)) + 1)
        truth = texts[pos : pos + n + 1]
        cand_t = list(truth[:n])
        ver_t = list(truth[:n])
        if k < n:
            cand_t[k] = rng.choice(WORDS)
            if cand_t[k] == truth[k]:
                cand_t[k] = " ~"
            for j in range(k + 1, n):
                cand_t[j] = rng.choice(WORDS)
        new_t = cand_t[:k] + [ver_t[k]] if k < n else cand_t + [truth[n]]
        new_t = new_t[: tokens - pos]
        cands = [vocab.get(t, 9) for t in cand_t]
        vers = [vocab.get(t, 9) for t in ver_t]
        new = [vocab.get(t, 9) for t in new_t]
        pos += len(new)
        cache += len(new)
        events.append(
            RoundVerified(
                region_id=region_id, round_index=r, k=k, candidates=cands, verified=vers, new_tokens=new,
                text="".join(new_t), draft_ms=round(rng.uniform(2.5, 4.0), 3), verify_ms=round(rng.uniform(3.0, 4.5), 3),
                cache_len=cache - 1, candidate_texts=cand_t, verified_texts=ver_t + ([truth[n]] if k >= n else []),
                bonus=vocab.get(truth[n], 9) if k >= n else None, block_size=block_size, output_len=pos,
            )
        )
        r += 1
    text = "".join(e.text for e in events if isinstance(e, RoundVerified))
    events.append(RegionFinished(region_id=region_id, text=text, stats={"rounds": r, "tokens": pos, "ar_tokens_per_s": 140.0}))
    events.append(RunFinished(stats={"regions": 1}))
    return events


def synthetic_window_trace(tokens: int = 10_000, *, window: int = 128, pages: int = 2, seed: int = 0, region_id: str = "doc") -> list[Event]:
    """A whole-document R-SWA run: PrefixLaid then one WindowStepped per output (the formulas of docs/architecture.md,
    The R-SWA window)."""
    rng = random.Random(seed)
    segments = [{"kind": "bos", "label": "BOS", "start": 0, "end": 1}]
    pos = 1
    for p in range(pages):
        segments.append({"kind": "image", "label": f"page {p + 1}", "start": pos, "end": pos + 273})
        pos += 273
    segments.append({"kind": "prompt", "label": "Multi page parsing.", "start": pos, "end": pos + 5})
    P = pos + 5
    layers, heads, hdim, dbytes = 12, 4, 64, 2
    per_pos = 2 * layers * heads * hdim * dbytes
    events: list[Event] = [
        RunStarted(engine="unlimited", document="synthetic.pdf", model="synthetic", device="cpu"),
        RegionStarted(region_id=region_id, page=0, task="document", engine="unlimited", prompt_tokens=P, max_new_tokens=tokens),
        PrefixLaid(region_id=region_id, prefix_len=P, window=window, segments=segments, layers=layers, kv_heads=heads, head_dim=hdim, dtype_bytes=dbytes),
    ]
    texts = _word_tokens(rng, tokens)
    for c, t in enumerate(texts):
        lo = max(0, c - window)
        stored = P + min(c, window - 1) if c else P
        events.append(
            WindowStepped(
                region_id=region_id, step=c, token=100 + sum(map(ord, t)) % 500, text=t, prefix_len=P, decoded=c + 1,
                attended=(lo, c), evicted=(c - window - 1) if c - window - 1 >= 0 else None,
                cache_positions=stored, cache_bytes=stored * per_pos, full_positions=P + c, full_bytes=(P + c) * per_pos,
                ms=round(rng.uniform(4, 6), 3),
            )
        )
        if c and c % 997 == 0:
            events.append(NgramBanned(region_id=region_id, step=c, token=42, ngram_start=max(0, c - 35), text=" the"))
    events.append(RegionFinished(region_id=region_id, text="".join(texts), stats={"tokens": tokens}))
    events.append(RunFinished(stats={}))
    return events


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))] if s else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scriptorium bench frames", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 tokens instead of 10,000, fewer frames")
    parser.add_argument("--tokens", type=int, default=None, help="tokens in the synthetic run")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the player's measurements (default 3)")
    args = parser.parse_args(argv or [])
    tokens = args.tokens or (2_000 if args.quick else 10_000)
    frames = 20 if args.quick else 60
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.gui.views import DecodingViews

    app = QApplication.instance() or QApplication([])
    rows = []
    for name, trace in (("rounds", synthetic_rounds_trace(tokens)), ("window", synthetic_window_trace(tokens))):
        views = DecodingViews()
        views.resize(1200, 800)
        views.show()
        app.processEvents()
        per_frame = 1 if name == "rounds" else 4  # events arriving per 1/60 s from a fast GPU
        checkpoints = [int(len(trace) * f) for f in (0.25, 0.5, 0.75, 1.0)]
        catch_up: list[float] = []
        steady: list[float] = []
        feed_s = 0.0
        done = 0
        steady_frames = max(1, frames // len(checkpoints))
        for cp in checkpoints:
            stop = max(done, cp - steady_frames * per_frame)
            t0 = time.perf_counter()
            for ev in trace[done:stop]:
                views.feed(ev)
            feed_s += time.perf_counter() - t0
            done = stop
            t0 = time.perf_counter()  # one frame catching up with a quarter of the run fed at once (a scrub)
            views.render_frame(paint_now=True)
            catch_up.append((time.perf_counter() - t0) * 1000)
            while done < cp:  # live frames: a few new events, then flush + paint
                t0 = time.perf_counter()
                for ev in trace[done : done + per_frame]:
                    views.feed(ev)
                done = min(cp, done + per_frame)
                views.render_frame(paint_now=True)
                steady.append((time.perf_counter() - t0) * 1000)
        rows.append((name, tokens, len(trace), feed_s / max(1, len(trace)) * 1e6, statistics.median(steady), _percentile(steady, 0.95), statistics.median(catch_up)))
        views.close()
        views.deleteLater()
        app.processEvents()
    print(f"frames benchmark: {tokens:,}-token synthetic trace, offscreen, 1200x800 (budget 16.7 ms/frame)")
    print("live frame = feed the events of 1/60 s (1 round, or 4 window steps) + flush + paint every widget shown")
    print(f"{'view':<8} {'tokens':>7} {'events':>7} {'feed µs/ev':>11} {'live frame ms p50':>18} {'p95':>7} {'catch-up frame ms':>18}")
    for name, tok, nev, feed_us, p50, p95, cu in rows:
        print(f"{name:<8} {tok:>7,} {nev:>7,} {feed_us:>11.1f} {p50:>18.2f} {p95:>7.2f} {cu:>18.1f}")
    _player_rows(app, tokens, max(1, args.reps))
    return 0


def _play(app, views, events, speed: float, seconds: float | None = None) -> tuple[float, int, int]:
    """Play `events` through the views' player at `speed` (0: as fast as it goes) to the end, or for `seconds`;
    (wall seconds, frames drawn, events played)."""
    from PySide6.QtCore import QEventLoop, QTimer

    player = views.load_trace(events, None, play=False)
    player.set_speed(speed)
    loop = QEventLoop()
    player.state_changed.connect(lambda s: loop.quit() if s == "finished" else None)
    if seconds is not None:
        QTimer.singleShot(int(seconds * 1000), loop.quit)
    frames0 = views.frames
    t0 = time.perf_counter()
    player.play()
    loop.exec()
    player.pause()
    elapsed = time.perf_counter() - t0
    app.processEvents()
    return elapsed, views.frames - frames0, player.position


def _player_rows(app, tokens: int, reps: int) -> None:
    from app.gui.views import DecodingViews

    views = DecodingViews()
    views.resize(1200, 800)
    views.show()
    window = synthetic_window_trace(tokens)
    rounds = synthetic_rounds_trace(160, block_size=4, seed=5)
    fast, slow = [], []
    for _ in range(reps):
        views.reset()
        elapsed, drawn, _played = _play(app, views, window, 0.0)
        fast.append((elapsed, drawn / max(elapsed, 1e-9)))
        views.reset()
        elapsed, _drawn, played = _play(app, views, rounds, 5.0, seconds=0.3)
        n = sum(isinstance(e, RoundVerified) for e in rounds[:played])
        slow.append((n, elapsed / (0.012 * 5) + 2))
    views.close()
    print(f"player, {reps} repetitions (median):")
    print(f"  fast replay of {len(window):,} window events: {statistics.median(e for e, _ in fast):.2f} s, "
          f"{statistics.median(f for _, f in fast):.0f} frames/s (cap about 60: ratio "
          f"{statistics.median(f for _, f in fast) / 60:.2f})")
    print(f"  x5 slow playback for 0.3 s: {statistics.median(n for n, _ in slow):.0f} rounds played, at most "
          f"{statistics.median(m for _, m in slow):.0f} allowed (ratio "
          f"{statistics.median(n / m for n, m in slow):.2f})")
