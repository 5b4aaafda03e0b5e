"""The reject inspector (app.core.decoding.inspector): on a tiny GlmOcr built at test time and on the shipped built-in
model, fp32, nothing mocked: every inspected slot's top-k, probabilities, entropies and margin equal a direct
computation from the model's logits at that position (one fresh forward over the whole committed text, not the
decoder's incremental cache); recording the inspector changes no decoded token; a trace keeps it."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from app.core.decoding.autoregressive import forward_logits, prefill, text_positions, window_attention  # noqa: E402
from app.core.decoding.inspector import InspectOptions  # noqa: E402
from app.core.decoding.selfspec import inner_mask  # noqa: E402
from app.core.record.events import RoundVerified, SlotInspection  # noqa: E402
from app.core.tiny.glm_checkpoint import sample_images  # noqa: E402

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.filterwarnings("ignore::DeprecationWarning")]

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "builtin"
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def direct_rows(model, make_prefix, committed: list[int], candidates: list[int], mask_id: int, block: int):
    """(drafter rows, verifier rows), one per candidate slot, computed afresh: the verifier's from one causal forward
    over committed + candidates, the drafter's from one forward over committed + B masks (masks bidirectional)."""
    n = len(committed)
    with torch.no_grad():
        p = make_prefix()
        clen, dev = p.cache.get_seq_length(), p.seed.device
        seq = committed + candidates
        causal = forward_logits(model, torch.tensor([seq], device=dev), text_positions(clen, len(seq), p.delta, dev),
                                p.cache)
        ar_rows = torch.cat([p.seed.view(1, -1), causal])  # row t predicts response token t
        verifier = ar_rows[n:n + len(candidates)]
        p = make_prefix()
        window = committed + [mask_id] * block
        inner = inner_mask(len(window), causal_from=n, bidirectional=True, device=dev)
        drafts = forward_logits(model, torch.tensor([window], device=dev),
                                text_positions(clen, len(window), p.delta, dev), p.cache,
                                window_attention(model, p.cache, inner))
        drafter = torch.cat([ar_rows[n:n + 1], drafts[n:n + block]])  # slot 0 = a0's exact row, slot j = mask j
    return drafter, verifier


def check_slot(slot: SlotInspection, drafter_row, verifier_row, top_k: int = 5) -> None:
    for top, probs, entropy, p_drafted, row in (
            (slot.draft_top, slot.draft_probs, slot.draft_entropy, slot.draft_p_drafted, drafter_row),
            (slot.verify_top, slot.verify_probs, slot.verify_entropy, slot.verify_p_drafted, verifier_row)):
        p = torch.softmax(row.double(), -1)
        want_p, want_i = p.topk(top_k)
        assert top == want_i.tolist()
        assert probs == pytest.approx(want_p.tolist(), abs=2e-5)
        assert entropy == pytest.approx(float(-(p * p.clamp_min(1e-300).log()).sum() / math.log(2)), abs=1e-3)
        assert p_drafted == pytest.approx(float(p[slot.drafted]), abs=2e-5)
    pv = torch.softmax(verifier_row.double(), -1)
    assert slot.margin == pytest.approx(float(pv.max() - pv[slot.drafted]), abs=3e-5)
    assert len(slot.draft_texts) == len(slot.draft_top) == top_k and len(slot.verify_texts) == top_k


def check_rounds(events, model, make_prefix, mask_id: int, block: int, *, expect_all: bool) -> int:
    """Every inspected slot of every round against the direct computation; returns the slots checked."""
    rounds = [e for e in events if isinstance(e, RoundVerified)]
    committed: list[int] = []
    checked = rejected = 0
    for ev in rounds:
        n = ev.output_len - len(ev.new_tokens)
        assert committed == committed[:n] and len(committed) == n
        width = len(ev.candidates)
        if expect_all:
            assert [s.position for s in ev.inspected] == list(range(width))
        elif ev.k < width:
            assert [s.position for s in ev.inspected] == [ev.k]  # default: the first rejected slot alone
        else:
            assert ev.inspected == []
        if ev.inspected:
            drafter, verifier = direct_rows(model, make_prefix, committed, list(ev.candidates), mask_id, block)
            for slot in ev.inspected:
                assert slot.drafted == ev.candidates[slot.position] and slot.accepted == (slot.position < ev.k)
                check_slot(slot, drafter[slot.position], verifier[slot.position])
                if slot.position == ev.k:  # the first rejected slot (later ones were discarded with it)
                    rejected += 1
                    assert slot.verify_top[0] == ev.verified[slot.position] and slot.margin > 0
                checked += 1
        assert len(ev.probs) == len(ev.new_tokens) and all(0 < q <= 1 for q in ev.probs)
        committed += list(ev.new_tokens)
    assert rejected, "no rejected slot was inspected"
    return checked


