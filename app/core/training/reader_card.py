"""The built-in reader's model card: the measured figures of a training run (reader_train) as Markdown, and the
verdict against the reading bar on the card's held-out lines."""
from __future__ import annotations

from typing import Any

BAR_CER = 0.02
BAR_TPF = 2.0


def verdict(report: dict[str, Any]) -> str:
    ev = report.get("eval") or {}
    if not ev:
        return "not measured"
    worst = max((v["cer"] for v in ev.get("per_font", {}).values()), default=1.0)
    ok = worst <= BAR_CER and ev.get("tpf", 0) >= BAR_TPF and ev.get("selfspec_equals_ar", False)
    return ("met" if ok else "NOT met") + f" (worst per-font CER {worst:.2%}, TPF {ev.get('tpf', 0):.2f})"


def model_card(report: dict[str, Any], cfg: Any, params: int) -> str:
    """The card for a run of `cfg` (a reader_train.ReaderConfig)."""
    from app.core.training.linedata import HELD_OUT_FONTS
    from app.core.engines.builtin.reader import PRESETS
    from app.core.rapid.recogniser import LICENSE_NOTE

    ev = report.get("eval") or {}

    def table(group: str) -> str:
        return "\n".join(f"| {k} | {v['lines']} | {v['chars']} | {v['cer']:.2%} | {v['rec_cer']:.2%} | "
                         f"{v.get('corrected', '')} | {v.get('broken', '')} |"
                         for k, v in ev.get(group, {}).items())

    head = ("| {} | lines | chars | CER model | CER recogniser | lines corrected | lines broken |\n"
            "|---|---|---|---|---|---|---|")
    rows = f"{head.format('font')}\n{table('per_font')}"
    if ev.get("per_script"):
        rows += f"\n\n{head.format('script')}\n{table('per_script')}\n\n{head.format('degradation')}\n" \
                f"{table('per_degradation')}"
    version = getattr(cfg, "version", 1)
    vocab = ("every character the recogniser writes (its 18,709-character dictionary: Latin, Greek, Chinese, "
             "Japanese, symbols)" if version == 2 else "300 characters")
    evidence = ("its confidence bin and its two best alternative characters (their own character rows, scaled and "
                "gated per slot and probability bin)" if version == 2 else
                "its confidence bin, its best alternative character and that alternative's probability bin")
    return f"""# Scriptorium built-in line reader

A {params / 1e6:.2f}M-parameter `GlmOcrForConditionalGeneration` text decoder (hidden {PRESETS[cfg.preset]['hidden']},
{PRESETS[cfg.preset]['layers']} layers, preset `{cfg.preset}`; its vision tower is a minimal unused stub) that reads the output of RapidOCR's
pretrained PP-OCRv6 line recogniser (`PP-OCRv6_rec_small.onnx`, run with ONNX Runtime): the recogniser's greedy CTC
characters, each with {evidence}, form a discrete prefix embedded with the model's own embedding table; the decoder
writes the line's text. Vocabulary (version {version}): {vocab}. Trained
with GravityOCR's joint AR + block-diffusion objective (block size {cfg.block_size}, learned `<|mask|>` row), so the
app's self-speculative decoder drafts {cfg.block_size} tokens a round with it and verifies them with the same weights.

## Training
- Command: `python -m app train --out models/builtin` (seed {cfg.seed}, {cfg.threads} CPU threads): this invocation
  took {report.get('wall_minutes')} min of wall time; the run trained {report.get('train_minutes')} min in all
  (a resumed run counts only its own wall time):
  {report.get('steps')} steps of {cfg.batch_size} lines, {report.get('lines_seen')} lines seen
  ({report.get('epochs')} epochs over {report.get('training_lines')} cached lines), AdamW lr {cfg.lr}.
- Warm start: {('from ' + str(cfg.init) + ' (' + str(report.get('warm_start')) + ')') if getattr(cfg, 'init', None) else 'none'}.
- Data: synthetic lines rendered offline, read by the recogniser: Latin (about half: prose from the Python standard
  library's docstrings, a synthetic mix of numbers, dates, prices, codes and punctuation, and `faker`'s (MIT) names,
  addresses, companies, dates and sentences in nine European locales), Chinese (about a third: `jieba`'s (MIT)
  dictionary words sampled by frequency into pseudo-sentences, `faker`'s zh_CN / zh_TW fields, Chinese dates and
  amounts) and Japanese (`faker`'s ja_JP fields); fonts DejaVu, the standard PDF fonts PyMuPDF embeds, Pillow's font,
  and PyMuPDF's built-in CJK font (Droid Sans Fallback, Apache-2.0); sizes 14-44 px; about 60 % degraded (faint
  print, blur, noise, low resolution, JPEG, skew up to ±3°, synthetic italic, tight kerning, loose crops); plus
  synthetic low-confidence slips in {cfg.corrupt:.0%} of the prefixes.

## Measured on held-out synthetic lines (fonts {', '.join(HELD_OUT_FONTS)} and texts never trained on, {ev.get('lines')}
lines, about 60 % of them degraded; the CJK font is the training one drawn emboldened, the only other CJK face
available offline; Chinese held-out texts are drawn from the whole jieba dictionary, whose held-out eighth of words
no training line holds)
| | |
|---|---|
| CER, built-in model (self-speculative) | {ev.get('cer', float('nan')):.2%} |
| CER, the recogniser's greedy CTC reading | {ev.get('rec_cer', float('nan')):.2%} |
| exact lines | {ev.get('exact', float('nan')):.1%} |
| TPF (tokens per forward) | {ev.get('tpf', float('nan'))} |
| mean accepted draft tokens per round | {ev.get('mean_accepted', float('nan'))} |
| self-spec == AR token for token (fp32) | {ev.get('selfspec_equals_ar')} ({ev.get('selfspec_ar_mismatches')} mismatches) |
| decoder ms per line, self-spec / AR | {ev.get('selfspec_ms_per_line')} / {ev.get('ar_ms_per_line')} (×{ev.get('speedup')}) |

| lines the decoder corrected / broke (fewer / more edits than the recogniser) | {ev.get('corrected')} / {ev.get('broken')} |

{rows}

On these (partly degraded) lines, CER <= {BAR_CER:.0%} per font, TPF >= {BAR_TPF}, self-spec == AR:
**{verdict(report)}**. The shipping bar is measured on clean printed PDFs (`app/core/training/heldout_pdf.py`).

## Licence
The decoder weights: Apache-2.0 (Scriptorium). The image side is not in this folder: {LICENSE_NOTE}; the app loads
it from the installed `rapidocr` package.
"""
