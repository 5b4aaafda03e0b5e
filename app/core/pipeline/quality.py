"""How far a block can be trusted, from the region alone: its run status, its honest outcome (ok, truncated at its
token budget, repetition-blocked, garbled, error, cancelled…), and why it needs a person's review (low confidence,
high CER against the text layer, truncated, repetition, garbled or unread text, characters outside the page's
script, error). The thresholds are defined here once; the JSON, the page
badges, the document list and the "next block needing review" key all read them from here.

What must never live here: decoding, Qt, writing files.
"""
from __future__ import annotations

from typing import Any, Iterable

from app.core.document.regions import DECODED_TASKS, Region
from app.core.pipeline.assembly import formula_problem
from app.core.text.textcheck import dominant_script, text_reasons

LOW_MEAN_CONFIDENCE = 0.80  # a block whose tokens' mean probability is below this needs review
LOW_MIN_CONFIDENCE = 0.30  # … or whose least sure token is below this
HIGH_CER = 0.10  # a block further than this from the PDF's own text layer needs review
OUTCOMES = ("ok", "truncated", "repetition-blocked", "garbled", "error", "cancelled", "pending", "skipped")
# what an engine's stats say when the decode ended at its token budget (GLM-OCR family: "stopped"; R-SWA: "stop")
_BUDGET_STOPS = ("max_new_tokens", "budget", "length")


def region_status(r: Region) -> str:
    """pending | done | cancelled | truncated | failed | skipped, from the region alone (the pipeline and the review
    session record results on regions the same way: app.core.document.regions.record_result)."""
    if r.task not in DECODED_TASKS:
        return "skipped"
    if "error" in r.flags:
        return "failed"
    if "cancelled" in r.flags:
        return "cancelled"
    if "truncated" in r.flags:  # cut at its token budget: incomplete, never done
        return "truncated"
    return "done" if "stats" in r.extra else "pending"


def region_outcome(r: Region) -> str:
    """The honest outcome of a block's last read (one of OUTCOMES): a read that ended at its token budget is
    "truncated", one whose repetition guard had to ban tokens is "repetition-blocked", never plain "ok"."""
    status = region_status(r)
    if status != "done":
        return {"failed": "error"}.get(status, status)
    stats = r.extra.get("stats") or {}
    if stats.get("stopped") in _BUDGET_STOPS or stats.get("stop") in _BUDGET_STOPS:
        return "truncated"
    if stats.get("stopped") == "repetition" or int(stats.get("ngram_bans") or 0) > 0:
        return "repetition-blocked"
    if garbled_reasons(r):
        return "garbled"
    return "ok"


def garbled_reasons(r: Region) -> list[str]:
    """Why a read block's text is not really text: lines left mostly unread (a script the recogniser does not
    know), placeholder characters, one character repeated (app.core.text.textcheck)."""
    stats = r.extra.get("stats") or {}
    reasons = [t for t in text_reasons(r.text) if not t.startswith("characters outside")]
    unread = int(stats.get("unreadable_lines") or 0)
    if unread:
        reasons.append(f"{unread} of {stats.get('lines', unread)} lines mostly unread (a script the engine cannot "
                       f"read?)")
    return reasons


def region_confidence(r: Region) -> dict[str, float] | None:
    conf = r.extra.get("confidence")
    return conf if isinstance(conf, dict) and "mean" in conf and "min" in conf else None


def review_reasons(r: Region) -> list[str]:
    """Why a block needs a person's look ([] when it does not), most serious first, in words for a person."""
    if r.task not in DECODED_TASKS:
        return []
    outcome = region_outcome(r)
    reasons = []
    if outcome == "error":
        why = (r.extra.get("stats") or {}).get("error")
        reasons.append(f"error: {why}" if why else "error")
    elif outcome in ("truncated", "repetition-blocked", "cancelled"):
        reasons.append(outcome)
    elif outcome == "garbled":
        reasons.extend(garbled_reasons(r))
    if outcome != "error":
        # a block whose lines a recogniser of their own script read is in that script on purpose (a mixed page)
        if not routed(r.extra.get("stats") or {}):
            reasons.extend(t for t in text_reasons(r.text, r.extra.get("page_script", ""))
                           if t.startswith("characters outside"))
        reasons.extend(script_reasons(r.extra.get("stats") or {}))
    conf = region_confidence(r)
    if conf is not None and (conf["mean"] < LOW_MEAN_CONFIDENCE or conf["min"] < LOW_MIN_CONFIDENCE):
        reasons.append(f"low confidence ({conf['mean']:.0%} mean, {conf['min']:.0%} min)")
    if r.extra.get("layout_missed"):  # app.core.layout.lost_lines: ink no layout region held
        reasons.append("the layout missed this text (read as plain text)")
    problem = formula_problem(r)  # no LaTeX to trust: the layer's reason, or read from a scan by OCR
    if problem:
        reasons.append(f"formula written as plain text: {problem}")
    inline = (r.extra.get("stats") or {}).get("inline_formula_problems")  # app.core.text.inline_math
    if inline:
        reasons.append(f"inline formula written as plain text: {inline}")
    if r.extra.get("handwriting"):  # app.core.layout.handwriting: the recogniser is trained on print
        reasons.append("handwriting")
    cer = r.extra.get("cer")
    if isinstance(cer, (int, float)) and cer > HIGH_CER:
        reasons.append(f"CER {cer:.0%}")
    if outcome != "error":
        reasons.extend(disagreement_reasons(r.extra.get("stats") or {}))
    return reasons


