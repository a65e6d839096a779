"""The layout's rules (../shared/architecture.md), read from the source itself.

Python: every ``import`` of a harness module, at module level or inside a function, is an edge.
- the measuring half (serve/, drive/, probe/) never imports the analysing half (tables, stats/,
  verdicts/, report/, pipeline);
- the analysing half imports nothing of the measuring half but store/;
- nothing imports cli/ (but cli/ itself and ``python -m harness``);
- no import cycle between modules.
JavaScript (web/, workloads/): static and dynamic imports with literal paths; no cycle.
Also: no module over ~400 lines without a note ("over 400 lines …") in its first 40 lines saying why; registries keep unique names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HARNESS = REPO / "harness"

MEASURING = ("harness.serve", "harness.drive", "harness.probe")
ANALYSING = ("harness.tables", "harness.stats", "harness.verdicts", "harness.report")
#: Modules of the measuring half (and the commands) the analysing half may not import.
NOT_FOR_ANALYSIS = MEASURING + ("harness.plan", "harness.engines", "harness.npm", "harness.native", "harness.cli",
                                 "harness.pipeline")
MAX_LINES = 400
SIZE_NOTE = re.compile(r"over 400 lines", re.I)


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in HARNESS.rglob("*.py")}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Harness modules ``path`` imports (module level and inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for n in names:
            while n and n not in known:
                n = n.rsplit(".", 1)[0] if "." in n else ""
            if n.startswith("harness") and n != name:
                out.add(n)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: _imports(path, name, known) for name, path in mods.items()}


def _in(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of module names, or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_the_graph_sees_function_level_imports():
    g = _graph()
    # harness/cli/run.py imports the runner inside execute(): the walk must see it
    assert "harness.drive.runner" in g["harness.cli.run"]
    assert "harness.pipeline" in g["harness.cli.common"]


def test_measuring_half_never_imports_the_analysing_half():
    bad = [(m, i) for m, deps in _graph().items() if _in(m, MEASURING) for i in deps
           if _in(i, ANALYSING + ("harness.pipeline", "harness.cli"))]
    assert bad == []


def test_analysing_half_imports_only_store_from_the_measuring_half():
    bad = [(m, i) for m, deps in _graph().items() if _in(m, ANALYSING) for i in deps if _in(i, NOT_FOR_ANALYSIS)]
    assert bad == []


def test_statistics_never_import_the_report():
    # stats/ computes numbers; words and formatting are the report's (harness/report/format.py,
    # findings.py): the statistics layer imports neither (issue 20, item 7)
    bad = [(m, i) for m, deps in _graph().items() if _in(m, ("harness.stats",)) for i in deps
           if _in(i, ("harness.report", "harness.verdicts"))]
    assert bad == []


def test_nothing_imports_the_cli():
    bad = [(m, i) for m, deps in _graph().items() if not _in(m, ("harness.cli", "harness.__main__", "harness.entry"))
           for i in deps if _in(i, ("harness.cli",))]
    assert bad == []


def test_no_python_import_cycle():
    assert _cycle(_graph()) is None


def test_cycle_finder_finds_a_planted_cycle():
    g = _graph()
    g["harness.store.store"] = g["harness.store.store"] | {"harness.drive.runner"}  # runner imports store
    assert _cycle(g) is not None


_JS_IMPORT = re.compile(r"""(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)""",
                        re.M)


def _js_graph() -> dict[Path, set[Path]]:
    files = [p for root in ("web", "workloads") for p in (REPO / root).rglob("*.js")
             if "node_modules" not in p.parts and "dist" not in p.parts]
    graph: dict[Path, set[Path]] = {}
    for f in files:
        text = re.sub(r"/\*.*?\*/", "", f.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
        deps = set()
        for m in _JS_IMPORT.finditer(text):
            spec = m.group(1) or m.group(2)
            if spec.startswith("."):
                target = (f.parent / spec).resolve()
            elif spec.startswith("/web/") or spec.startswith("/workloads/"):
                target = (REPO / spec.lstrip("/")).resolve()
            else:
                continue  # packages (onnxruntime-web) and URLs built at run time
            deps.add(target)
        graph[f.resolve()] = deps
    return graph


def test_no_javascript_import_cycle():
    g = {str(k): {str(v) for v in vs} for k, vs in _js_graph().items()}
    assert len(g) > 20
    cycle = _cycle(g)
    assert cycle is None, [Path(c).relative_to(REPO).as_posix() for c in cycle]


def test_javascript_imports_resolve():
    missing = [(k.relative_to(REPO).as_posix(), v.relative_to(REPO).as_posix()) for k, vs in _js_graph().items()
               for v in vs if not v.exists()]
    assert missing == []


@pytest.mark.parametrize("root, pattern", [("harness", "*.py"), ("web", "*.js"), ("workloads", "*.js")])
def test_long_modules_say_why(root, pattern):
    long = []
    for p in (REPO / root).rglob(pattern):
        if "dist" in p.relative_to(REPO).parts:  # generated bundles (web/inject/dist/, esbuild)
            continue
        lines = p.read_text(encoding="utf-8").splitlines()
        if len(lines) > MAX_LINES and not any(SIZE_NOTE.search(x) for x in lines[:40]):
            long.append(f"{p.relative_to(REPO)}: {len(lines)} lines")
    assert long == []


def test_registries_are_tuples_with_unique_names():
    from harness.cli import COMMANDS
    from harness.drive.registry import BROWSERS
    from harness.probe.registry import PROBES
    from harness.report.sections import SECTIONS
    from harness.stats.workloads import WORKLOAD_NUMBERS
    from harness.verdicts.budgets import KNOWN_BROWSERS

    for reg, names in ((PROBES, [p.name for p in PROBES]), (SECTIONS, [s.id for s in SECTIONS]),
                       (WORKLOAD_NUMBERS, [n for n, _ in WORKLOAD_NUMBERS]), (COMMANDS, [n for n, _ in COMMANDS])):
        assert isinstance(reg, tuple) and len(names) == len(set(names)) and all(names)
    assert set(BROWSERS) <= KNOWN_BROWSERS  # budgets parse browser names without the registry
    assert {s.id for s in SECTIONS} >= {n for n, _ in WORKLOAD_NUMBERS}


def test_readme_names_every_folder_and_module_of_the_layout():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## How it fits together"):]
    section = section[: section.index("\n## ", 3)]
    names = [f"harness/{p.name}/" for p in HARNESS.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    names += [f"harness/{p.name}" for p in HARNESS.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    names += ["web/", "workloads/", "tests/", "benchmarks/"]
    assert [n for n in names if n not in section] == []
