"""In-memory byte-level BPE tokenizers for the tiny test checkpoints (no hub, no files needed to build one).

`build_bpe_tokenizer` trains a small BPE on a few strings with the `tokenizers` library and adds the special tokens
in the order given, so their ids follow the trained vocabulary in that order (as in the real checkpoints, where the
specials sit after the ordinary vocabulary). What must never live here: anything model-specific.
"""
from __future__ import annotations

from typing import Iterable, Sequence

# Text the tiny tokenizers are trained on: OCR-ish words, markup, digits, LaTeX, so decoded outputs look like text.
DEFAULT_CORPUS = (
    "The quick brown fox jumps over the lazy dog. Scriptorium reads documents page by page.",
    "Text Recognition: Table Recognition: Formula Recognition:",
    "<table><tr><td>cell</td><td>42</td></tr></table> | a | b | c |",
    "\\frac{a}{b} + \\sum_{i=1}^{n} x_i^2 = \\alpha \\beta \\gamma $$ E = mc^2 $$",
    "Abstract. Introduction. Results and discussion. Figure 1. Table 2. References.",
    "0123456789 , . ; : ! ? ( ) [ ] { } - + = * / % # @ & ' \"",
    "document page region line word letter ink paper scribe manuscript library archive",
    "# Title\n## Section\n- item one\n- item two\n",
)


def build_bpe_tokenizer(
    special_tokens: Sequence[str],
    *,
    vocab_size: int = 384,
    corpus: Iterable[str] = DEFAULT_CORPUS,
    eos_token: str | None = None,
    pad_token: str | None = None,
    bos_token: str | None = None,
    model_max_length: int = 8192,
):
    """A `PreTrainedTokenizerFast` over a freshly trained byte-level BPE; `special_tokens` get consecutive ids after
    the trained vocabulary, in the given order. Deterministic for the same arguments."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        show_progress=False,
    )
    tok.train_from_iterator(list(corpus), trainer=trainer)
    tok.add_special_tokens(list(special_tokens))
    named = {k: v for k, v in (("eos_token", eos_token), ("pad_token", pad_token), ("bos_token", bos_token)) if v}
    extra = [t for t in special_tokens if t not in named.values()]
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        additional_special_tokens=extra,
        model_max_length=model_max_length,
        **named,
    )
