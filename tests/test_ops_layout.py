"""framework/ops is grouped by family (issue 25): few top-level modules, engine internals in the
private `_kernels` package, every other module public, a private module imported only from inside
the package that holds it, and every operator module imported by the catalog."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import import_graph  # noqa: E402
from framework.ops.registry import all_ops  # noqa: E402

OPS = Path(__file__).resolve().parent.parent / "framework" / "ops"
MAX_TOP_LEVEL = 25


def top_level(ops: Path = OPS) -> list[str]:
    """Modules and packages directly in framework/ops, `__init__.py` counted."""
    return sorted(p.name for p in ops.iterdir()
                  if (p.is_file() and p.suffix == ".py") or (p / "__init__.py").is_file())


def private_outside_kernels(ops: Path = OPS) -> list[str]:
    """Modules of framework/ops (outside `_kernels`) whose dotted path has a private part."""
    out = []
    for p in sorted(ops.rglob("*.py")):
        parts = p.relative_to(ops).with_suffix("").parts
        if parts[0] != "_kernels" and any(s.startswith("_") and s != "__init__" for s in parts):
            out.append("/".join(parts))
    return out


def _owner(mod: str) -> str | None:
    """The package a private module belongs to: the part before its first private component
    (`framework.ops._kernels.int8` → `framework.ops`); None for a public module."""
    parts = mod.split(".")
    for k, s in enumerate(parts):
        if s.startswith("_") and s != "__init__":
            return ".".join(parts[:k])
    return None


def private_imports(g: dict[str, set[str]]) -> list[str]:
    """Imports of a private module from outside the package that holds it."""
    bad = []
    for m, deps in sorted(g.items()):
        for d in sorted(deps):
            own = _owner(d)
            if own is not None and m != own and not m.startswith(own + "."):
                bad.append(f"{m} → {d}")
    return bad


def test_ops_has_few_top_level_modules():
    assert len(top_level()) <= MAX_TOP_LEVEL, top_level()


def test_ops_modules_are_public_outside_kernels():
    assert private_outside_kernels() == []


def test_private_modules_are_imported_only_inside_their_package():
    assert private_imports(import_graph.graph()) == []


def test_the_layout_checks_catch_what_they_look_for(tmp_path):
    for name in [f"m{k}.py" for k in range(MAX_TOP_LEVEL)] + ["_x.py"]:
        (tmp_path / name).write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "_h.py").write_text("")
    (tmp_path / "_kernels").mkdir()
    (tmp_path / "_kernels" / "__init__.py").write_text("")
    (tmp_path / "_kernels" / "w.py").write_text("")
    assert len(top_level(tmp_path)) == MAX_TOP_LEVEL + 3
    assert private_outside_kernels(tmp_path) == ["_x", "pkg/_h"]
    g = {"framework.compiler.x": {"framework.ops._kernels.w", "framework.ops.nn.conv"},
         "framework.ops.nn.conv": {"framework.ops._kernels.w", "framework._np_state"},
         "framework.numpy.linalg": {"framework.numpy._base"},
         "framework.symbol.graph": {"framework.numpy._base"}}
    assert private_imports(g) == ["framework.compiler.x → framework.ops._kernels.w",
                                  "framework.symbol.graph → framework.numpy._base"]


def test_the_catalog_imports_every_operator_module():
    assert len(all_ops()) > 500
    mods = ["framework.ops." + ".".join(p.relative_to(OPS).with_suffix("").parts)
            for p in sorted(OPS.glob("[!_]*/[!_]*.py"))]
    assert len(mods) > 40 and [m for m in mods if m not in sys.modules] == []
