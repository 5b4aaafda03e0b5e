"""Text for the built-in reader's training and held-out lines, in every script the recogniser reads (Latin, Chinese,
Japanese), from sources that ship with packages on the index:

- `faker` (MIT): names, addresses, companies, jobs, dates, phone numbers, e-mail addresses and the locale's word
  lists (zh_CN / zh_TW / ja_JP sentences; en / de / fr / es / it / nl / pt / pl fields);
- `jieba` (MIT): its dictionary of 349k Chinese words with frequencies, sampled by frequency into pseudo-sentences
  with Chinese punctuation. The words whose crc32 is 0 mod 8 are held out (never in a training line);
- the Python standard library's docstrings and the synthetic mix (linedata / synthetic) for Latin prose and codes.

Held-out lines draw from other seeds (linedata.HELD_OUT_SEED); a Faker instance is seeded from the line's rng, so a
shard's text is reproducible.
"""
from __future__ import annotations

import os
import random
import zlib
from functools import lru_cache

LATIN_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_PT", "pl_PL")
ZH_LOCALES = ("zh_CN", "zh_CN", "zh_CN", "zh_TW")
JA_LOCALES = ("ja_JP",)
FIELDS = ("name", "address", "company", "job", "date", "phone_number", "street_address", "city", "sentence",
          "sentence", "text", "email", "date_time", "postcode", "ssn")
ZH_PUNCT = "，，，、；：？！"
ZH_NUMBERS = ("{y}年{m}月{d}日", "第{n}条", "共计{n}元", "￥{p}", "{n}%", "电话：{t}", "{n}号", "（{n}）",
              "编号{t}")


@lru_cache(maxsize=16)
def _faker(locale: str):
    import logging

    from faker import Faker

    logging.getLogger("faker").setLevel(logging.ERROR)
    return Faker(locale)


def faker_piece(rng: random.Random, locale: str) -> str:
    fake = _faker(locale)
    fake.seed_instance(rng.getrandbits(32))
    name = rng.choice(FIELDS)
    try:
        value = getattr(fake, name)() if name != "text" else fake.text(max_nb_chars=rng.choice((60, 120, 200)))
    except (AttributeError, ValueError, TypeError):
        value = fake.name()
    return " ".join(str(value).split())


@lru_cache(maxsize=2)
def jieba_words(held_out: bool) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """(words, cumulative weights): jieba's dictionary words of CJK characters, weighted by frequency ** 0.5
    (training: without the held-out eighth; held out: all of them)."""
    import itertools

    import jieba

    path = os.path.join(os.path.dirname(jieba.__file__), "dict.txt")
    words, weights = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 2 or not all("\u4e00" <= ch <= "\u9fff" for ch in parts[0]):
                continue
            if not held_out and zlib.crc32(parts[0].encode()) % 8 == 0:  # held out: never in a training line
                continue
            words.append(parts[0])
            weights.append(float(parts[1]) ** 0.5)
    return tuple(words), tuple(itertools.accumulate(weights))


def jieba_sentence(rng: random.Random, lo: int, hi: int, held_out: bool = False) -> str:
    """A pseudo-sentence of jieba words (frequency-weighted) with Chinese punctuation, lo..hi characters."""
    words, cum = jieba_words(held_out)
    target = rng.randint(lo, hi)
    out = ""
    while len(out) < target:
        w = rng.choices(words, cum_weights=cum)[0]
        out += w
        if rng.random() < 0.12:
            out += rng.choice(ZH_PUNCT)
    out = out[:target].rstrip(ZH_PUNCT)
    if len(out) >= 6 and rng.random() < 0.5:
        out += rng.choice("。。！？")
    return out


def zh_numbers(rng: random.Random) -> str:
    return rng.choice(ZH_NUMBERS).format(
        y=rng.randint(1900, 2030), m=rng.randint(1, 12), d=rng.randint(1, 28), n=rng.randint(1, 9999),
        p=f"{rng.randint(1, 99999):,}.{rng.randint(0, 99):02d}", t=f"{rng.randint(10000000, 99999999)}")


def fill(rng: random.Random, lo: int, hi: int, piece, joiner: str) -> str:
    target = rng.randint(lo, hi)
    out = ""
    for _ in range(12):
        p = piece()
        if not p:
            continue
        out = f"{out}{joiner}{p}" if out else p
        if len(out) >= target:
            break
    return out[:hi].strip()


def script_text(rng: random.Random, script: str, lo: int, hi: int, held_out: bool = False) -> tuple[str, str]:
    """(text, kind) of a line in `script` ("latin", "zh", "ja") from the sources above (Latin: faker fields only;
    the caller mixes in docstrings and the synthetic mix)."""
    if script == "zh":
        u = rng.random()
        if u < 0.45:
            return jieba_sentence(rng, lo, hi, held_out), "zh-words"
        if u < 0.9:
            loc = rng.choice(ZH_LOCALES)
            return fill(rng, lo, hi, lambda: faker_piece(rng, loc), rng.choice(("", "，"))), "zh-faker"
        return fill(rng, lo, hi, lambda: rng.choice((zh_numbers(rng), jieba_sentence(rng, 2, 8, held_out))),
                    ""), "zh-numbers"
    if script == "ja":
        return fill(rng, lo, hi, lambda: faker_piece(rng, "ja_JP"), rng.choice(("", "、"))), "ja-faker"
    loc = rng.choice(LATIN_LOCALES)
    return fill(rng, lo, hi, lambda: faker_piece(rng, loc), rng.choice((" ", ", ", "; "))), "faker"


def synthetic_readings(count: int, seed: int, charset: str) -> list[tuple[str, object]]:
    """`count` (text, Reading) pairs with no image: the reading is the text itself, confident, without
    alternatives (the training loop's prefix corruptions add the slips). They teach the decoder to write every
    character of `charset` (the recogniser's dictionary: most of it is in no rendered line) at the cost of a text
    draw, where a rendered line costs a render and a recogniser pass. Scripts: Chinese 50 %, Japanese 20 %, random
    characters of the dictionary 15 %, Latin 15 %."""
    from app.core.rapid.recogniser import Reading

    rng = random.Random(seed * 1_000_033 + 17)
    pool = [ch for ch in charset if ch.strip()]
    out: list[tuple[str, object]] = []
    while len(out) < count:
        u = rng.random()
        lo, hi = rng.choice(((1, 8), (4, 20), (12, 40)))
        if u < 0.15:
            text = "".join(rng.choice(pool) for _ in range(rng.randint(lo, hi)))
        else:
            script = "zh" if u < 0.65 else "ja" if u < 0.85 else "latin"
            text, _ = script_text(rng, script, lo, hi if script != "latin" else 2 * hi)
        text = " ".join("".join(ch for ch in text if ch in charset).split())
        if not text:
            continue
        n = len(text)
        conf = [rng.choice((0.99, 0.99, 0.99, 0.9, 0.7)) for _ in range(n)]
        out.append((text, Reading(list(text), conf, [""] * n, [0.0] * n, [""] * n, [0.0] * n)))
    return out
