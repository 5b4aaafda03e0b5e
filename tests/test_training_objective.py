"""The joint AR + block-diffusion objective (app.core.training.objective) on a tiny real GlmOcr, fp32.

Checks: the clean stream equals a plain causal forward; a fully masked corrupted block equals the inference draft
forward [x0 | M×B] over a KV cache; complementary masks cover each response token exactly once; the EOS loss rules;
no leak from the clean block to its own corrupted block; the patch layout equals the processor's.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from app.core.training import objective as obj  # noqa: E402
from app.core.training.batches import PROMPT, make_prefix, patchify  # noqa: E402
from app.core.training.model import build_model  # noqa: E402

B = 4


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    model, processor = build_model("test", seed=0)
    model.eval()
    with torch.no_grad():  # larger weights than the init so that the logits differ clearly between contexts
        for name, p in model.named_parameters():
            if "norm" not in name:
                p.mul_(4.0)
    return model, processor


def _batch(processor, texts, width=64, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (len(texts), 32, width), dtype=np.uint8)
    tok = processor.tokenizer
    prefix = make_prefix(tok, images)
    ids = [tok(t, add_special_tokens=False).input_ids for t in texts]
    targets, n = obj.response_targets(ids, tok.convert_tokens_to_ids("<|endoftext|>"), B)
    return prefix, targets, n


def test_clean_stream_equals_plain_causal_forward(tiny):
    model, processor = tiny
    prefix, targets, n = _batch(processor, ["ab1", "xyz 9"])
    mask1 = obj.complementary_masks(*targets.shape, B, generator=torch.Generator().manual_seed(1))
    mask_id = processor.tokenizer.convert_tokens_to_ids("<|mask|>")
    with torch.no_grad():
        out = obj.joint_forward(model, prefix, targets, mask1, mask_id=mask_id, block_size=B)
        joint = obj.clean_logits(model, out)
        ids = torch.cat([prefix.input_ids, targets], dim=1)
        types = torch.cat([prefix.mm_token_type_ids, torch.zeros_like(targets, dtype=torch.int)], dim=1)
        plain = model(input_ids=ids, mm_token_type_ids=types, pixel_values=prefix.pixel_values,
                      image_grid_thw=prefix.image_grid_thw).logits
    P, L = out.prefix_len, out.length
    delta = (joint - plain[:, P - 1:P + L - 1]).abs().max().item()
    assert delta < 1e-5, delta


def test_fully_masked_block_equals_inference_draft_forward(tiny):
    from transformers import DynamicCache

    model, processor = tiny
    tok = processor.tokenizer
    prefix, targets, n = _batch(processor, ["hello wor"], seed=3)
    L = targets.shape[1]
    mask_id = tok.convert_tokens_to_ids("<|mask|>")
    for blk in (0, 1, 2):
        mask1 = obj.complementary_masks(1, L, B, generator=torch.Generator().manual_seed(blk))
        mask1[0, blk * B:(blk + 1) * B] = True  # block `blk` of stream 1 fully masked
        with torch.no_grad():
            out = obj.joint_forward(model, prefix, targets, mask1, mask_id=mask_id, block_size=B)
            P = out.prefix_len
            train_rows = model.lm_head(out.hidden[0, P + L + blk * B:P + L + (blk + 1) * B])
            # inference: cache = prefix + y_0..y_{bB-2}; window [x0 = y_{bB-1}, M×B] (no x0 for block 0)
            lm = model.model.language_model
            prefix_embeds, _ = obj.embed_prefix(model, prefix)
            pos_prefix, _ = model.model.get_rope_index(prefix.input_ids, mm_token_type_ids=prefix.mm_token_type_ids,
                                                       image_grid_thw=prefix.image_grid_thw)
            N = int(pos_prefix.max()) + 1
            ctx = targets[:, :max(blk * B - 1, 0)]
            embeds = torch.cat([prefix_embeds, model.get_input_embeddings()(ctx)], dim=1)
            pos = torch.cat([pos_prefix, (N + torch.arange(ctx.shape[1]))[None, None].expand(3, 1, -1)], dim=2)
            cache = DynamicCache(config=model.config.text_config)
            lm(inputs_embeds=embeds, position_ids=pos, cache=cache, use_cache=True)
            clen = cache.get_seq_length()
            has_x0 = blk > 0
            window = ([int(targets[0, blk * B - 1])] if has_x0 else []) + [mask_id] * B
            Q = len(window)
            allow = torch.ones(Q, clen + Q, dtype=torch.bool)
            if has_x0:
                allow[0, clen + 1:] = False  # x0's row is causal; the masks see x0 and each other
            start = blk * B - 1 if has_x0 else 0
            wpos = (N + start + torch.arange(Q))[None, None].expand(3, 1, -1)
            h = lm(input_ids=torch.tensor([window]), position_ids=wpos, attention_mask=allow[None, None],
                   cache=cache, use_cache=True).last_hidden_state
            draft_rows = model.lm_head(h[0, int(has_x0):])
            assert (draft_rows - train_rows).abs().max().item() < 1e-5
            if has_x0:  # and the x0 row is exactly the clean (AR) row
                a0 = model.lm_head(h[0, 0])
                assert (a0 - obj.clean_logits(model, out)[0, blk * B]).abs().max().item() < 1e-5


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


def test_no_leak_from_the_clean_copy_of_a_block(tiny):
    model, processor = tiny
    prefix, targets, n = _batch(processor, ["abcdefg"], seed=5)
    mask1 = torch.ones_like(targets, dtype=torch.bool)
    mask_id = processor.tokenizer.convert_tokens_to_ids("<|mask|>")
    other = targets.clone()
    other[0, B:2 * B] = processor.tokenizer.convert_tokens_to_ids("z")  # change clean block 1 only
    with torch.no_grad():
        a = obj.joint_forward(model, prefix, targets, mask1, mask_id=mask_id, block_size=B)
        b = obj.joint_forward(model, prefix, other, mask1, mask_id=mask_id, block_size=B)
    P, L = a.prefix_len, a.length
    rows = slice(P + L + B, P + L + 2 * B)  # stream 1, block 1: all masks, must not see clean block 1
    assert torch.allclose(a.hidden[0, rows], b.hidden[0, rows], atol=1e-6)
    later = slice(P + L + 2 * B, P + L + 3 * B)  # block 2 does see clean block 1
    assert not torch.allclose(a.hidden[0, later], b.hidden[0, later], atol=1e-4)


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


def test_joint_loss_matches_hand_computed_parts(tiny):
    import torch.nn.functional as F

    model, processor = tiny
    prefix, targets, n = _batch(processor, ["q7", "long text"], seed=2)
    mask1 = obj.complementary_masks(*targets.shape, B, generator=torch.Generator().manual_seed(4))
    mask_id = processor.tokenizer.convert_tokens_to_ids("<|mask|>")
    with torch.no_grad():
        out = obj.joint_forward(model, prefix, targets, mask1, mask_id=mask_id, block_size=B)
        loss, parts = obj.joint_loss(model, out, targets, n, mask1, block_size=B)
        ar_w, diff_w = obj.loss_weights(n, targets.shape[1], B)
        l_ar = F.cross_entropy(obj.clean_logits(model, out)[ar_w], targets[ar_w])
        s1, s2 = obj.stream_logits(model, out, 1), obj.stream_logits(model, out, 2)
        pick = torch.where(mask1[..., None], s1, s2)
        l_diff = F.cross_entropy(pick[diff_w], targets[diff_w])
    assert abs(parts["ar"] - l_ar.item()) < 1e-5 and abs(parts["diff"] - l_diff.item()) < 1e-5
    assert abs(loss.item() - (l_ar.item() + l_diff.item()) / 2) < 1e-5


def test_patchify_equals_the_processor(tiny):
    from PIL import Image

    _, processor = tiny
    images = np.random.default_rng(0).integers(0, 256, (1, 32, 80), dtype=np.uint8)
    text = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": PROMPT}]}],
        add_generation_prompt=True, tokenize=False)
    enc = processor(text=[text], images=[Image.fromarray(images[0]).convert("RGB")], return_tensors="pt")
    assert np.abs(enc["pixel_values"].numpy() - patchify(images)).max() == 0.0
    prefix = make_prefix(processor.tokenizer, images)
    assert torch.equal(prefix.input_ids, enc["input_ids"])
    assert torch.equal(prefix.mm_token_type_ids.long(), enc["mm_token_type_ids"].long())


def test_batched_vision_tower_equals_the_stock_one(tiny):
    model, processor = tiny
    prefix, _, _ = _batch(processor, ["a", "b", "c"], width=96)
    with torch.no_grad():
        fast = obj.image_features(model, prefix, batched=True)
        stock = obj.image_features(model, prefix, batched=False)
    assert fast.shape == stock.shape and (fast - stock).abs().max().item() < 1e-5


def test_patchify_torch_equals_numpy(tiny):
    from app.core.training.batches import encode_texts, patchify_torch

    images = np.random.default_rng(1).integers(0, 256, (2, 32, 48), dtype=np.uint8)
    assert np.abs(patchify_torch(torch.from_numpy(images)).numpy() - patchify(images)).max() < 1e-6
    tok = tiny[1].tokenizer
    assert encode_texts(tok, ["ab c€"]) == [tok("ab c€", add_special_tokens=False).input_ids]


def test_precomputed_prefix_path_equals_the_general_one(tiny):
    """The trainer's sync-free prefix (cached positions, image span, vision positions) gives the same forward."""
    from dataclasses import replace

    from transformers.vision_utils import get_vision_position_ids

    model, processor = tiny
    prefix, targets, n = _batch(processor, ["ab", "cd"], width=64)
    types = prefix.mm_token_type_ids[0].tolist()
    first = types.index(1)
    pos = obj.prefix_positions(model, prefix)
    fast = replace(prefix, positions=pos, image_span=(first, first + types.count(1)),
                   vision_positions=get_vision_position_ids(prefix.image_grid_thw[:1], 2))
    mask1 = obj.complementary_masks(*targets.shape, B, generator=torch.Generator().manual_seed(0))
    mask_id = processor.tokenizer.convert_tokens_to_ids("<|mask|>")
    with torch.no_grad():
        a = obj.joint_forward(model, prefix, targets, mask1, mask_id=mask_id, block_size=B)
        b = obj.joint_forward(model, fast, targets, mask1, mask_id=mask_id, block_size=B)
    assert (a.hidden - b.hidden).abs().max().item() < 1e-5
