"""The A/B decoding diff (app.core.record.trace_compare, `python -m app diff`) on real decodes of tiny GlmOcr checkpoints
built at test time (fp32, nothing mocked): two block sizes that give the same tokens report no divergence and exit
0; a changed checkpoint (a perturbed copy, another seed) reports exactly the first token where the decodes part,
with each model's distribution there, and exits 1; a file that is not a trace exits 2."""
from __future__ import annotations

import shutil

import pytest

torch = pytest.importorskip("torch")

from app.cli import main  # noqa: E402
from app.core.decoding.inspector import InspectOptions  # noqa: E402
from app.core.record.events import RunFinished, RunStarted  # noqa: E402
from app.core.tiny.glm_checkpoint import build, sample_images  # noqa: E402
from app.core.record.trace import write_trace  # noqa: E402
from app.core.record.trace_compare import compare, first_char_difference, word_diff_text  # noqa: E402

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.filterwarnings("ignore::DeprecationWarning")]
NEW = 32


def record(model_dir, path, *, block: int, label: str):
    """Decode three sample regions with every slot inspected; write the trace; return (path, results)."""
    from app.core.engines.glm_engine import open_selfspec

    engine = open_selfspec(model_path=model_dir, device="cpu", dtype="fp32", block_size=block, max_new_tokens=NEW)
    engine.inspect = InspectOptions(all_slots=True)
    events: list = [RunStarted(engine="gravity", model=label, device="cpu", dtype="fp32", block_size=block)]
    results = [engine.decode_region(im, "text", region_id=f"p0-r{i}", emit=events.append)
               for i, im in enumerate(sample_images(3, seed=7))]
    events.append(RunFinished(stats={}))
    return write_trace(path, events), results


def perturbed_copy(src, dst, scale: float):
    """The same checkpoint with every weight nudged by seeded noise of relative size `scale`."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(src, dst)
    weights = load_file(str(dst / "model.safetensors"))
    gen = torch.Generator().manual_seed(1)
    for name, w in weights.items():
        if w.is_floating_point():
            weights[name] = w + torch.randn(w.shape, generator=gen) * scale * w.float().std().clamp_min(1e-6)
    save_file(weights, str(dst / "model.safetensors"), metadata={"format": "pt"})
    return dst


@pytest.fixture(scope="module")
def traces(tiny_glmocr_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("ab")
    out = {"b4": record(tiny_glmocr_dir, root / "b4.jsonl", block=4, label="tiny seed 0"),
           "b8": record(tiny_glmocr_dir, root / "b8.jsonl", block=8, label="tiny seed 0")}
    nudged = perturbed_copy(tiny_glmocr_dir, root / "nudged", 0.05)
    out["nudged"] = record(nudged, root / "nudged.jsonl", block=4, label="tiny nudged")
    out["seed3"] = record(build(root / "seed3", seed=3), root / "seed3.jsonl", block=4, label="tiny seed 3")
    return out


def first_token_difference(a: list[int], b: list[int]) -> int | None:
    if a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def test_a_changed_block_size_with_the_same_tokens_reports_no_divergence(traces, capsys):
    (pa, ra), (pb, rb) = traces["b4"], traces["b8"]
    assert [r.tokens for r in ra] == [r.tokens for r in rb]  # self-spec is exact at any B
    from app.core.record.trace import load_trace

    comp = compare(load_trace(pa).events, load_trace(pb).events)
    assert comp.same and len(comp.regions) == 3
    assert all(r.divergence is None for r in comp.regions)
    assert [r.a.block_size for r in comp.regions] == [4] * 3 and [r.b.block_size for r in comp.regions] == [8] * 3
    assert comp.label_a.startswith("gravity · B=4") and comp.label_b.startswith("gravity · B=8")
    assert main(["diff", str(pa), str(pb)]) == 0
    out = capsys.readouterr().out
    assert out.count("first divergence: none") == 3 and "TEXT DIFFERS" not in out
    assert "TPF" in out and " ms" in out and "3 region(s), 0 differ" in out


@pytest.mark.parametrize("other", ["nudged", "seed3"])
def test_a_changed_checkpoint_reports_the_exact_first_differing_token(traces, other, capsys):
    from app.core.record.trace import load_trace

    (pa, ra), (pb, rb) = traces["b4"], traces[other]
    comp = compare(load_trace(pa).events, load_trace(pb).events)
    differing = 0
    for reg, a, b in zip(comp.regions, ra, rb):
        want = first_token_difference(a.tokens, b.tokens)
        d = reg.divergence
        if want is None:
            assert d is None or d.index == -1
            continue
        differing += 1
        assert d.index == want
        assert d.a_token == (a.tokens[want] if want < len(a.tokens) else None)
        assert d.b_token == (b.tokens[want] if want < len(b.tokens) else None)
        assert d.char == first_char_difference(a.text, b.text)
        for slot, tok in ((d.a_slot, d.a_token), (d.b_slot, d.b_token)):  # each model's belief where they part
            if tok is not None:
                assert slot is not None and slot.verify_top[0] == tok
        assert reg.same_text == (a.text == b.text)
    assert differing >= 1
    if other == "nudged":  # a small change parts mid-text, after a shared beginning
        assert any(r.divergence is not None and r.divergence.index > 0 for r in comp.regions)
    code = main(["diff", str(pa), str(pb)])
    out = capsys.readouterr().out
    assert code == (0 if comp.same else 1)
    first = next(r for r in comp.regions if r.divergence is not None and r.divergence.index >= 0)
    assert f"first divergence: output token {first.divergence.index}" in out
    assert "A's verifier there: " in out and "not recorded" not in out.split("A's verifier there: ")[1].split("\n")[0]


def test_the_text_diff_marks_words_and_bad_files_exit_2(tmp_path, capsys):
    assert word_diff_text("the quick fox", "the quick dog") == "the quick [-fox-]{+dog+}"
    assert first_char_difference("abc", "abd") == 2 and first_char_difference("ab", "ab") == -1
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    good = write_trace(tmp_path / "empty.jsonl", [RunStarted(engine="x")])
    assert main(["diff", str(bad), str(good)]) == 2
    assert "not a trace event" in capsys.readouterr().err
