"""The shape of the house: imports go down the floors only, no two modules of app/ import each other (directly or
round a loop), no module grows past 450 lines, and facts that used to be copied live in one place."""
from __future__ import annotations

import ast
from pathlib import Path

import app

ROOT = Path(app.__file__).parent
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every app module `name` imports, anywhere in it (lazy imports and type-checking imports count too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


# The floors, top to bottom (docs/architecture.md, "Floors"; test_docs checks that page lists the same). A module may
# import its own package and anything on a lower floor; packages that share a floor never import each other. Every
# module of app/ belongs to exactly one named package here: there is no catch-all. `app` and `app.core` stand for
# their own __init__ only (the version, a docstring).
FLOORS = (
    ("app.__main__",),
    ("app.cli",),
    ("app.commands",),
    ("app.bench",),
    ("app.gui",),
    ("app.core.review",),
    ("app.core.pipeline", "app.core.training"),
    ("app.core.layout", "app.core.engines", "app.core.formats"),
    ("app.core.decoding", "app.core.tiny"),
    ("app.core.scripts",),
    ("app.core.record", "app.core.checkpoints", "app.core.text", "app.core.rapid"),
    ("app.core.document",),
    ("app.core.base",),
    ("app", "app.core"),
)
ROOTS = ("app", "app.core")  # packages whose floor holds their __init__ alone; their sub-packages have floors of their own


def floor_of(module: str) -> tuple[int, str]:
    for level, packages in enumerate(FLOORS):
        for package in packages:
            if module == package or (package not in ROOTS and module.startswith(package + ".")):
                return level, package
    raise LookupError(f"{module} is on no floor: add its package to FLOORS and to docs/architecture.md")


def test_every_module_is_on_a_named_floor():
    unplaced = []
    for name in _modules():
        try:
            floor_of(name)
        except LookupError:
            unplaced.append(name)
    assert not unplaced, unplaced


def climbing_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for name, targets in graph.items():
        level, package = floor_of(name)
        for target in targets:
            t_level, t_package = floor_of(target)
            if t_level < level or (t_level == level and t_package != package):
                bad.append(f"{name} -> {target}")
    return sorted(bad)


def test_imports_go_down_the_floors_only():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert not climbing_imports(graph), "imports that climb a floor:\n" + "\n".join(climbing_imports(graph))


def test_the_floor_check_catches_a_climbing_import():
    graph = {"app.core.decoding.selfspec": {"app.core.engines.base"}, "app.core.layout.budget": {"app.core.engines"},
             "app.core.document.regions": {"app.core.record.events"},
             "app.core.engines.glm_engine": {"app.core.decoding.selfspec"},
             "app.core.base.paths": {"app.core.pipeline.output"}, "app.bench.frames": {"app.commands.gui"}}
    assert climbing_imports(graph) == ["app.bench.frames -> app.commands.gui",
                                       "app.core.base.paths -> app.core.pipeline.output",
                                       "app.core.decoding.selfspec -> app.core.engines.base",
                                       "app.core.document.regions -> app.core.record.events",
                                       "app.core.layout.budget -> app.core.engines"]


def test_no_import_cycles_in_app():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_no_module_over_450_lines():
    long = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, long


# the run and the window, split by job: each piece reads without scrolling sideways
SPLIT_BY_JOB = ("core/pipeline/run.py", "core/pipeline/loading.py", "core/pipeline/run_outcome.py",
                "core/pipeline/text_compare.py", "gui/main_window.py", "gui/window_*.py")


def test_the_modules_split_by_job_keep_their_lines_within_110_characters():
    files = sorted({p for pattern in SPLIT_BY_JOB for p in ROOT.glob(pattern)})
    assert len(files) >= 10
    wide = [f"{p.relative_to(ROOT.parent)}:{n}" for p in files
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if len(line) > 110]
    assert not wide, wide


def test_facts_that_were_copied_are_defined_once():
    text = {p: p.read_text(encoding="utf-8") for p in ROOT.rglob("*.py")}
    for definition in ("DECODED_TASKS = ", "IMAGE_SUFFIXES = ", "DOCUMENT_SUFFIXES = ", "def region_id(",
                       "def route(", "def pictures_dir(", "JSON_SCHEMA = "):
        places = [str(p.relative_to(ROOT.parent)) for p, t in text.items()
                  if t.startswith(definition) or f"\n{definition}" in t]  # module level
        assert len(places) == 1, (definition, places)


def test_the_window_opens_what_core_opens():
    from app.core.document import DOCUMENT_SUFFIXES
    from app.gui import main_window
    from app.gui.window_dialogs import DOCUMENT_FILTER

    assert main_window.DOCUMENT_SUFFIXES is DOCUMENT_SUFFIXES
    assert {".pdf", ".png", ".xps", ".epub", ".cbz"} <= DOCUMENT_SUFFIXES
    assert all(f"*{s}" in DOCUMENT_FILTER for s in DOCUMENT_SUFFIXES)


def _documented_floors() -> tuple[tuple[str, ...], ...]:
    import re

    text = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[text.index("| floor | what lives there |"):].split("\n\n", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines()[2:]]
    return tuple(tuple(re.findall(r"`([a-z_.]+)`", cell)) for cell in rows)


def test_the_documented_floors_are_the_checked_floors():
    assert _documented_floors() == FLOORS


def test_the_documented_redraw_rate_is_the_windows():
    import re

    from app.gui import main_window

    text = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert re.search(r"redraws\s+from the latest state every (\d+) ms", text).group(1) == str(main_window.FRAME_MS)
