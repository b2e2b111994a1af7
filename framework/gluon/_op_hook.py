"""Names MXNet gives the arrays an op hook sees (`register_op_hook`).

MXNet's monitor names an op's inputs by the op's registered input-name list (`FListInputNames`)
and its outputs by the registered output-name list (`FListOutputNames`); an op without such a
list gets `input<j>` / `<i>` instead. So a FullyConnected node shows `node_0_data`,
`node_0_weight`, `node_0_output`, while Activation shows `node_1_input0`, `node_1_output` and
`_npi_add` shows `node_2_lhs`, `node_2_0`. Which ops lack the lists (as observed in MXNet 2.0.0b1)
is on their registry entry: `OpDef.monitor_indexed_inputs` / `monitor_indexed_outputs`.
"""
from __future__ import annotations

from typing import Callable

import numpy as _onp

from ..ndarray import ndarray
from ..symbol.graph import Node


def hook_names(steps) -> dict[str, str]:
    """Map the names the plan's hooked run reports to MXNet's monitor names."""
    names: dict[str, str] = {}
    for st in steps:
        node: Node = st.node
        reg = node.op.input_names(node.parsed)
        for j in range(len(st.ins)):
            ours = f"{node.name}_{reg[j] if j < len(reg) else f'input{j}'}"
            names[ours] = f"{node.name}_input{j}" if node.op.monitor_indexed_inputs else ours
        for i in range(node.num_visible()):
            ours = node.output_name(i)
            names[ours] = f"{node.name}_{i}" if node.op.monitor_indexed_outputs else ours
    return names


def _readonly(arr: _onp.ndarray) -> ndarray:
    v = arr.view()
    v.flags.writeable = False
    return ndarray(v)


def wrap_callback(callback: Callable, steps) -> Callable[[str, str, _onp.ndarray], None]:
    """The callback the plan calls: renamed as MXNet does, arrays read-only (MXNet passes a
    read-only NDArray)."""
    names = hook_names(steps)

    def cb(name: str, op_name: str, arr: _onp.ndarray) -> None:
        callback(names.get(name, name), op_name, _readonly(arr))
    return cb
