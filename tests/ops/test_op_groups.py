"""Named op groups (framework/ops/groups.py) name live operators by their canonical names, and
the OpDef keeps no field that a group replaced."""
from __future__ import annotations

import dataclasses

import pytest

from framework.ops import OpDef, OpGroup, get_op, has_op

GROUPS = OpGroup.all()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_group_names_registered_canonical_ops(group):
    names = GROUPS[group]
    assert names and all(has_op(n) and get_op(n).name == n for n in names), group


def test_group_facts_are_not_opdef_fields_too():
    fields = {f.name for f in dataclasses.fields(OpDef)}
    replaced = {"identity_at_inference", "unknown_zero_dims", "adds", "same_shape_operands",
                "fuses", "runs_subgraph", "passes_shape", "amp"}
    assert not fields & replaced
    assert len(GROUPS) == 9


def test_aliases_resolve_to_their_group_member():
    # passes ask `n.op.name in OpGroup.X`: a node written with any alias finds the group
    assert get_op("_plus").name in OpGroup.ADDS and get_op("broadcast_add").name in OpGroup.ADDS
    assert get_op("stop_gradient").name in OpGroup.IDENTITY_AT_INFERENCE
