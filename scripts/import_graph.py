"""Imports between the modules of a package (framework by default; service too), and the cycles
among them (tests/test_layering.py, tests/service/test_service_layers.py).

    python scripts/import_graph.py            # prints every cycle; exit status 1 if any

Every `import` / `from … import` in a module counts, at module level or inside a function: a
deferred import only hides a cycle, it does not remove it. `if TYPE_CHECKING:` blocks are
ignored (annotations only). Modules are nodes; a package's `__init__` is the package itself.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, mod: str, is_pkg: bool, known: set[str]) -> set[str]:
    out: set[str] = set()
    pkg = mod if is_pkg else mod.rpartition(".")[0]
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1] if node.level else []
            stem = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{stem}.{a.name}"
                out.add(sub if sub in known else stem)
        stack.extend(ast.iter_child_nodes(node))
    return {_owner(m, known) for m in out if _owner(m, known)} - {mod}


def _owner(name: str, known: set[str]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def graph(package: str = "framework") -> dict[str, set[str]]:
    files = sorted((ROOT / package).rglob("*.py"))
    names = {module_name(p): p for p in files}
    known = set(names)
    return {m: _imports(ast.parse(p.read_text()), m, p.name == "__init__.py", known)
            for m, p in names.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted.
    A package importing its own submodules (`__init__` re-exports) is not a cycle by itself:
    edges from a package to modules inside it are left out."""
    edges = {m: {d for d in ds if not d.startswith(m + ".")} for m, ds in g.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    found = cycles(graph())
    for c in found:
        print("cycle:", " ".join(c))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
