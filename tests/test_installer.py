"""The installer recipe, checked fast: the PyInstaller spec names the right entry point and collects resources/ and
models/, the hooks parse, the Linux desktop entry and AppStream file are valid, the install script installs and
uninstalls into a throw-away home, and the post-build check fails loudly on a broken bundle.

The real build (`python3 installer/build.py`) takes many minutes and is not part of CI.
"""
from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALLER = ROOT / "installer"
SPEC = INSTALLER / "scriptorium.spec"
LINUX = INSTALLER / "linux"
APP_ID = "org.scriptorium.Scriptorium"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
ICONS = ROOT / "resources" / "icons"


def _app_version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _spec_tree() -> ast.Module:
    return ast.parse(SPEC.read_text(), filename=str(SPEC))


def _spec_namespace(variant: str) -> dict:
    """Run the spec's plain-Python part (constants, model_datas, the payload filter), not PyInstaller's steps."""
    tree = _spec_tree()
    body = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "Analysis":
            break
        body.append(node)
    body += [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_unwanted"
             or isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_TORCH_TEST_LIBS"]
    ns = {"SPECPATH": str(INSTALLER), "__name__": "spec"}
    old = os.environ.get("SCRIPTORIUM_VARIANT")
    os.environ["SCRIPTORIUM_VARIANT"] = variant
    try:
        exec(compile(ast.Module(body=body, type_ignores=[]), str(SPEC), "exec"), ns)
    finally:
        if old is None:
            os.environ.pop("SCRIPTORIUM_VARIANT", None)
        else:
            os.environ["SCRIPTORIUM_VARIANT"] = old
    return ns


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == name]


