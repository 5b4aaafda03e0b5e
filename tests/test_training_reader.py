"""The built-in reader's training side on CPU: the PP-OCRv6 recogniser's reading of a rendered line, the prefix
codec, the joint objective over left-padded recogniser prefixes (what training sees equals what the app's decoders
see at inference), and a short `train` run end to end (features, steps, resume, checkpoint, model card)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnxruntime")

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _line(text: str, size: int = 32):
    from PIL import Image, ImageDraw, ImageFont

    try:
        font = ImageFont.truetype(DEJAVU, size)
    except OSError:
        font = ImageFont.load_default(size)
    w = int(font.getlength(text)) + 24
    img = Image.new("L", (w, int(size * 1.6)), 255)
    ImageDraw.Draw(img).text((12, size * 0.25), text, font=font, fill=0)
    return img


@pytest.fixture(scope="module")
def recogniser():
    from app.core.rapid.recogniser import Recogniser

    return Recogniser(threads=1)


def test_recogniser_reads_a_rendered_line(recogniser):
    from app.core.rapid.recogniser import Reading

    text = "Invoice 2024-11-30: $1,234.50"
    (reading,) = recogniser.read([_line(text)])
    assert reading.text == text
    assert len(reading.chars) == len(reading.conf) == len(reading.alts) == len(text)
    assert min(reading.conf) > 0.5
    assert Reading.from_json(reading.to_json()).text == text


def test_prefix_codec_rows_first_version():
    from app.core.engines.builtin.reader import PrefixCodec, build_reader
    from app.core.rapid.recogniser import Reading

    model, tok = build_reader("test", version=1)
    codec = PrefixCodec(tok)
    r = Reading(["a", "ß", "\u4e00"], [0.99, 0.6, 0.3], ["", "B", "x"], [0.0, 0.25, 0.5])
    rows = codec.rows(r)
    assert [row[0] for row in rows] == [codec.char["a"], codec.char["ß"], codec.unk]
    assert [row[1] for row in rows] == [codec.conf[3], codec.conf[1], codec.conf[0]]
    assert rows[0][2:] == (codec.alt_unk, codec.alt_bins[0])  # no alternative
    assert rows[1][2:] == (codec.alt["B"], codec.alt_bins[2])
    assert max(max(row) for row in rows) < model.get_input_embeddings().weight.shape[0]


def test_prefix_codec_rows_second_version_write_every_recogniser_character():
    """The second version's vocabulary holds every character the recogniser writes; a prefix row holds the
    character, its confidence bin and up to two alternatives (their own character rows, gated per slot and bin)."""
    import torch

    from app.core.engines.builtin.reader import PrefixCodec, build_reader, prefix_embeddings
    from app.core.rapid.recogniser import Reading, dictionary

    model, tok = build_reader("test", version=2)
    codec = PrefixCodec(tok)
    assert codec.version == 2 and set(dictionary()) <= set(codec.char)
    r = Reading(["a", "北", "京"], [0.99, 0.6, 0.3], ["", "比", "x"], [0.0, 0.25, 0.5], ["", "", "京"],
                [0.0, 0.0, 0.05])
    rows = codec.rows(r)
    assert [row[0] for row in rows] == [codec.char["a"], codec.char["北"], codec.char["京"]]
    assert [row[1] for row in rows] == [codec.conf[3], codec.conf[1], codec.conf[0]]
    assert rows[0][2:] == (-1, -1, -1, -1)  # no alternatives
    assert rows[1][2:] == (codec.char["比"], codec.gates[0][2], -1, -1)
    assert rows[2][2:] == (codec.char["x"], codec.gates[0][3], codec.char["京"], codec.gates[1][1])
    with torch.no_grad():
        e = prefix_embeddings(model, torch.tensor([rows]), codec.sep)
        swapped = Reading(["比"], [0.6], ["北"], [0.25])  # "北, maybe 比" is not "比, maybe 北"
        e2 = prefix_embeddings(model, torch.tensor([codec.rows(swapped)]), codec.sep)
    assert e.shape == (1, 4, model.config.text_config.hidden_size)
    assert not torch.allclose(e[0, 1], e2[0, 0])
    assert tok.decode(codec.encode_text("北京 2024年")) == "北京 2024年"


def test_joint_forward_over_padded_prefixes_equals_the_decoders_forward(one_torch_thread):
    """Left-padded training rows give the same clean-stream logits as each line alone, and those equal the logits
    of the app's decoders at inference (reader.prefill, then causal text forwards at the aligned positions r + 1)."""
    import torch

    from app.core.decoding.autoregressive import forward_logits, text_positions
    from app.core.training.objective import clean_logits, complementary_masks, response_targets
    from app.core.engines.builtin.reader import PrefixCodec, build_reader, prefill
    from app.core.training.reader_train import ReaderConfig, ReaderTrainer
    from app.core.rapid.recogniser import Reading

    model, tok = build_reader("test", seed=3)
    model.eval()
    codec = PrefixCodec(tok)
    readings = [Reading(list("Total 4.50"), [0.99] * 10, [""] * 10, [0.0] * 10),
                Reading(list("ab"), [0.7, 0.4], ["", "d"], [0.0, 0.2])]
    texts = ["Total 4.50", "abc"]
    tr = ReaderTrainer.__new__(ReaderTrainer)  # only the batch maths: no optimiser, no data
    tr.cfg, tr.model, tr.codec, tr.step = ReaderConfig(out="", block_size=4), model, codec, 0
    import random

    tr.rng = random.Random(0)
    items = [(__import__("numpy").array(codec.rows(r)).reshape(-1, codec.width), codec.encode_text(t)) for r, t in
             zip(readings, texts)]
    rows, targets, n, mask1 = tr.collate(items, corrupt=False)

    def clean(rows, targets, mask1):
        from app.core.training.objective import joint_forward_embeds
        from app.core.engines.builtin.reader import prefix_embeddings

        from app.core.engines.builtin.reader import RESPONSE_START, prefix_positions

        b, P = rows.shape[:2]
        valid = torch.cat([rows[..., 0] >= 0, torch.ones(b, 1, dtype=torch.bool)], dim=1)
        pos = prefix_positions(valid).expand(3, -1, -1)
        out = joint_forward_embeds(model, prefix_embeddings(model, rows, codec.sep), pos, targets, mask1,
                                   mask_id=codec.mask, block_size=4, prefix_valid=valid, response_start=RESPONSE_START)
        return clean_logits(model, out)

    with torch.no_grad():
        batch = clean(rows, targets, mask1)
        for i, (reading, text) in enumerate(zip(readings, texts)):
            alone_rows, alone_t, _, alone_m = tr.collate([items[i]], corrupt=False)
            alone = clean(alone_rows, alone_t, alone_m)
            L = alone.shape[1]
            torch.testing.assert_close(batch[i, :L], alone[0], atol=2e-5, rtol=1e-4)
            pre = prefill(model, codec, reading)
            ids = codec.encode_text(text)
            torch.testing.assert_close(pre.seed, alone[0, 0], atol=2e-5, rtol=1e-4)
            logits = forward_logits(model, torch.tensor([ids]),
                                    text_positions(pre.prompt_len, len(ids), pre.delta, "cpu"), pre.cache)
            torch.testing.assert_close(logits, alone[0, 1:len(ids) + 1], atol=2e-5, rtol=1e-4)


