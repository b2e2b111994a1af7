#!/usr/bin/env python
"""Census of the registry's facts: how many entries set each `OpDef` field (the fields set on
at most 4 entries are candidates for a named group in framework/ops/groups.py), the named
groups, the ops whose shapes depend on their input values, and any op with neither a shape rule
nor that flag (tests/ops/test_registry_shapes.py fails on those).

    python scripts/op_facts.py
"""
from __future__ import annotations

import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from framework.ops import OpDef, OpGroup, unique_ops  # noqa: E402

_ALWAYS = {"name", "kernel", "doc"}          # every entry has them


def _default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else None


def main() -> None:
    ops = unique_ops()
    fields = [f for f in dataclasses.fields(OpDef) if f.name not in _ALWAYS]
    print(f"{len(ops)} operators, {len(dataclasses.fields(OpDef))} OpDef fields\n")
    for f in sorted(fields, key=lambda f: sum(getattr(o, f.name) != _default(f) for o in ops)):
        users = sorted(o.name for o in ops if getattr(o, f.name) != _default(f))
        rare = f"  {', '.join(users)}" if len(users) <= 4 else ""
        print(f"{f.name:24} {len(users):4}{rare}")
    print("\nnamed groups:")
    for name, members in OpGroup.all().items():
        print(f"  {name:24} {', '.join(sorted(members))}")
    dep = sorted(o.name for o in ops if o.shape_depends_on_data is not False)
    print(f"\nshapes depend on the input values ({len(dep)}): {', '.join(dep)}")
    missing = sorted(o.name for o in ops
                     if o.infer_shape is None and o.shape_depends_on_data is False)
    print(f"no shape rule and no data dependence ({len(missing)}): {', '.join(missing) or '-'}")


if __name__ == "__main__":
    main()
