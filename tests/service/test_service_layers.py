"""service/ is layered: no import cycle between its modules, and each package imports only the
layers below it (service/README.md draws them). Static: the import statements of every module,
at any depth (inside functions too), read with `ast` by scripts/import_graph.py."""
from __future__ import annotations

import ast
import re
import sys

from serverproc import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import import_graph as _imports  # noqa: E402  (the same reader the framework's layering uses)

cycles = _imports.cycles
# lower → higher; a package may import its own layer and those before it
LAYERS = [("errors", "settings", "logs", "limits"), ("protocol",), ("repository",), ("runtime",),
          ("core",), ("api",), ("cli", "__main__")]


def import_graph() -> dict[str, set[str]]:
    return _imports.graph("service")


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
    assert len(graph) > 40 and graph["service.core.server"] >= {"service.core.sync",
                                                                  "service.runtime.registry"}
    assert cycles(graph) == []


def test_packages_import_only_lower_layers():
    bad = [f"{m} → {t}" for m, ts in import_graph().items() if m != "service"
           for t in ts if t != "service" and _layer(t) > _layer(m)]
    assert bad == []


def test_logger_names_match_modules():
    """Every service logger is `hybridserve.<its module>`: a log line names where it came from
    (logs.configure routes the `hybridserve` tree)."""
    root = ROOT / "service"
    bad = []
    for p in root.rglob("*.py"):
        for name in re.findall(r'getLogger\("([^"]+)"\)', p.read_text()):
            if name != f"hybridserve.{p.stem}":
                bad.append(f"{p.relative_to(root)}: {name}")
    assert bad == []


def test_broad_excepts_are_few_and_say_why():
    """Errors are raised as ServiceErrors and mapped once (errors.to_service_error); a catch-all
    is kept only at a boundary (a transport, the data plane, polling, a model probe) and its
    comment says why. (`except BaseException:` blocks clean up and re-raise: not counted.)"""
    root = ROOT / "service"
    found = [(p.relative_to(root), ln) for p in root.rglob("*.py")
             for ln in p.read_text().splitlines() if re.search(r"except Exception\b", ln)]
    assert len(found) <= 10, found
    assert [f for f in found if not re.search(r"#.*BLE001 - \w", f[1])] == []


def _private_framework_imports(src: str, where: str) -> list[str]:
    """Imports in `src` that name a private framework module (a path component starting with `_`,
    `__init__` aside): what service/ needs from the framework must be public there."""
    def private(dotted: str) -> bool:
        return any(p.startswith("_") and p != "__init__" for p in dotted.split("."))

    def is_module(dotted: str) -> bool:
        path = ROOT.joinpath(*dotted.split("."))
        return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

    bad = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            # `from framework.x import _y` names a module only where _y is one
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                     if is_module(f"{node.module}.{a.name}")]
        else:
            continue
        bad += [f"{where}:{node.lineno}: {n}" for n in names
                if n.split(".")[0] == "framework" and private(n)]
    return bad


def test_service_imports_no_private_framework_module():
    root = ROOT / "service"
    bad = [b for p in sorted(root.rglob("*.py"))
           for b in _private_framework_imports(p.read_text(), str(p.relative_to(ROOT)))]
    assert bad == []


def test_the_private_import_check_catches_them():
    src = ("import framework.ops._kernels.int8 as q\nfrom framework.ops._kernels.mkldnn_common import cached\n"
           "from framework.ops._kernels import int8_onnx as _int8_onnx\n"
           "def f():\n    from framework.ops.registry import _OPS, get_op\n    import json._x\n")
    assert _private_framework_imports(src, "x.py") == [
        "x.py:1: framework.ops._kernels.int8", "x.py:2: framework.ops._kernels.mkldnn_common",
        "x.py:3: framework.ops._kernels", "x.py:3: framework.ops._kernels.int8_onnx"]