def test_train_command_smoke_then_resume(tmp_path, capsys):
    """`python -m app train` end to end at test size (< 60 s on 2 cores): features, steps, held-out evaluation with
    the app's decoders, checkpoint + model card; the checkpoint opens as the builtin engine; --resume continues."""
    from app.cli import main
    try:
        from app.core.engines import open_engine
    except ImportError:  # before the engines package
        from app.core.engines import open_engine

    out, work = tmp_path / "ckpt", tmp_path / "work"
    args = ["train", "--out", str(out), "--work", str(work), "--preset", "test", "--lines", "40", "--heldout-lines",
            "6", "--block-size", "4", "--workers", "1", "--threads", "1"]
    assert main(args + ["--steps", "2"]) == 0
    report = json.loads((out / "train_report.json").read_text())
    assert report["steps"] == 2 and report["eval"]["lines"] == 6 and report["eval"]["selfspec_equals_ar"]
    card = (out / "MODEL_CARD.md").read_text()
    assert "NOT met" in card and "PP-OCRv6" in card and "Apache-2.0" in card
    assert "wall time" in capsys.readouterr().out
    engine = open_engine("builtin", model_path=out, device="cpu")
    assert engine.block_size == 4 and hasattr(engine, "recogniser")
    # the second version writes every character the recogniser reads: a Chinese line goes through the decoder (its
    # rounds), never to the recogniser fallback, and self-spec equals AR token for token
    from PIL import Image, ImageDraw, ImageFont
    import pymupdf

    (tmp_path / "cjk.ttf").write_bytes(bytes(pymupdf.Font("china-s").buffer))
    font = ImageFont.truetype(str(tmp_path / "cjk.ttf"), 32)
    img = Image.new("RGB", (400, 64), "white")
    ImageDraw.Draw(img).text((16, 16), "北京市人民政府", font=font, fill="black")
    spec = engine.decode_region(img, "text", region_id="zh")
    ar = open_engine("builtin", model_path=out, device="cpu", mode="ar").decode_region(img, "text", region_id="zh")
    assert spec.stats["fallback_lines"] == 0 and spec.stats["rounds"] > 0 and spec.tokens == ar.tokens
    assert spec.stats["line_stats"][0]["recogniser"] == "北京市人民政府"
    assert main(args + ["--steps", "3", "--resume", "--no-final-eval"]) == 0
    assert "resumed from" in capsys.readouterr().out
    assert json.loads((out / "train_report.json").read_text())["steps"] == 3