def test_spec_runs_app_cli_main_through_app_main_module():
    ns = _spec_namespace("default")
    assert ns["ENTRY_POINT"] == "app.cli:main"
    assert ns["ENTRY_SCRIPT"] == "app/__main__.py"
    main_py = ast.parse((ROOT / ns["ENTRY_SCRIPT"]).read_text())
    imports = [(n.module, a.name) for n in ast.walk(main_py) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert ("app.cli", "main") in imports
    (analysis,) = _calls(_spec_tree(), "Analysis")
    scripts = ast.unparse(analysis.args[0])
    assert "ENTRY_SCRIPT" in scripts
    kw = {k.arg: ast.unparse(k.value) for k in analysis.keywords}
    assert "hooks" in kw["hookspath"] and "rthook_scriptorium.py" in kw["runtime_hooks"]
    (collect,) = _calls(_spec_tree(), "COLLECT")
    assert {k.arg: ast.unparse(k.value) for k in collect.keywords}["name"] == "APP_NAME"
    assert ns["APP_NAME"] == "scriptorium"


def test_spec_collects_resources_and_every_model_manifest():
    ns = _spec_namespace("default")
    datas = ns["datas"]
    assert (str(ROOT / "resources"), "resources") in datas
    assert (ROOT / "resources" / "samples" / "sample.pdf").is_file()
    bundled = {Path(src).name for src, dest in datas if dest == "models"}
    manifests = {p.name for p in (ROOT / "models").glob("*.json")}
    assert manifests and manifests <= bundled
    for src, dest in datas:
        assert not src.endswith((".pt", ".pth", ".bin", ".ckpt", ".pkl")), f"pickled weights bundled: {src}"
        assert dest in ("resources", "tessdata") or dest.startswith("models") or dest.endswith((".dist-info",
                                                                                              ".egg-info"))
    assert ns["MAX_BUNDLED_MODEL_BYTES"] <= 200 * 2**20
    # the engines and commands are imported by name at run time
    assert {"app.cli", "transformers.models.glm_ocr", "transformers.models.unlimited_ocr"} <= set(ns["hiddenimports"])


def test_spec_payload_filter_drops_gpu_libraries_only_in_the_cpu_variant():
    cpu, default = _spec_namespace("cpu"), _spec_namespace("default")
    assert "torchvision" in cpu["excludes"] and "torchvision" not in default["excludes"]
    gpu_lib = "nvidia/cublas/lib/libcublas.so.13"
    assert cpu["_unwanted"](gpu_lib) and not default["_unwanted"](gpu_lib)
    assert cpu["_unwanted"]("torch/lib/libtorch_cuda.so") and not default["_unwanted"]("torch/lib/libtorch_cuda.so")
    for keep in ("torch/lib/libtorch_cpu.so", "torch/bin/torch_shm_manager", "rapidocr/models/PP-OCRv6_det_small.onnx",
                 "pymupdf/layout/resources/onnx/feature_imf1.onnx", "resources/samples/sample.pdf"):
        assert not cpu["_unwanted"](keep), keep
    for drop in ("torch/test/Dict_test", "torch/bin/test_jit", "torch/bin/protoc", "torch/lib/libtorchbind_test.so",
                 "torch/include/ATen/ATen.h", "pymupdf/mupdf-devel/lib/libmupdf.a", "torch/share/cmake/Torch/x.cmake"):
        assert cpu["_unwanted"](drop) and default["_unwanted"](drop), drop


def test_hooks_parse_and_collect_the_ocr_data_files():
    hooks = sorted((INSTALLER / "hooks").glob("*.py"))
    names = {h.name for h in hooks}
    assert {"hook-app.py", "hook-rapidocr.py", "hook-pymupdf4llm.py", "hook-pymupdf.py", "hook-torchvision.py",
            "rthook_scriptorium.py"} <= names
    for h in hooks:
        ast.parse(h.read_text(), filename=str(h))
    for pkg in ("rapidocr", "pymupdf4llm", "pymupdf"):
        text = (INSTALLER / "hooks" / f"hook-{pkg}.py").read_text()
        assert f'collect_data_files("{pkg}"' in text
    assert "collect_submodules" in (INSTALLER / "hooks" / "hook-app.py").read_text()


def test_desktop_entry_is_valid():
    if shutil.which("desktop-file-validate"):
        proc = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
        assert proc.returncode == 0 and "error" not in proc.stdout, proc.stdout + proc.stderr
    cp = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    cp.optionxform = str
    cp.read(DESKTOP, encoding="utf-8")
    entry = cp["Desktop Entry"]
    for key in ("Type", "Name", "Exec", "Icon", "Categories", "MimeType", "Comment"):
        assert entry.get(key), key
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "scriptorium" and entry["Exec"].split()[1] in ("%F", "%U", "%f", "%u")
    assert entry["Categories"].endswith(";") and entry["MimeType"].endswith(";")
    assert "application/pdf" in entry["MimeType"].split(";")
    assert (ICONS / f"{entry['Icon']}.svg").is_file()


def test_metainfo_parses_and_matches_the_desktop_entry():
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == DESKTOP.name
    assert root.findtext("provides/binary") == "scriptorium"
    assert root.findtext("metadata_license") and root.findtext("project_license") == "Apache-2.0"
    assert root.find("releases/release").get("version") == _app_version()
    if shutil.which("appstreamcli"):
        proc = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_icon_set_is_complete():
    ET.parse(ICONS / "scriptorium.svg")
    for size in (16, 32, 48, 64, 128, 256, 512):
        assert _png_size(ICONS / f"scriptorium-{size}.png") == (size, size)
    assert (ICONS / "scriptorium.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    assert (ICONS / "scriptorium.icns").read_bytes()[:4] == b"icns"


def _fake_bundle(tmp: Path, convert_ok: bool = True, window_ok: bool = True) -> Path:
    """A bundle-shaped folder whose `scriptorium` is a shell script standing in for the frozen executable."""
    bundle = tmp / "bundle" / "scriptorium"
    (bundle / "_internal" / "resources" / "samples").mkdir(parents=True)
    shutil.copy(ROOT / "resources" / "samples" / "sample.pdf", bundle / "_internal" / "resources" / "samples")
    convert = ('mkdir -p "$4"; printf "# Sample document\\n\\nScriptorium reads pages into Markdown.\\n" > "$4/sample.md"'
               if convert_ok else 'echo "Traceback: ModuleNotFoundError: No module named rapidocr" >&2; exit 3')
    exe = bundle / "scriptorium"
    window = "exec sleep 30" if window_ok else 'echo "qt.qpa.plugin: Could not find the Qt platform plugin" >&2; exit 134'
    exe.write_text(f'#!/bin/sh\ncase "$1" in\n  --version) echo "scriptorium {_app_version()}";;\n'
                   f'  convert) {convert};;\n  --sample) {window};;\n  *) exit 2;;\nesac\n')
    exe.chmod(0o755)
    return bundle


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"installer_{name}", INSTALLER / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell scripts")
def test_post_build_check_passes_a_working_bundle_and_fails_loudly_on_a_broken_one(tmp_path, capsys):
    check = _load("postbuild_check")
    check.GUI_SECONDS = 0.5
    assert check.check(_fake_bundle(tmp_path / "good")) == 0
    out = capsys.readouterr().out
    assert "post-build check passed" in out and "stayed up" in out
    assert check.check(_fake_bundle(tmp_path / "bad", convert_ok=False)) == 1
    err = capsys.readouterr().err
    assert "POST-BUILD CHECK FAILED at convert" in err and "No module named rapidocr" in err
    assert check.check(_fake_bundle(tmp_path / "nogui", window_ok=False)) == 1
    err = capsys.readouterr().err
    assert "POST-BUILD CHECK FAILED at window" in err and "Qt platform plugin" in err


def test_build_script_variants_and_ci_does_not_build():
    sys.path.insert(0, str(INSTALLER))
    try:
        build = _load("build")
    finally:
        sys.path.remove(str(INSTALLER))
    names = lambda reqs: {build._req_name(r) for r in reqs}  # noqa: E731
    assert {"torch", "torchvision", "pyside6-essentials", "rapidocr"} <= names(build.requirements("default"))
    cpu = names(build.requirements("cpu"))
    assert "torchvision" not in cpu and "torch" not in cpu and "rapidocr" in cpu  # CPU torch is installed on its own
    assert "+cpu" in build.CPU_TORCH
    assert "installer" not in (ROOT / ".ci" / "run").read_text()  # the slow build is never part of CI


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux install script")
def test_install_script_installs_and_uninstalls_into_xdg_places(tmp_path):
    bundle = _fake_bundle(tmp_path)
    home = tmp_path / "home"
    userdata = home / ".local" / "share" / "scriptorium"
    userdata.mkdir(parents=True)
    (userdata / "journal.jsonl").write_text("{}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = str(home)
    script = str(LINUX / "install.sh")
    proc = subprocess.run(["sh", script, "--bundle", str(bundle)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    share = home / ".local" / "share"
    lib = home / ".local" / "lib" / "scriptorium"
    desktop = share / "applications" / DESKTOP.name
    assert (lib / "scriptorium").is_file() and (lib / "_internal" / "resources" / "samples" / "sample.pdf").is_file()
    assert f"Exec={lib}/scriptorium %F" in desktop.read_text()
    assert (share / "metainfo" / METAINFO.name).is_file()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / "scriptorium.svg").is_file()
    assert (share / "icons" / "hicolor" / "48x48" / "apps" / "scriptorium.png").is_file()
    link = home / ".local" / "bin" / "scriptorium"
    assert subprocess.run([str(link), "--version"], capture_output=True, text=True).stdout.strip() == \
        f"scriptorium {_app_version()}"

    proc = subprocess.run(["sh", script, "--uninstall"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not lib.exists() and not link.exists() and not link.is_symlink() and not desktop.exists()
    assert not (share / "metainfo" / METAINFO.name).exists()
    assert not list((share / "icons").rglob("scriptorium.*"))
    assert (userdata / "journal.jsonl").is_file()  # the user's data is kept


def test_other_platform_recipes_are_marked_as_built_there():
    nsi = (INSTALLER / "windows" / "scriptorium.nsi").read_text()
    assert "BUILT ON WINDOWS ONLY" in nsi and "Section \"Uninstall\"" in nsi and "scriptorium.ico" in nsi
    dmg = (INSTALLER / "macos" / "make_dmg.sh").read_text()
    assert "BUILT ON macOS ONLY" in dmg and "Scriptorium.app" in dmg
    assert "BUNDLE(" in SPEC.read_text() and "scriptorium.icns" in SPEC.read_text()