@pytest.fixture(scope="module")
def tiny(tiny_glmocr_dir):
    from app.core.engines.glm_engine import open_ar, open_selfspec

    spec = open_selfspec(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", block_size=4, max_new_tokens=24)
    ar = open_ar(model_path=tiny_glmocr_dir, device="cpu", dtype="fp32", max_new_tokens=24)
    return spec, ar


@pytest.mark.parametrize("all_slots", [False, True])
def test_tiny_glmocr_inspector_equals_the_logits(tiny, all_slots):
    spec, ar = tiny
    image = sample_images(1, seed=5)[0]
    spec.inspect = InspectOptions(all_slots=all_slots)
    events: list = []
    got = spec.decode_region(image, "text", region_id="r", emit=events.append)
    inputs = spec.build_inputs(image, "text")
    n = check_rounds(events, spec.model, lambda: prefill(spec.model, inputs), spec.mask_id, spec.block_size,
                     expect_all=all_slots)
    assert n >= 3
    quiet = spec.decode_region(image, "text", region_id="r")  # nobody listens: no inspector, same tokens
    assert got.tokens == quiet.tokens == ar.decode_region(image, "text", region_id="r").tokens
    spec.inspect = InspectOptions()


def test_neighbours_are_configurable_and_oracle_drafts_reach_late_slots(tiny):
    """With oracle drafts (the true continuation, one error at a chosen slot) the rejected slot moves along the
    block; `around=1` inspects it and its neighbours, each equal to the direct computation."""
    from app.core.decoding.autoregressive import ar_decode
    from app.core.decoding.selfspec import selfspec_decode

    spec, _ = tiny
    image = sample_images(2, seed=5)[1]
    inputs = spec.build_inputs(image, "text")
    truth = ar_decode(spec.model, prefill(spec.model, inputs), stop_ids=[], max_new_tokens=40).tokens
    schedule = [3, 1, 4, 2, 5]

    def hook(i, output, candidates):
        drafted = list(truth[len(output):len(output) + len(candidates)])
        e = schedule[i % len(schedule)]
        if e < len(drafted):
            drafted[e] = (drafted[e] + 1) % spec.model.get_output_embeddings().weight.shape[0]
        return drafted

    from app.core.record.events import inspections

    got = selfspec_decode(spec.model, prefill(spec.model, inputs), mask_id=spec.mask_id, block_size=4, stop_ids=[],
                          max_new_tokens=12, draft_hook=hook, inspect=InspectOptions(around=1), on_round=lambda r: None)
    assert got.tokens == truth[:12]
    committed: list[int] = []
    for rnd in got.rounds:
        want = [p for p in (rnd.k - 1, rnd.k, rnd.k + 1) if 0 <= p < len(rnd.candidates)] \
            if rnd.k < len(rnd.candidates) else []
        slots = inspections(rnd.inspected, lambda ids: [str(i) for i in ids])
        assert [s.position for s in slots] == want
        drafter, verifier = direct_rows(spec.model, lambda: prefill(spec.model, inputs), committed,
                                        rnd.candidates, spec.mask_id, 4)
        for s in slots:
            check_slot(s, drafter[s.position], verifier[s.position])
        committed += rnd.new_tokens
    assert [r.k for r in got.rounds][:3] == schedule[:3]


def test_batch_rounds_carry_the_same_inspector(tiny):
    """The batched decoder's rounds (a static cache, several regions in one forward) inspect the same slots with
    the same numbers as one region decoded alone."""
    from app.core.decoding.batch import batch_selfspec_decode
    from app.core.decoding.selfspec import selfspec_decode

    spec, _ = tiny
    images = sample_images(2, seed=9)
    opts = InspectOptions(all_slots=True)
    prefixes = [prefill(spec.model, spec.build_inputs(im, "text")) for im in images]
    batch = batch_selfspec_decode(spec.model, prefixes, mask_id=spec.mask_id, block_size=4, stop_ids=spec.stop_ids,
                                  budgets=[16, 16], inspect=opts)
    for im, got in zip(images, batch):
        alone = selfspec_decode(spec.model, prefill(spec.model, spec.build_inputs(im, "text")), mask_id=spec.mask_id,
                                block_size=4, stop_ids=spec.stop_ids, max_new_tokens=16, inspect=opts)
        assert got.tokens == alone.tokens
        compared = 0
        for a, b in zip(got.rounds, alone.rounds):
            if len(a.candidates) != len(b.candidates):  # alone, a round whose a0 ends the decode skips its verify
                continue
            compared += 1
            assert [s["position"] for s in a.inspected] == [s["position"] for s in b.inspected]
            for x, y in zip(a.inspected, b.inspected):
                assert x["verify_top"] == y["verify_top"] and x["draft_top"] == y["draft_top"]
                assert x["margin"] == pytest.approx(y["margin"], abs=1e-4)
            assert a.probs == pytest.approx(b.probs, abs=1e-4)
        assert compared >= 3


def test_a_trace_keeps_the_inspector(tiny, tmp_path):
    from app.core.record.trace import load_trace, write_trace

    spec, _ = tiny
    events: list = []
    spec.decode_region(sample_images(1, seed=5)[0], "text", region_id="r", emit=events.append)
    assert any(e.inspected for e in events if isinstance(e, RoundVerified))
    back = load_trace(write_trace(tmp_path / "t.jsonl", events)).events
    assert back == events
    slot = next(e.inspected[0] for e in back if isinstance(e, RoundVerified) and e.inspected)
    assert isinstance(slot, SlotInspection) and slot.verify_texts and slot.drafted_text is not None


# --- the shipped built-in model ------------------------------------------------------------------------------

needs_shipped = pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(), reason="missing part: no shipped built-in model (models/builtin/model.safetensors)")