def test_warm_start_reads_a_latin_line_as_the_first_version(tmp_path, one_torch_thread):
    """A second-version model warm-started from a first-version one gives the same logits over the old characters
    for a reading without alternatives (layers copied, rows mapped by character, the "no alternative" rows folded
    into the confidence rows), whatever the new rows are."""
    import torch

    from app.core.engines.builtin.reader import PrefixCodec, build_reader, prefill, save_reader
    from app.core.rapid.recogniser import Reading
    from app.core.training.warm_start import warm_start

    old, old_tok = build_reader("test", seed=5, version=1)
    save_reader(old, old_tok, tmp_path / "v1", block_size=4)
    new, new_tok = build_reader("test", seed=6, version=2)
    counts = warm_start(new, new_tok, tmp_path / "v1", log=lambda _m: None)
    assert counts["rows_kept"] > 130 and counts["gate_rows"] == 6 and counts["rows_new"] > 18000
    reading = Reading(list("Total 4.50"), [0.99, 0.7, 0.99, 0.99, 0.4, 0.99, 0.99, 0.99, 0.99, 0.99], [""] * 10,
                      [0.0] * 10)
    old.eval()
    new.eval()
    with torch.no_grad():
        a, b = prefill(old, PrefixCodec(old_tok), reading).seed, prefill(new, PrefixCodec(new_tok), reading).seed
    chars = [ch for ch in old_tok.get_vocab() if len(ch) == 1]
    ia = torch.tensor([old_tok.convert_tokens_to_ids(ch) for ch in chars])
    ib = torch.tensor([new_tok.convert_tokens_to_ids(ch) for ch in chars])
    torch.testing.assert_close(a[ia], b[ib], atol=1e-4, rtol=1e-4)


