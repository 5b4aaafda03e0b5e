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


def full_charset() -> str:
    """The second version's characters: CHARSET first, then every other character the recogniser can write (its
    dictionary: Latin, Greek, Chinese, Japanese, symbols), so the decoder writes whatever the recogniser reads."""
    from app.core.rapid.recogniser import dictionary

    return "".join(dict.fromkeys(CHARSET + "".join(ch for ch in dictionary() if len(ch) == 1)))


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
    """The built-in reader's first tokenizer: `build_char_tokenizer` plus the prefix rows (confidence bins,
    alternative bins and one alternative row per character), all special (never decoded as text)."""
    return build_char_tokenizer(charset, prefix_special_tokens(charset))


# --- the second version: every recogniser character, top-3 evidence --------------------------------------------
# Prefix row of a recognised character c with alternatives a1, a2 (probability bins j1, j2):
#     E[c] + E[<|confK|>] + sum_k (λ_k · E[a_k] ⊙ (1 + E[<|altK·bJ|>]) + E[<|altK·bJ|>])
# (λ = 0.5, 0.25): the alternatives are the model's own character rows, scaled and gated per slot and bin, so
# "c with alternative a" differs from "a with alternative c" without an alternative row per character (18,710 of
# them would double the table).
ALT_SLOTS = 2
ALT_SCALE = (0.5, 0.25)
GATE_TOKENS = tuple(f"<|alt{k + 1}b{j}|>" for k in range(ALT_SLOTS) for j in range(1, 4))


def gate_token(slot: int, bin_: int) -> str:
    """The gate row of alternative `slot` (0, 1) in probability bin `bin_` (1..3)."""
    return f"<|alt{slot + 1}b{bin_}|>"


def build_reader_tokenizer_v2(charset: str | None = None):
    """The second version's tokenizer: every character the recogniser writes, `<|unk|>`, the GLM-OCR specials, then
    the confidence bins and the alternative gates (special, never decoded as text)."""
    return build_char_tokenizer(charset if charset is not None else full_charset(), [*CONF_TOKENS, *GATE_TOKENS])
