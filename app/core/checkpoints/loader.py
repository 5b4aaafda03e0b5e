"""Model manifests and the one loader.

A manifest (models/<name>.json) says what a supported checkpoint is: its transformers class, where it is looked for,
which files it needs and which special ids to read from it. The loader resolves a checkpoint from a local folder,
the user's model folder, a bundled folder or the local Hugging Face cache (never the network), refuses anything but
safetensors, never passes trust_remote_code, and picks device and dtype.

When weights are missing, the error names the missing files and the command that fetches them.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.base.paths import models_dir, user_models_dir
from app.core.base.wording import count

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


class ModelError(RuntimeError):
    """A model cannot be used; the message is written for a person."""


class ModelNotFound(ModelError):
    pass


class UnsafeWeights(ModelError):
    pass


@dataclass(frozen=True)
class Manifest:
    name: str
    title: str
    architecture: str
    processor: str  # glmocr | auto | image | none
    repo_id: str
    kind: str
    tasks: tuple[str, ...]
    required_files: tuple[str, ...]
    optional_files: tuple[str, ...] = ()
    special: dict[str, Any] = field(default_factory=dict)
    local_dir: str = ""
    license: str = ""
    notes: str = ""
    download: str = ""  # how to get the weights, when no hub repository holds them ({folder}: where they are looked for)

    @classmethod
    def from_file(cls, path: Path) -> "Manifest":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        known = set(cls.__dataclass_fields__)
        data = {k: v for k, v in data.items() if k in known}
        for key in ("tasks", "required_files", "optional_files"):
            data[key] = tuple(data.get(key, ()))
        return cls(**data)

    def download_hint(self) -> str:
        if self.download:
            return self.download.format(folder=user_models_dir() / self.name)
        if not self.repo_id:
            return "it is produced by `scriptorium train` (see docs/built-in-model.md, Training)"
        return (
            f"on a machine with internet run `hf download {self.repo_id}` (it lands in the Hugging Face "
            f"cache, where Scriptorium finds it), or download https://huggingface.co/{self.repo_id} into a folder "
            f"and pass it with --model FOLDER (or put it in {user_models_dir() / self.name})"
        )


def manifests() -> dict[str, Manifest]:
    out = {}
    for path in sorted(models_dir().glob("*.json")):
        m = Manifest.from_file(path)
        out[m.name] = m
    return out


def get_manifest(name: str) -> Manifest:
    found = manifests()
    if name not in found:
        raise ModelError(f"no model manifest named {name!r} in {models_dir()}; known: {', '.join(found)}")
    return found[name]


# --- finding a checkpoint -----------------------------------------------------------------------------------------


def _matches(folder: Path, pattern: str) -> list[Path]:
    return [p for p in folder.iterdir() if fnmatch.fnmatch(p.name, pattern)] if folder.is_dir() else []


def missing_files(manifest: Manifest, folder: Path) -> list[str]:
    return [pat for pat in manifest.required_files if not _matches(folder, pat)]


def _hf_cache_dir(repo_id: str) -> Path | None:
    """The cached snapshot of `repo_id`, looked up without any network access."""
    if not repo_id:
        return None
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        return None


def candidate_dirs(manifest: Manifest) -> list[Path]:
    """Where a checkpoint is looked for, in order (the explicit --model path comes before all of these)."""
    dirs = [user_models_dir() / manifest.name]
    if manifest.local_dir:
        dirs.append(models_dir() / manifest.local_dir)
    cached = _hf_cache_dir(manifest.repo_id)
    if cached is not None:
        dirs.append(cached)
    return dirs


def check_folder(manifest: Manifest, folder: Path) -> None:
    """Raise a clear error unless `folder` holds a complete safetensors checkpoint for `manifest`."""
    if not folder.is_dir():
        raise ModelNotFound(f"{manifest.title}: {folder} is not a folder")
    names = [p.name for p in folder.iterdir()]
    has_safetensors = any(n.endswith(".safetensors") for n in names)
    pickles = sorted(n for n in names if n.endswith(PICKLE_SUFFIXES))
    if pickles and not has_safetensors:
        raise UnsafeWeights(
            f"{manifest.title}: {folder} holds pickle weights ({', '.join(pickles)}), which can run arbitrary code "
            "when loaded. Scriptorium loads safetensors only; get the safetensors files of this model, or convert "
            "the weights yourself in a trusted environment (e.g. `model.save_pretrained(dir, safe_serialization=True)`)."
        )
    missing = missing_files(manifest, folder)
    if missing:
        raise ModelNotFound(
            f"{manifest.title}: {folder} is missing {', '.join(missing)}. To get the model, {manifest.download_hint()}."
        )


def resolve_model_dir(manifest: Manifest, path: str | os.PathLike | None = None) -> Path:
    """The folder to load `manifest` from: `path` when given (it must be complete), else the first complete
    candidate folder. Never touches the network."""
    if path is not None:
        folder = Path(path).expanduser()
        if not folder.exists():
            raise ModelNotFound(f"{manifest.title}: the model folder {folder} does not exist")
        check_folder(manifest, folder)
        return folder
    tried = []
    for folder in candidate_dirs(manifest):
        if folder.is_dir():
            check_folder(manifest, folder)  # a present but broken folder is an error worth reporting
            return folder
        tried.append(str(folder))
    cache_note = f"the Hugging Face cache (repo {manifest.repo_id})" if manifest.repo_id else ""
    where = ", ".join(tried + ([cache_note] if cache_note else []))
    offline = " (HF_HUB_OFFLINE is set)" if os.environ.get("HF_HUB_OFFLINE") else ""
    raise ModelNotFound(
        f"{manifest.title} weights were not found{offline}. Looked in: {where}. Needed files: "
        f"{', '.join(manifest.required_files)}. To get them, {manifest.download_hint()}."
    )


def find_model_dir(name: str) -> Path | None:
    """The folder of a complete checkpoint for manifest `name`, or None (for choosing defaults)."""
    try:
        return resolve_model_dir(get_manifest(name))
    except ModelError:
        return None


# --- special ids ------------------------------------------------------------------------------------------------


def _dig(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def read_special(manifest: Manifest, folder: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Read the manifest's special ids from the checkpoint's files. Returns (values, sources); a value the
    checkpoint lacks falls back to the manifest's expected value and its source says so (never silently)."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    cache: dict[str, Any] = {}
    for key, spec in manifest.special.items():
        fname = spec["from"]
        if fname not in cache:
            f = folder / fname
            try:
                cache[fname] = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else None
            except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
                raise ModelError(f"{manifest.title}: {f} cannot be read as JSON ({exc})") from exc
        value = _dig(cache[fname], spec["key"]) if cache[fname] is not None else None
        if value is not None:
            values[key], sources[key] = value, f"{fname}:{spec['key']}"
        elif "expected" in spec:
            values[key], sources[key] = spec["expected"], f"manifest default ({fname}:{spec['key']} not found)"
    if "stop_ids" in values and isinstance(values["stop_ids"], int):
        values["stop_ids"] = [values["stop_ids"]]
    return values, sources


# --- device and dtype -------------------------------------------------------------------------------------------


_DEVICE_NAME = re.compile(r"^(auto|cpu|mps|cuda(:\d{1,3})?)$")


def check_device_name(preference: str | None) -> None:
    """Raise ModelError for a device name no engine knows (without importing torch: classic needs none)."""
    if preference is not None and not _DEVICE_NAME.match(preference):
        raise ModelError(f"unknown device {preference!r}; choose one of auto, cuda, cuda:N, mps, cpu")


def check_dtype_name(preference: str | None) -> None:
    """Raise ModelError for a dtype name no engine knows."""
    if preference is not None and preference != "auto" and preference not in _DTYPES:
        raise ModelError(f"unknown dtype {preference!r}; choose one of auto, fp32, bf16, fp16, fp64")


def pick_device(preference: str | None = None) -> str:
    """cuda → mps → cpu, unless a device is asked for ("auto" or None means choose)."""
    import torch

    check_device_name(preference)
    if preference and preference != "auto":
        try:
            asked = torch.device(preference)
        except (RuntimeError, ValueError):
            raise ModelError(f"unknown device {preference!r}; choose one of auto, cuda, cuda:N, mps, cpu") from None
        if preference.startswith("cuda") and not torch.cuda.is_available():
            raise ModelError(f"device {preference!r} was asked for, but this torch build sees no CUDA GPU")
        if asked.type == "cuda" and asked.index is not None and asked.index >= torch.cuda.device_count():
            visible = count(torch.cuda.device_count(), "CUDA GPU")
            raise ModelError(f"device {preference!r} was asked for, but only {visible} visible")
        if preference == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise ModelError("device 'mps' was asked for, but it is not available")
        return preference
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


_DTYPES = {"fp32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16",
           "fp16": "float16", "float16": "float16", "fp64": "float64", "float64": "float64"}


def pick_dtype(device: str, preference: str | None = None):
    """bf16 on a GPU, fp32 on CPU, unless asked otherwise."""
    import torch

    if preference and preference != "auto":
        try:
            return getattr(torch, _DTYPES[preference])
        except KeyError:
            raise ModelError(f"unknown dtype {preference!r}; choose one of fp32, bf16, fp16, fp64") from None
    return torch.float32 if device == "cpu" else torch.bfloat16


# --- loading ----------------------------------------------------------------------------------------------------


@dataclass
class LoadedModel:
    manifest: Manifest
    path: Path
    model: Any
    processor: Any
    device: str
    dtype: Any
    special: dict[str, Any]
    special_sources: dict[str, str]

    @property
    def tokenizer(self):
        return getattr(self.processor, "tokenizer", self.processor)


def load_processor(manifest: Manifest, folder: Path):
    if manifest.processor == "glmocr":
        from app.core.checkpoints.glm_processor import load_glmocr_processor

        return load_glmocr_processor(folder)
    if manifest.processor == "image":
        from transformers import AutoImageProcessor

        return AutoImageProcessor.from_pretrained(folder, local_files_only=True)
    if manifest.processor == "auto":
        from transformers import AutoProcessor

        return AutoProcessor.from_pretrained(folder, local_files_only=True)
    return None


def load_model(
    manifest: Manifest | str,
    path: str | os.PathLike | None = None,
    *,
    device: str | None = None,
    dtype: str | None = None,
    attn_implementation: str | None = "sdpa",
) -> LoadedModel:
    """Resolve, check and load a checkpoint. Slow; call it off the GUI thread."""
    if isinstance(manifest, str):
        manifest = get_manifest(manifest)
    folder = resolve_model_dir(manifest, path)
    import transformers

    cls = getattr(transformers, manifest.architecture, None)
    if cls is None:
        raise ModelError(
            f"{manifest.title} needs transformers' {manifest.architecture}, which transformers "
            f"{transformers.__version__} lacks; install transformers >= 5.23"
        )
    device = pick_device(device)
    torch_dtype = pick_dtype(device, dtype)
    kwargs: dict[str, Any] = dict(dtype=torch_dtype, use_safetensors=True, local_files_only=True, trust_remote_code=False)
    if attn_implementation and manifest.kind == "layout":
        attn_implementation = None  # PP-DocLayoutV3's HGNetV2 backbone has no sdpa path (from_pretrained raises)
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    try:
        model = cls.from_pretrained(folder, **kwargs)
    except Exception as exc:  # noqa: BLE001 - OSError, ValueError, SafetensorError (a damaged file), ...: all for a person
        raise ModelError(f"{manifest.title}: could not load the weights in {folder}: {exc}") from exc
    model.to(device).eval()
    try:
        processor = load_processor(manifest, folder)
    except Exception as exc:  # noqa: BLE001 - a damaged tokenizer.json / processor file
        raise ModelError(f"{manifest.title}: could not read the tokenizer or processor files in {folder}: "
                         f"{type(exc).__name__}: {exc}") from exc
    special, sources = read_special(manifest, folder)
    return LoadedModel(manifest, folder, model, processor, device, torch_dtype, special, sources)
