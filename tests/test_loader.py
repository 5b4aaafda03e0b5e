"""The loader: manifests, refusing pickles, naming missing files, special ids, device/dtype choice."""
import json

import pytest

from app.core.checkpoints import loader


def test_manifests_cover_the_supported_models():
    found = loader.manifests()
    for name in ("gravityocr", "glm-ocr", "unlimited-ocr", "pp-doclayoutv3", "builtin"):
        assert name in found
    assert found["gravityocr"].special["mask_token_id"]["expected"] == 59282
    assert found["gravityocr"].special["block_size"]["expected"] == 32


def _fake_checkpoint(folder, weights="model.safetensors"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"image_token_id": 5, "text_config": {"vocab_size": 99}}))
    (folder / "tokenizer.json").write_text("{}")
    (folder / weights).write_bytes(b"\0" * 8)
    return folder


def test_pickle_weights_are_refused(tmp_path):
    folder = _fake_checkpoint(tmp_path / "m", weights="pytorch_model.bin")
    (folder / "block_diffusion.json").write_text(json.dumps({"mask_id": 7, "bd_size": 4}))
    with pytest.raises(loader.UnsafeWeights) as exc:
        loader.resolve_model_dir(loader.get_manifest("gravityocr"), folder)
    assert "pytorch_model.bin" in str(exc.value) and "safetensors" in str(exc.value)


def test_missing_files_are_named_with_how_to_get_them(tmp_path):
    folder = _fake_checkpoint(tmp_path / "m")  # no block_diffusion.json
    with pytest.raises(loader.ModelNotFound) as exc:
        loader.resolve_model_dir(loader.get_manifest("gravityocr"), folder)
    msg = str(exc.value)
    assert "block_diffusion.json" in msg and "trillionlabs/GravityOCR" in msg


def test_absent_model_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(loader.ModelNotFound) as exc:
        loader.resolve_model_dir(loader.get_manifest("unlimited-ocr"))
    msg = str(exc.value)
    assert "baidu/Unlimited-OCR" in msg and "hf download" in msg and "HF_HUB_OFFLINE" in msg


def test_nonexistent_explicit_folder(tmp_path):
    with pytest.raises(loader.ModelNotFound, match="does not exist"):
        loader.resolve_model_dir(loader.get_manifest("glm-ocr"), tmp_path / "nope")


def test_special_ids_come_from_the_checkpoint_or_say_they_did_not(tmp_path):
    folder = _fake_checkpoint(tmp_path / "m")
    (folder / "block_diffusion.json").write_text(json.dumps({"mask_id": 7, "bd_size": 4}))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": 3}))
    values, sources = loader.read_special(loader.get_manifest("gravityocr"), folder)
    assert values["mask_token_id"] == 7 and values["block_size"] == 4
    assert values["stop_ids"] == [3]
    assert values["vocab_size"] == 99 and sources["vocab_size"] == "config.json:text_config.vocab_size"
    (folder / "generation_config.json").unlink()
    values, sources = loader.read_special(loader.get_manifest("gravityocr"), folder)
    assert values["stop_ids"] == [59246, 59253] and sources["stop_ids"].startswith("manifest default")


def test_device_and_dtype_choice():
    import torch

    assert loader.pick_device("cpu") == "cpu"
    assert loader.pick_dtype("cpu") == torch.float32
    assert loader.pick_dtype("cuda") == torch.bfloat16
    assert loader.pick_dtype("cpu", "bf16") == torch.bfloat16
    with pytest.raises(loader.ModelError):
        loader.pick_dtype("cpu", "int3")
    with pytest.raises(loader.ModelError, match="unknown device 'nope'"):
        loader.pick_device("nope")


@pytest.mark.parametrize("damaged, says", [
    ("model.safetensors", "could not load the weights in"),
    ("tokenizer.json", "could not read the tokenizer or processor files in"),
    ("block_diffusion.json", "block_diffusion.json cannot be read as JSON"),
])
def test_a_damaged_checkpoint_file_is_a_model_error_naming_it(tmp_path, tiny_glmocr_dir, damaged, says):
    import shutil

    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_glmocr_dir, folder)
    (folder / damaged).write_text("{damaged", encoding="utf-8")
    with pytest.raises(loader.ModelError) as info:
        loader.load_model("gravityocr", folder, device="cpu")
    assert says in str(info.value) and str(folder) in str(info.value)
