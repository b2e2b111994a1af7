"""Operator names used outside framework/ops/, in framework/ and service/ (tests/test_layering.py).

    python scripts/op_name_tables.py          # prints each finding; exit status 1 if any

What the registry knows must not be repeated elsewhere, so outside `framework/ops/` this reports:
* a node's operator compared with a name — `n.opname == "X"`, `n.op.name in (...)`,
  `n.opname.startswith("_np")` — instead of asking the OpDef;
* a literal table (set, tuple, list, dict) of two or more registered operator names where one is
  unmistakably an operator (a leading underscore or a capital: `_npx_relu`, `Activation`).
`__all__` lists and call arguments are not tables. Front ends (np, npx, sym) keep no tables
either: each op family declares the names its ops are exposed under (`registry.expose`), and a
front end asks for `front_op("np.exp")`. "null" is the graph format's variable marker, not an
operator. What a check of this kind cannot see, review must.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _is_op_ref(node: ast.AST) -> bool:
    """`x.opname`, or `x.op.name` / `op.name` (a node's or an OpDef's name)."""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr == "opname":
        return True
    v = node.value
    return node.attr == "name" and ((isinstance(v, ast.Attribute) and v.attr == "op")
                                     or (isinstance(v, ast.Name) and v.id == "op"))


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    if isinstance(node, ast.Dict):
        return [s for e in list(node.keys) + list(node.values) if e is not None
                for s in _strings(e)]
    return []


def _distinctive(name: str) -> bool:
    return name.startswith("_") or name[:1].isupper()


def scan_source(src: str, where: str, names: set[str]) -> list[str]:
    tree = ast.parse(src)
    found = []
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip.update(id(n) for n in ast.walk(node.value))
        if isinstance(node, ast.Call):
            skip.update(id(a) for a in node.args)
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr in ("startswith", "endswith")
                    and _is_op_ref(f.value)):
                found.append(f"{where}:{node.lineno}: operator spelling tested by prefix/suffix")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            others = [s for s in sides if not _is_op_ref(s)]
            if any(_is_op_ref(s) for s in sides) and any(
                    set(_strings(s)) - {"null"} or isinstance(s, ast.Name) for s in others):
                found.append(f"{where}:{node.lineno}: operator compared with a name")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and id(node) not in skip:
            ops = [s for s in _strings(node) if s in names]
            if len(set(ops)) >= 2 and any(_distinctive(s) for s in ops):
                found.append(f"{where}:{node.lineno}: table of operator names {sorted(set(ops))}")
    return found


def scan(packages: tuple[str, ...] = ("framework", "service")) -> list[str]:
    from framework.ops.registry import all_ops
    names = set(all_ops())
    found: list[str] = []
    for pkg in packages:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if ROOT / "framework" / "ops" in p.parents:
                continue
            found += scan_source(p.read_text(), str(p.relative_to(ROOT)), names)
    return found


def main() -> int:
    found = scan()
    print("\n".join(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
