"""`python -m app diff TRACE_A TRACE_B`: two recorded decodes of the same regions compared in the terminal: per
region the first output token where they part (with what each model believed there, when the reject inspector
recorded it), TPF and decode time for each, and the text diff. Exits 1 when any region's text differs, 0 when all
are equal, 2 when a file is not a readable trace: fit for CI (e.g. bf16 against fp32 on a set of pages)."""
from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace_a", help="trace file A (JSON lines, written by a run with recording on)")
    p.add_argument("trace_b", help="trace file B")
    p.add_argument("--region", action="append", help="compare only this region id (repeatable)")
    p.add_argument("--quiet", action="store_true", help="print only the regions that differ and the summary")


def _top(slot) -> str:
    if slot is None:
        return "not recorded"
    pairs = [f"{t!r} {p:.3f}" for t, p in zip(slot.verify_texts or [f"#{i}" for i in slot.verify_top],
                                               slot.verify_probs)]
    return ", ".join(pairs[:5]) + f" (entropy {slot.verify_entropy:.2f} bits)"


def format_comparison(comp, name_a: str, name_b: str, *, quiet: bool = False) -> str:
    out = [f"A: {name_a}  [{comp.label_a}]", f"B: {name_b}  [{comp.label_b}]", ""]
    differ = 0
    for reg in comp.regions:
        a, b, d = reg.a, reg.b, reg.divergence
        if a is None or b is None:
            differ += 1
            out.append(f"region {reg.region_id}: only in {'B' if a is None else 'A'}")
            continue
        same = reg.same_text
        differ += not same
        if quiet and same and d is None:
            continue
        verdict = "same text" if same else "TEXT DIFFERS"
        if same and d is not None:
            verdict = "same text, different tokens"
        out.append(f"region {reg.region_id}: {verdict}")
        out.append(f"  A: {a.mode}{f' B={a.block_size}' if a.block_size else ''} · {len(a.tokens)} tokens · "
                   f"TPF {a.tpf:.2f} · {a.decode_ms:.1f} ms")
        out.append(f"  B: {b.mode}{f' B={b.block_size}' if b.block_size else ''} · {len(b.tokens)} tokens · "
                   f"TPF {b.tpf:.2f} · {b.decode_ms:.1f} ms")
        if d is None:
            out.append("  first divergence: none (the same tokens)")
        elif d.index < 0:
            out.append(f"  first divergence: character {d.char} (no tokens recorded): A {d.a_text!r} vs B {d.b_text!r}")
        else:
            show = lambda tok, text: "end of output" if tok is None else f"{text!r} (#{tok})"  # noqa: E731
            out.append(f"  first divergence: output token {d.index}"
                       f"{f', character {d.char}' if d.char >= 0 else ''}: A {show(d.a_token, d.a_text)} vs "
                       f"B {show(d.b_token, d.b_text)}")
            out.append(f"    after: …{d.context!r}")
            out.append(f"    A's verifier there: {_top(d.a_slot)}")
            out.append(f"    B's verifier there: {_top(d.b_slot)}")
        if not same:
            from app.core.record.trace_compare import word_diff_text

            out.append(f"  text: {word_diff_text(a.text, b.text)}")
    total = [r for r in comp.regions if r.a is not None and r.b is not None]
    if total:
        tok_a, tok_b = sum(len(r.a.tokens) for r in total), sum(len(r.b.tokens) for r in total)
        ms_a, ms_b = sum(r.a.decode_ms for r in total), sum(r.b.decode_ms for r in total)
        out.append("")
        out.append(f"{len(comp.regions)} region(s), {differ} differ · A {tok_a} tokens in {ms_a:.1f} ms · "
                   f"B {tok_b} tokens in {ms_b:.1f} ms")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from app.core.record.trace import TraceError, load_trace
    from app.core.record.trace_compare import compare

    try:
        a, b = load_trace(args.trace_a), load_trace(args.trace_b)
    except TraceError as exc:
        print(f"scriptorium diff: {exc}", file=sys.stderr)
        return 2
    comp = compare(a.events, b.events, regions=args.region)
    if not comp.regions:
        print("scriptorium diff: neither trace decoded a region", file=sys.stderr)
        return 2
    print(format_comparison(comp, args.trace_a, args.trace_b, quiet=args.quiet))
    return 0 if comp.same else 1
