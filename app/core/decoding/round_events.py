"""The decoders' records as events, translated in one place for every engine (the GLM-OCR family's, one region or a
batch, and the built-in one): a self-speculative `Round` (app.core.decoding.selfspec) becomes a RoundVerified, an
autoregressive step a TokensCommitted (app.core.record.events).

The engine supplies what only it knows: the text the round appended (its tokenizer, its streaming of partial
characters), the text of each token id, and where the region's numbering stands when one region is decoded in
several pieces (the built-in engine's lines): `first_round` and `tokens_before` are added to the round's own index
and output length. What must never live here: decoding, tokenizers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from app.core.record.events import RoundVerified, TokensCommitted, inspections

if TYPE_CHECKING:  # pragma: no cover
    from app.core.decoding.selfspec import Round

TokenTexts = Callable[[Sequence[int]], list[str]]


def round_verified(region_id: str, rnd: "Round", text: str, token_texts: TokenTexts, *, block_size: int,
                   first_round: int = 0, tokens_before: int = 0) -> RoundVerified:
    """One self-speculative round, with what the reject inspector recorded (app.core.decoding.inspector) when it
    recorded anything."""
    return RoundVerified(
        region_id, rnd.index + first_round, rnd.k, rnd.candidates, rnd.verified, rnd.new_tokens, text, rnd.draft_ms,
        rnd.verify_ms, rnd.cache_len, candidate_texts=token_texts(rnd.candidates),
        verified_texts=token_texts(rnd.verified), bonus=rnd.bonus, block_size=block_size,
        output_len=rnd.output_len + tokens_before, forwards=rnd.forwards,
        inspected=inspections(rnd.inspected, token_texts), probs=rnd.probs)


def tokens_committed(region_id: str, step: int, token: int, text: str, ms: float, cache_len: int,
                     token_texts: TokenTexts) -> TokensCommitted:
    """One AR step: token number `step` of the region's response (already offset by the caller)."""
    return TokensCommitted(region_id, step, [token], text, ms, cache_len, token_texts=token_texts([token]))
