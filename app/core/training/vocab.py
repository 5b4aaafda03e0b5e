"""The built-in model's character-level vocabulary: one token per character, then the GLM-OCR special tokens in
their real relative order (so the app's decoders find `<|endoftext|>`, `<|user|>`, `<|image|>`, `<|mask|>` by name),
wrapped as a `PreTrainedTokenizerFast` that saves to a plain tokenizer.json."""
from __future__ import annotations

import string

from app.core.models.glmocr import EOS_TOKEN, SPECIAL_TOKENS

# Characters the synthetic lines use. ASCII printable first (space included), then a few common typographic extras.
ASCII_CHARS = "".join(ch for ch in string.printable if ch not in "\t\r\x0b\x0c")  # includes "\n" and " "
EXTRA_CHARS = "€£¥°§±×÷–—‘’“”…•·©®µ½äöüÄÖÜßéèêëàâáçñíóúô"
CHARSET = ASCII_CHARS + EXTRA_CHARS

UNK_TOKEN = "<|unk|>"


def build_char_tokenizer(charset: str = CHARSET):
    """A tokenizer with one id per character of `charset` (ids 0..n-1), `<|unk|>`, then SPECIAL_TOKENS."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(dict.fromkeys(charset))
    vocab = {ch: i for i, ch in enumerate(chars)}
    vocab[UNK_TOKEN] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK_TOKEN))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([UNK_TOKEN, *SPECIAL_TOKENS])
    extra = [t for t in SPECIAL_TOKENS if t != EOS_TOKEN]
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS_TOKEN,
        pad_token=EOS_TOKEN,
        unk_token=UNK_TOKEN,
        additional_special_tokens=extra,
        model_max_length=4096,
        clean_up_tokenization_spaces=False,
    )
