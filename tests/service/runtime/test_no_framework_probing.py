"""The runtime uses the framework's typed objects (CompiledModel, EngineChoice) directly: no
`getattr`/`hasattr` probing in service/runtime (the check is also shown to catch probes)."""
import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[3] / "service" / "runtime"
PROBES = {"getattr", "hasattr"}


def probes(src: str) -> list[int]:
    """Lines that call getattr/hasattr (a reference to them counts as well)."""
    return sorted(n.lineno for n in ast.walk(ast.parse(src))
                  if isinstance(n, ast.Name) and n.id in PROBES)


def test_service_runtime_does_not_probe_objects():
    found = {p.name: probes(p.read_text()) for p in sorted(RUNTIME.glob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_catches_probes():
    src = ("def f(op):\n    clear = getattr(op, 'clear_buffers', None)\n"
           "    return hasattr(op, 'run_hooked')\n")
    assert probes(src) == [2, 3]
    assert probes("def f(op):\n    return op.run_hooked\n") == []
