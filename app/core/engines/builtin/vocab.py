"""The built-in model's character-level vocabulary: one token per character, then the GLM-OCR special tokens in
their real relative order (so the app's decoders find `<|endoftext|>`, `<|user|>`, `<|image|>`, `<|mask|>` by name),
wrapped as a `PreTrainedTokenizerFast` that saves to a plain tokenizer.json."""
from __future__ import annotations

import string

from app.core.checkpoints.glm_processor import EOS_TOKEN, SPECIAL_TOKENS

# Characters the synthetic lines use. ASCII printable first (space included), then a few common typographic extras.
ASCII_CHARS = "".join(ch for ch in string.printable if ch not in "\t\r\x0b\x0c")  # includes "\n" and " "
EXTRA_CHARS = "€£¥°§±×÷–—‘’“”…•·©®µ½äöüÄÖÜßéèêëàâáçñíóúô"
CHARSET = ASCII_CHARS + EXTRA_CHARS

UNK_TOKEN = "<|unk|>"


def build_char_tokenizer(charset: str = CHARSET, extra_special: tuple[str, ...] | list[str] = ()):
    """A tokenizer with one id per character of `charset` (ids 0..n-1), `<|unk|>`, then SPECIAL_TOKENS (then
    `extra_special`)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(dict.fromkeys(charset))
    vocab = {ch: i for i, ch in enumerate(chars)}
    vocab[UNK_TOKEN] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK_TOKEN))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens([UNK_TOKEN, *SPECIAL_TOKENS, *extra_special])
    extra = [t for t in SPECIAL_TOKENS if t != EOS_TOKEN] + list(extra_special)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=EOS_TOKEN,
        pad_token=EOS_TOKEN,
        unk_token=UNK_TOKEN,
        additional_special_tokens=extra,
        model_max_length=4096,
        clean_up_tokenization_spaces=False,
    )


# --- the built-in reader (recogniser prefix) ------------------------------------------------------------------
# Prefix rows: per recognised character its confidence bin, the best alternative character (a row of its own per
# character, so that "c1 with alternative c2" is not the same input as "c2 with alternative c1") and that
# alternative's probability bin (alt0 = no alternative). All of them are rows of the model's one embedding table.
CONF_TOKENS = tuple(f"<|conf{i}|>" for i in range(4))
ALT_BIN_TOKENS = tuple(f"<|alt{i}|>" for i in range(4))
ALT_UNK_TOKEN = "<|alt:unk|>"
SEP_TOKEN = "<|assistant|>"  # ends the prefix; the last prefix row predicts the first character


def alt_token(ch: str) -> str:
    return f"<|alt:{ord(ch):04x}|>"


def prefix_special_tokens(charset: str = CHARSET) -> list[str]:
    chars = [ch for ch in dict.fromkeys(charset) if ch != "\n"]
    return [*CONF_TOKENS, *ALT_BIN_TOKENS, ALT_UNK_TOKEN, *(alt_token(ch) for ch in chars)]


def build_reader_tokenizer(charset: str = CHARSET):
    """The built-in reader's tokenizer: `build_char_tokenizer` plus the prefix rows (confidence bins, alternative
    bins and one alternative row per character), all special (never decoded as text)."""
    return build_char_tokenizer(charset, prefix_special_tokens(charset))