def routed(stats: dict) -> bool:
    """Were some of the block's lines read by a recogniser for their own script (app.core.scripts)?"""
    return any(str(name).startswith("tesseract") for name in stats.get("readers") or {})


def script_reasons(stats: dict) -> list[str]:
    """Lines in a script no installed recogniser reads, with the line that installs one (app.core.scripts), and
    vertical text (read as turned lines: its reading order is not checked)."""
    out = []
    for m in stats.get("unreadable_scripts") or []:
        n, script, install = int(m.get("lines") or 0), m.get("script") or "", m.get("install") or ""
        what = f"in {script}, which no installed recogniser reads" if script else \
            "in a script no installed recogniser reads"
        out.append(f"{n} line{'s' if n != 1 else ''} {what}" + (f" (install: {install})" if install else ""))
    n = int(stats.get("vertical_lines") or 0)
    if n:
        out.append(f"vertical text ({n} line{'s' if n != 1 else ''}): its reading order is not checked")
    return out


def _quoted(text: str, room: int = 40) -> str:
    text = " ".join(str(text).split())
    return f"“{text if len(text) <= room else text[:room - 1] + '…'}”"


def disagreement_reasons(stats: dict) -> list[str]:
    """The built-in engine's lines whose text the decoder changed from the recogniser's reading (`disagrees` in
    `line_stats` with a text other than `recogniser`), and the words its word list changed (`words_settled`):
    guesses worth a person's look, named with the first such line or word. A line where the two disagreed but the
    recogniser's sure reading stood is marked in the stats only."""
    per_line = [s for s in stats.get("line_stats") or [] if isinstance(s, dict)]
    out = []
    # where the recogniser was sure its reading stood (the arbiter): a disagreement that changed nothing is noise
    lines = [s for s in per_line if s.get("disagrees") and s.get("text") != s.get("recogniser")]
    if lines:
        first = lines[0]
        n = len(lines)
        out.append(f"decoder overruled the recogniser on {n} line{'s' if n > 1 else ''}: recogniser "
                   f"{_quoted(first.get('recogniser', ''))}, written {_quoted(first.get('text', ''))}")
    words = [tuple(c) for s in per_line for c in s.get("words_settled") or () if len(c) == 2]
    if words:
        n = len(words)
        out.append(f"{n} unsure word{'s' if n > 1 else ''} settled by the word list: "
                   f"{_quoted(words[0][0], 24)} → {_quoted(words[0][1], 24)}")
    return out


def mark_page_script(regions: list[Region]) -> None:
    """Record the script most of a page's read text is in on each of its decoded regions, so a block in another
    script can be flagged (review_reasons)."""
    decoded = [r for r in regions if r.task in DECODED_TASKS]
    script = dominant_script(r.text for r in decoded)
    for r in decoded:
        r.extra["page_script"] = script


def outcome_counts(regions: Iterable[Region]) -> dict[str, int]:
    """How many blocks of each outcome (decoded tasks only), every outcome named even at 0."""
    counts = {o: 0 for o in OUTCOMES if o != "skipped"}
    for r in regions:
        if r.task in DECODED_TASKS:
            counts[region_outcome(r)] += 1
    return counts


def review_summary(regions: list[Region], reviewed: set[str], edited: set[str]) -> dict[str, Any]:
    """The document's review state for the JSON: outcomes counted, and how many blocks need review, were reviewed
    or edited by a person."""
    decoded = [r for r in regions if r.task in DECODED_TASKS]
    return {"outcomes": outcome_counts(decoded),
            "needs_review": sum(1 for r in decoded if review_reasons(r) and r.id not in reviewed),
            "reviewed": sum(1 for r in decoded if r.id in reviewed),
            "edited": sum(1 for r in decoded if r.id in edited)}
