"""The package's import graph, read from the source with ``ast``: no cycle among the modules of
rag_assets and resources, and no import from a lower layer to a higher one."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rag_assets", "resources")

# Lowest first: a module may import its own layer and the ones before it, never the ones after.
LAYERS = [
    ("core", ("rag_assets.core",)),
    ("config", ("rag_assets.config",)),
    ("clients", ("rag_assets.clients",)),
    ("resources", ("resources",)),
    ("services", ("rag_assets.progress", "rag_assets.instance", "rag_assets.query", "rag_assets.evaluate",
                  "rag_assets.tables", "rag_assets.serve")),
    ("defs", ("rag_assets.defs",)),
    ("app", ("rag_assets.ingest",)),
    ("entry points", ("rag_assets.cli", "rag_assets.__main__", "rag_assets.definitions")),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The package module ``name`` refers to (a name imported from a module counts as the module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """Package modules ``module`` imports anywhere in its file (functions included)."""
    tree = ast.parse(MODULES[module].read_text())
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out.update(t for t in map(_resolve, names) if t and t != module)
    return out


GRAPH = {m: imports_of(m) for m in MODULES}


def layer_of(module: str) -> int:
    matches = [(len(prefix), i) for i, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    if not matches:
        pytest.fail(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return max(matches)[1]


def _cycle() -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(GRAPH[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = 2
        path.pop()
        return None

    for m in sorted(GRAPH):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycle():
    cycle = _cycle()
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_imports_point_down_the_layers():
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {n} ({LAYERS[layer_of(n)][0]})"
              for m in sorted(GRAPH) for n in sorted(GRAPH[m]) if layer_of(n) > layer_of(m)]
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_the_graph_sees_imports():
    assert "rag_assets.defs.names" in GRAPH["rag_assets.defs.sensors"]
