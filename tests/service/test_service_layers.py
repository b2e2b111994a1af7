"""service/ is layered: no import cycle between its modules, and each package imports only the
layers below it (service/README.md draws them). Static: the import statements of every module,
at any depth (inside functions and `if TYPE_CHECKING:` too), read with `ast`."""
from __future__ import annotations

import ast
from pathlib import Path

from serverproc import ROOT

SERVICE = ROOT / "service"
# lower → higher; a package may import its own layer and those before it
LAYERS = [("errors", "settings", "logs", "limits"), ("protocol",), ("repository",), ("runtime",),
          ("core",), ("api",), ("cli", "__main__")]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in SERVICE.rglob("*.py")}


def _targets(mod: str, path: Path, node: ast.ImportFrom | ast.Import, known: set[str]) -> set[str]:
    """The service modules one import statement loads (a name imported from a package counts
    as that submodule when one exists)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in known}
    if node.level:
        base = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    out = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known}
    if len(out) < len(node.names) and target in known:
        out.add(target)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(mod, path, node, known)
        graph[mod] = edges - {mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(mod: str) -> int:
    top = mod.split(".")[1] if "." in mod else ""
    for k, names in enumerate(LAYERS):
        if top in names:
            return k
    raise AssertionError(f"{mod}: not in any layer of LAYERS (add its package)")


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_service():
    graph = import_graph()
    assert len(graph) > 40 and graph["service.core.dataplane"] >= {"service.core.sync",
                                                                  "service.runtime.registry"}
    assert cycles(graph) == []


def test_packages_import_only_lower_layers():
    bad = [f"{m} → {t}" for m, ts in import_graph().items() if m != "service"
           for t in ts if t != "service" and _layer(t) > _layer(m)]
    assert bad == []