def test_sampled_softmax_over_every_row_is_the_full_loss(one_torch_thread):
    import torch

    from app.core.engines.builtin.reader import (
        RESPONSE_START, PrefixCodec, build_reader, prefix_embeddings, prefix_positions,
    )
    from app.core.training.objective import complementary_masks, joint_forward_embeds, joint_loss, response_targets
    from app.core.rapid.recogniser import Reading

    model, tok = build_reader("test", seed=1, version=2)
    codec = PrefixCodec(tok)
    rows = torch.tensor([codec.rows(Reading(list("北京 7"), [0.9] * 4, [""] * 4, [0.0] * 4))])
    targets, n = response_targets([codec.encode_text("北京 7")], codec.eos, 4)
    mask1 = complementary_masks(1, targets.shape[1], 4, generator=torch.Generator().manual_seed(0))
    valid = torch.ones(1, rows.shape[1] + 1, dtype=torch.bool)
    out = joint_forward_embeds(model, prefix_embeddings(model, rows, codec.sep),
                               prefix_positions(valid).expand(3, -1, -1), targets, mask1, mask_id=codec.mask,
                               block_size=4, prefix_valid=valid, response_start=RESPONSE_START)
    full, _ = joint_loss(model, out, targets, n, mask1, block_size=4)
    every = torch.arange(model.get_input_embeddings().weight.shape[0])
    sampled, _ = joint_loss(model, out, targets, n, mask1, block_size=4, classes=every)
    some = torch.unique(torch.cat([targets[0], every[:50]]))
    few, _ = joint_loss(model, out, targets, n, mask1, block_size=4, classes=some)
    torch.testing.assert_close(sampled, full)
    assert float(few.detach()) < float(full.detach())  # fewer competitors: a smaller loss


def test_the_evaluation_scores_the_line_as_the_engine_writes_it():
    """The model card's CER is the engine's: a rewrite keeps the recogniser's reading, and the decoder overrules it
    only where it was unsure (the arbiter), so the card and the app agree."""
    from app.core.rapid.recogniser import Reading
    from app.core.training.reader_eval import engine_text

    reading = Reading(chars=list("tbe cat"), conf=[0.99, 0.3, 0.99, 1.0, 0.99, 0.99, 0.99])
    assert engine_text(reading, "the cot") == "the cat"  # 'b' was unsure, 'a' was not
    assert engine_text(reading, "qqqqqqqqqqqqqq") == "tbe cat"  # a rewrite


def test_the_held_out_prints_come_poor_as_well_as_clean(tmp_path):
    """`heldout_pdf make --poor`: the same held-out lines as page images at a third of the resolution, on grey paper
    with noise, no text layer; the truth is the same text."""
    import json

    import numpy as np
    import pymupdf

    from app.core.training import heldout_pdf

    clean = heldout_pdf.make(tmp_path / "clean", lines_per_font=2)
    poor = heldout_pdf.make(tmp_path / "poor", lines_per_font=2, poor=True)
    assert [p.name for p in clean] == [p.name for p in poor] and len(poor) == 7
    for a, b in zip(clean, poor):
        ta = json.loads(a.with_name(a.stem + ".truth.json").read_text(encoding="utf-8"))
        tb = json.loads(b.with_name(b.stem + ".truth.json").read_text(encoding="utf-8"))
        assert ta == tb
    with pymupdf.open(clean[0]) as dc, pymupdf.open(poor[0]) as dp:
        assert not dp[0].get_text().strip()
        (ic,), (ip,) = dc[0].get_image_info(), dp[0].get_image_info()
        assert ip["width"] * 2.5 < ic["width"]  # 100 DPI against 300
        pix = dp[0].get_pixmap(dpi=100, colorspace=pymupdf.csGRAY)
        grey = np.frombuffer(pix.samples, np.uint8)
        assert 200 < np.median(grey) < 240 and grey.std() > 8  # grey paper, noisy
