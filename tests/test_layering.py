"""Structure the project promises: no import cycle inside framework/ (between modules, and between
its packages), no module-level import after the first def/class in framework/ops, and no
operator-name table outside framework/ops/ (scripts/import_graph.py and
scripts/op_name_tables.py; each check is also shown to catch what it looks for)."""
import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import import_graph  # noqa: E402
import op_name_tables  # noqa: E402


def _packages(g: dict[str, set[str]]) -> dict[str, set[str]]:
    """framework's first-level packages and modules, and which import which."""
    def top(m: str) -> str:
        return ".".join(m.split(".")[:2])
    out: dict[str, set[str]] = {}
    for m, deps in g.items():
        for d in deps:
            if top(m) != top(d) and "framework" not in (top(m), top(d)):
                out.setdefault(top(m), set()).add(top(d))
    return out


def test_no_import_cycle_between_framework_modules():
    assert import_graph.cycles(import_graph.graph()) == []


def test_no_import_cycle_between_framework_packages():
    g = _packages(import_graph.graph())
    assert import_graph.cycles(g) == []
    assert "framework.compiler" not in g.get("framework.symbol", set())
    # ops read only leaves: errors, the RNG state and the np-mode state (set_np(dtype=True))
    assert not g.get("framework.ops", set()) - {"framework.base", "framework.random",
                                                "framework._np_state"}


def test_cycle_finder_finds_cycles():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "p": {"p.x"}, "p.x": {"p"}}
    assert import_graph.cycles(g) == [["a", "b", "c"]]


def test_no_operator_name_table_outside_ops():
    assert op_name_tables.scan() == []


@pytest.mark.parametrize("src", [
    "def f(n):\n    return n.opname == 'BatchNorm'\n",
    "def f(n):\n    return n.op.name in ('Convolution', 'FullyConnected')\n",
    "_IDENT = {'Dropout', '_npx_dropout'}\n",
    "def f(n):\n    return n.opname.startswith('_np')\n",
])
def test_the_table_check_catches_tables(src):
    assert op_name_tables.scan_source(src, "x.py", {"BatchNorm", "Convolution", "Dropout",
                                                    "FullyConnected", "_npx_dropout"})


def test_a_front_end_keeps_no_op_name_table_but_may_name_an_op_in_a_call():
    names = {"_npi_exp", "_npi_log", "clip"}
    table = "from framework.dispatch import invoke\n_OPS = {'exp': '_npi_exp', 'log': '_npi_log'}\n"
    assert op_name_tables.scan_source(table, "x.py", names)   # front ends expose via the registry
    call = ("from framework.dispatch import invoke\n"
            "def f(n):\n    return n.opname == 'null' or invoke('clip', [n], {})\n")
    assert op_name_tables.scan_source(call, "x.py", names) == []


def _late_imports(src: str) -> list[int]:
    """Lines of module-level imports that come after the module's first def/class (a deferred
    import inside a function is not one: it is where a real cycle forces it)."""
    body = ast.parse(src).body
    first = next((i for i, n in enumerate(body)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))), len(body))
    return [n.lineno for n in body[first:] if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_no_mid_file_imports_in_ops():
    ops = Path(__file__).resolve().parent.parent / "framework" / "ops"
    bad = [f"{p.relative_to(ops)}:{ln}" for p in sorted(ops.rglob("*.py"))
           for ln in _late_imports(p.read_text())]
    assert bad == []


def test_the_late_import_check_catches_them():
    src = ("import numpy as np\n\ndef f():\n    import json\n    return json\n\n"
           "from .lowering import lowers  # noqa: E402\n\nclass C:\n    import os\n")
    assert _late_imports(src) == [7]
    assert _late_imports("import os\nX = 1\nimport sys\n") == []