def line_image(text: str, size: int = 28, blur: float = 0.0):
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    font = ImageFont.truetype(DEJAVU, size)
    img = Image.new("RGB", (int(font.getlength(text)) + 40, int(size * 1.7) + 20), "white")
    ImageDraw.Draw(img).text((20, 10), text, font=font, fill="black")
    return img.filter(ImageFilter.GaussianBlur(blur)) if blur else img


@needs_shipped
@pytest.mark.parametrize("all_slots", [False, True])
def test_builtin_model_inspector_equals_the_logits(all_slots):
    from app.core.engines import open_engine
    from app.core.engines.builtin.reader import one_thread, prefill as reader_prefill

    spec = open_engine("builtin", device="cpu", mode="selfspec")
    ar = open_engine("builtin", device="cpu", mode="ar")
    spec.inspect = InspectOptions(all_slots=all_slots)
    image = line_image("Invoice 48213: rnrn clltl 0O0O l1I| 7,85 rn m", blur=1.2)  # hard to read: rejections
    events: list = []
    got = spec.decode_region(image, "text", region_id="r", emit=events.append)
    assert got.tokens == spec.decode_region(image, "text", region_id="r").tokens  # inspector off: same tokens
    assert got.tokens == ar.decode_region(image, "text", region_id="r").tokens  # self-spec ≡ AR
    assert got.stats["lines"] == 1
    with one_thread():
        rows = spec.find_lines(image)
        reading = spec.recogniser.read([rows[0][0][1]])[0]
        n = check_rounds(events, spec.model, lambda: reader_prefill(spec.model, spec.codec, reading), spec.mask_id,
                         spec.block_size, expect_all=all_slots)
    assert n >= 1
    slot = next(s for e in events if isinstance(e, RoundVerified) for s in e.inspected if s.position == e.k)
    assert all(isinstance(t, str) for t in slot.verify_texts)


@needs_shipped
def test_the_bundled_faded_scan_makes_the_builtin_model_reject_often():
    """`--sample` opens resources/samples/carbon-copy.jpg after the report: the shipped model reads it, but rejects
    drafts in far more rounds than on the same lines printed cleanly, and the inspector records each rejection."""
    from rapidfuzz.distance import Levenshtein

    from app.core.engines import open_engine
    from app.core.base.paths import degraded_sample
    from app.core.document.sample_documents import DEGRADED_LINES
    from PIL import Image

    path = degraded_sample()
    assert path.is_file() and path.stat().st_size < 200_000
    spec = open_engine("builtin", device="cpu", mode="selfspec")

    def read(img):
        events: list = []
        result = spec.decode_region(img, "text", region_id="r", emit=events.append)
        rounds = [e for e in events if isinstance(e, RoundVerified)]
        rejected = [e for e in rounds if e.k < len(e.candidates)]
        assert all(e.inspected and e.inspected[0].position == e.k for e in rejected)
        return result, len(rejected) / len(rounds)

    faded, faded_rate = read(Image.open(path).convert("RGB"))
    clean, clean_rate = read(line_image(" ".join(DEGRADED_LINES[:2]), size=24))
    assert faded_rate >= 0.3 and clean_rate <= 0.1
    assert faded.stats["tpf"] < clean.stats["tpf"]
    reference = " ".join(DEGRADED_LINES)
    assert Levenshtein.normalized_distance(faded.text, reference) < 0.35  # read, if imperfectly: not noise


def test_the_engines_default_comes_from_the_environment(monkeypatch):
    assert InspectOptions.from_env("") == InspectOptions() and InspectOptions.from_env("rejected") == InspectOptions()
    assert InspectOptions.from_env("all") == InspectOptions(all_slots=True)
    assert InspectOptions.from_env("around:2") == InspectOptions(around=2)
    assert InspectOptions.from_env("off") is None and InspectOptions.from_env("nonsense") == InspectOptions()
    monkeypatch.setenv("SCRIPTORIUM_INSPECT", "all")
    assert InspectOptions.from_env() == InspectOptions(all_slots=True)
    assert InspectOptions(around=1).slots(0, 5) == [0, 1] and InspectOptions().slots(5, 5) == []
    assert InspectOptions(all_slots=True).slots(5, 5) == [0, 1, 2, 3, 4]
