#!/usr/bin/env python
"""Print the operator coverage table for the README: every registered op by family module,
with all the MXNet names (1.x and 2.x) it answers to."""
from __future__ import annotations

import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from framework.ops.registry import unique_ops  # noqa: E402


def main() -> None:
    fams: dict[str, list] = defaultdict(list)
    for op in unique_ops():
        if op.name.startswith("_hs_"):
            continue
        fams[op.kernel.__module__.rsplit(".", 1)[-1]].append(op)
    total = sum(len(v) for v in fams.values())
    names = sum(1 + len(op.aliases) for v in fams.values() for op in v)
    print(f"{total} operators answering to {names} MXNet names.\n")
    print("| family | operators (aliases in parentheses) |")
    print("|---|---|")
    for fam in sorted(fams):
        cells = []
        for op in sorted(fams[fam], key=lambda o: o.name.lower()):
            al = [a for a in op.aliases if a != op.name]
            cells.append(f"`{op.name}`" + (f" ({', '.join(al)})" if al else ""))
        print(f"| {fam} | {'; '.join(cells)} |")


if __name__ == "__main__":
    main()
