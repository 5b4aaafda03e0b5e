"""The joint AR + block-diffusion objective (app.core.training.objective): its masks and loss rules.

Checks: complementary masks cover each response token exactly once; the attention rules of the joint mask; the EOS
loss rules. The forward itself is checked against the decoders on the built-in reader (tests/test_training_reader.py).
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from app.core.training import objective as obj  # noqa: E402

B = 4


def test_complementary_masks_cover_every_token_exactly_once():
    g = torch.Generator().manual_seed(0)
    m1 = obj.complementary_masks(64, 8 * B, B, generator=g)
    m2 = ~m1
    assert torch.equal(m1.int() + m2.int(), torch.ones_like(m1, dtype=torch.int))
    frac = m1.float().reshape(64, 8, B).mean(-1)  # per-block ratios spread over (0, 1), not a constant
    assert frac.min() < 0.3 and frac.max() > 0.7


def test_attention_mask_rules():
    P, L = 5, 3 * B
    allow = obj.joint_attention_mask(P, L, B)
    clean, c1, c2 = slice(P, P + L), slice(P + L, P + 2 * L), slice(P + 2 * L, P + 3 * L)
    assert allow[P:, :P].all() and torch.equal(allow[:P, :P], torch.ones(P, P, dtype=torch.bool).tril())
    assert not allow[:P, P:].any()  # the prefix sees no response
    assert not allow[clean, c1].any() and not allow[clean, c2].any()  # the clean stream never sees corruption
    assert not allow[c1, c2].any() and not allow[c2, c1].any()
    for s in (c1, c2):
        for j in range(L):
            b = j // B
            row = allow[s][j]
            seen_clean = row[clean].nonzero().flatten().tolist()
            assert seen_clean == list(range(b * B))  # clean blocks strictly before its own
            seen_own = row[s].nonzero().flatten().tolist()
            assert seen_own == list(range(b * B, (b + 1) * B))  # its own block, bidirectionally


def test_eos_rules_and_loss():
    eos = 7
    targets, n = obj.response_targets([[1, 2, 3], [4]], eos, B)
    assert targets.shape == (2, 2 * B)  # 3 + B = 7 → one full block more
    assert targets[0].tolist() == [1, 2, 3] + [eos] * 5 and n.tolist() == [3, 1]
    ar, diff = obj.loss_weights(n, targets.shape[1], B)
    # AR: the text and the FIRST EOS only
    assert ar[0].tolist() == [True] * 4 + [False] * 4 and (targets[0][ar[0]] == eos).sum() == 1
    # diffusion: the text and all B EOS (not the extra padding of the shorter row)
    assert diff[0].sum() == 3 + B and (targets[0][diff[0]] == eos).sum() == B
    assert diff[1].tolist() == [True] * (1 + B) + [False] * (2 * B - 1 - B)
