"""Internal op names (`_npi_*`, `_npx_*`, `_np_*`, `_contrib_*`) spelled outside framework/ops/.

    python scripts/internal_op_names.py      # prints each spelling and the total

The op registry is the only place these names belong: front-ends reach operators by the names
they expose them under (`registry.expose`, `framework.frontend.op("np.add:scalar")`). Every
spelling counts — code, comments and docstrings — except identifiers that merely contain the
prefix (`is_np_shape`, `as_np_ndarray`) and the `_np_state` module (not an operator).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPELLING = re.compile(r"(?<![\w])_(?:npi|npx|np|contrib)_\w+")
_NOT_OPS = {"_np_state"}


def spellings_in(src: str, where: str) -> list[str]:
    return [f"{where}:{src.count(chr(10), 0, m.start()) + 1}: {m.group()}"
            for m in _SPELLING.finditer(src) if m.group() not in _NOT_OPS]


def scan(packages: tuple[str, ...] = ("framework", "service")) -> list[str]:
    found: list[str] = []
    for pkg in packages:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if ROOT / "framework" / "ops" in p.parents:
                continue
            found += spellings_in(p.read_text(), str(p.relative_to(ROOT)))
    return found


def main() -> int:
    found = scan()
    print("\n".join(found + [f"{len(found)} internal op-name spellings outside framework/ops"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
