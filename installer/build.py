#!/usr/bin/env python3
"""Build the installable Scriptorium bundle with nothing but python3:

    python3 installer/build.py                    # the default variant: the torch that pip picks for this machine
    python3 installer/build.py --variant cpu      # the small download: CPU-only torch, no torchvision, no CUDA libs
    python3 installer/build.py --variant cpu --tarball    # ... and a .tar.gz with the Linux install script

Steps: (1) a private virtual environment under installer/build/venv-<variant> (never the project's .venv) with the
app's dependencies and PyInstaller; (2) PyInstaller runs installer/scriptorium.spec into
installer/dist/<variant>/scriptorium/; (3) installer/postbuild_check.py runs the bundled executable headless
(`--version`, a `convert` of the bundled sample with the default engine, and one with a tiny random GlmOcr
checkpoint through torch) and the build fails loudly if any fails; (4) it prints the bundle's size and the build
time.

What must never live here: app code. The bundle runs the same `app.cli:main` as `python -m app`.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import time
import venv
from pathlib import Path

INSTALLER = Path(__file__).resolve().parent
ROOT = INSTALLER.parent
BUILD = INSTALLER / "build"
DIST = INSTALLER / "dist"
SPEC = INSTALLER / "scriptorium.spec"
APP_NAME = "scriptorium"

PYINSTALLER = ["pyinstaller==6.22.3", "pyinstaller-hooks-contrib>=2026.9"]
# The CPU build of torch. On this team's machines the file lies on disk; elsewhere pass
# --torch-index https://download.pytorch.org/whl/cpu (the PyTorch CPU wheel index).
CPU_TORCH = "torch==2.13.0+cpu"
VARIANTS = ("default", "cpu")

sys.path.insert(0, str(INSTALLER))
import postbuild_check  # noqa: E402  (a sibling module; kept importable without the venv)


def say(msg: str) -> None:
    print(f"== {msg}", flush=True)


def project_dependencies() -> list[str]:
    import tomllib

    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])


def _req_name(req: str) -> str:
    name = req
    for sep in "<>=!~;[ ":
        name = name.split(sep)[0]
    return name.strip().lower().replace("_", "-")


def requirements(variant: str) -> list[str]:
    """The app's dependencies for a variant. The CPU variant installs torch on its own first and leaves out
    torchvision: PyPI's torchvision does not import beside the CPU torch wheel, and the app does not need it
    (transformers falls back to its PIL image processors)."""
    deps = project_dependencies()
    if variant == "cpu":
        deps = [d for d in deps if _req_name(d) not in ("torch", "torchvision")]
    return deps


def venv_python(variant: str) -> Path:
    v = BUILD / f"venv-{variant}"
    return v / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def setup_venv(variant: str, torch_spec: str, torch_index: str | None) -> Path:
    py = venv_python(variant)
    stamp = py.parent.parent / ".scriptorium-build-installed"
    wanted = hashlib.sha256("\n".join([*requirements(variant), *PYINSTALLER, torch_spec, torch_index or ""]).encode()).hexdigest()
    if py.exists() and stamp.exists() and stamp.read_text() == wanted:
        say(f"build environment up to date: {py.parent.parent}")
        return py
    if not py.exists():
        say(f"creating the build environment {py.parent.parent}")
        venv.EnvBuilder(with_pip=True).create(py.parent.parent)
    pip = [str(py), "-m", "pip", "install", "--quiet"]
    if variant == "cpu":
        say(f"installing {torch_spec} (CPU only)")
        index = ["--extra-index-url", torch_index] if torch_index else []
        subprocess.run([*pip, *index, *torch_spec.split()], check=True)
    say("installing the app's dependencies and PyInstaller")
    index = ["--extra-index-url", torch_index] if torch_index and variant == "default" else []
    subprocess.run([*pip, *index, *requirements(variant), *PYINSTALLER], check=True)
    probe = subprocess.run(
        [str(py), "-c", "import importlib.util as u, torch; print(torch.__version__, torch.version.cuda, "
         "u.find_spec('torchvision') is not None)"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    say(f"torch {probe[0]} (CUDA {probe[1]}), torchvision present: {probe[2]}")
    if variant == "cpu" and probe[1] != "None":
        raise SystemExit(f"build.py: the CPU variant got a CUDA torch ({probe[0]}); pass --torch-index with a CPU "
                         "wheel index or --torch with a CPU wheel")
    stamp.write_text(wanted)
    return py


def run_pyinstaller(py: Path, variant: str, nice: int, cpu_torchvision: bool = False) -> Path:
    dist = DIST / variant
    work = BUILD / f"work-{variant}"
    cmd = [str(py), "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    if nice and shutil.which("nice"):
        cmd = ["nice", "-n", str(nice), *cmd]
    env = dict(os.environ, SCRIPTORIUM_VARIANT=variant, PYTHONDONTWRITEBYTECODE="1",
               SCRIPTORIUM_CPU_TORCHVISION="1" if cpu_torchvision else "0")
    say("running PyInstaller: " + " ".join(cmd))
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    return dist / APP_NAME


def build_tiny_model(py: Path) -> Path:
    """A tiny random GlmOcr checkpoint (the test kit's real class), made with the build environment's Python from
    the source tree, for the post-build check's model run. Cached under installer/build/."""
    out = BUILD / "tiny-glmocr"
    if not (out / "config.json").is_file():
        say("building a tiny GlmOcr checkpoint for the post-build model check")
        subprocess.run([str(py), "-c", f"from app.core.tiny.glmocr import build; build({str(out)!r}, seed=0)"],
                       check=True, cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return out


def build_tiny_layout(py: Path) -> Path | None:
    """A tiny random PP-DocLayoutV3 checkpoint when the build environment has torchvision (its image processor
    needs it), else None: the CPU variant without torchvision cannot run that layout model."""
    has_tv = subprocess.run([str(py), "-c", "import torchvision"], capture_output=True).returncode == 0
    if not has_tv:
        say("no torchvision in this variant: PP-DocLayoutV3 is not part of the post-build check")
        return None
    out = BUILD / "tiny-doclayout-tv"
    if not (out / "config.json").is_file():
        say("building a tiny PP-DocLayoutV3 checkpoint for the post-build layout check")
        subprocess.run([str(py), "-c", f"from app.core.tiny.doclayout import build; build({str(out)!r}, seed=0)"],
                       check=True, cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    return out


def tree_size(path: Path) -> tuple[int, int]:
    total = files = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
            files += 1
    return total, files


def make_tarball(bundle: Path, variant: str) -> Path:
    """A tarball a Linux user unpacks and installs with `./install.sh` (user-local, no root)."""
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("_version", ROOT / "app" / "__init__.py")
    mod = module_from_spec(spec)
    spec.loader.exec_module(mod)
    suffix = "" if variant == "default" else f"-{variant}"
    name = f"scriptorium-{mod.__version__}-linux-{os.uname().machine}{suffix}"
    out = DIST / f"{name}.tar.gz"
    say(f"writing {out}")
    with tarfile.open(out, "w:gz", compresslevel=6) as tar:
        tar.add(bundle, arcname=f"{name}/{APP_NAME}")
        for f in sorted((INSTALLER / "linux").iterdir()):
            if f.is_file() and (f.name == "install.sh" or f.suffix in (".desktop", ".xml")):
                tar.add(f, arcname=f"{name}/{f.name}")
        for f in sorted((ROOT / "resources" / "icons").glob("scriptorium*")):
            tar.add(f, arcname=f"{name}/icons/{f.name}")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", choices=VARIANTS, default="default")
    ap.add_argument("--torch", default=CPU_TORCH,
                    help=f"the CPU variant's torch requirement(s), space-separated (default {CPU_TORCH}); naming a "
                         "matching CPU torchvision too (e.g. 'torch==2.13.0+cpu torchvision==0.28.0+cpu' from the "
                         "PyTorch CPU index) bundles it, which PP-DocLayoutV3's image processor needs")
    ap.add_argument("--torch-index", default=os.environ.get("SCRIPTORIUM_TORCH_INDEX"),
                    help="an extra package index for torch, e.g. https://download.pytorch.org/whl/cpu for the CPU variant")
    ap.add_argument("--nice", type=int, default=10, help="run PyInstaller under `nice -n N` (0: off)")
    ap.add_argument("--check-only", action="store_true", help="only run the post-build check on an existing bundle")
    ap.add_argument("--tarball", action="store_true", help="also write a .tar.gz with the Linux install script")
    ap.add_argument("--no-model-check", action="store_true",
                    help="skip the post-build runs of tiny GlmOcr / PP-DocLayoutV3 models inside the bundle")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    bundle = DIST / args.variant / APP_NAME
    if not args.check_only:
        py = setup_venv(args.variant, args.torch, args.torch_index)
        t_pyi = time.monotonic()
        bundle = run_pyinstaller(py, args.variant, args.nice, cpu_torchvision="torchvision" in args.torch)
        say(f"PyInstaller took {time.monotonic() - t_pyi:.0f} s")
    build_s = time.monotonic() - t0
    size, files = tree_size(bundle)
    say(f"bundle: {bundle}")
    say(f"bundle size: {size / 2**20:.0f} MiB in {files} files ({args.variant} variant)")
    tiny = None if args.no_model_check else build_tiny_model(venv_python(args.variant))
    layout = None if args.no_model_check else build_tiny_layout(venv_python(args.variant))
    rc = postbuild_check.check(bundle, tiny_model=tiny, tiny_layout=layout)
    if rc != 0:
        return rc
    if args.tarball and sys.platform.startswith("linux"):
        tb = make_tarball(bundle, args.variant)
        say(f"tarball: {tb} ({tb.stat().st_size / 2**20:.0f} MiB)")
    say(f"build time: {build_s / 60:.1f} min (+ {time.monotonic() - t0 - build_s:.0f} s post-build check)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
