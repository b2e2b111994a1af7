"""Compile a graph into a plan: a flat list of steps run by generated straight-line Python.

Everything that depends only on the graph is done here, once: topological order, attribute
parsing, kernel binding and slot assignment. The generated function is the fast path (no hook or
flag checks); `run_hooked` is the second loop over the same steps that calls op hooks.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from ..base import OperatorError, ShapeError
from ..ops.groups import OpGroup
from ..symbol.graph import Node, Symbol
from .memory_plan import MemoryPlan, plan_memory
from .passes.unknown_dims import resolve, unresolved_nodes


@dataclass
class Step:
    node: Node
    fn: Callable                 # kernel bound to the node's parsed attrs
    ins: list[int]               # input slots
    outs: list[int]              # output slots (all outputs, hidden included)


class Plan:
    """Graph + input order → slots and steps; `run(inputs)` returns the graph outputs."""

    def __init__(self, symbol: Symbol, input_names: list[str] | None = None):
        self.symbol = symbol
        order = symbol.topo()
        self.input_names = input_names or symbol.list_inputs()
        slot: dict[tuple[int, int], int] = {}
        var_nodes = {n.name: n for n in order if n.is_var}
        self.n_inputs = len(self.input_names)
        for k, name in enumerate(self.input_names):
            if name in var_nodes:          # names the graph no longer reads are unused slots
                slot[(id(var_nodes[name]), 0)] = k
        missing = [n.name for n in order if n.is_var and (id(n), 0) not in slot]
        if missing:
            raise OperatorError(f"graph inputs not provided: {missing}")
        nslots = self.n_inputs
        self.steps: list[Step] = []
        for n in order:
            if n.is_var:
                continue
            if n.subgraphs and not (n.op.name in OpGroup.RUNS_SUBGRAPH or n.op.subgraph_attrs):
                raise OperatorError(f"node '{n.name}' (op {n.opname}): control-flow subgraphs are not supported")
            ins = [slot[(id(src), i)] for src, i in n.inputs]
            outs = list(range(nslots, nslots + n.num_outputs()))
            nslots += len(outs)
            for i, s in enumerate(outs):
                slot[(id(n), i)] = s
            value = getattr(n, "value", None)          # a folded constant (passes/simplify.py)
            fn = (lambda v=value[0]: v) if value is not None else partial(n.op.kernel, n.parsed)
            self.steps.append(Step(n, fn, ins, outs))
        self.n_slots = nslots
        self.out_slots = [slot[(id(n), i)] for n, i in symbol.outputs]
        self._unresolved = unresolved_nodes(order)
        self._by_sig: dict[tuple, Callable] = {}
        self._fn = self._generate() if not self._unresolved else self._run_resolving

    # -- the fast path ------------------------------------------------------------------------
    def _generate(self, buffers: dict[int, np.ndarray] | None = None,
                  kernels: dict[int, Callable] | None = None) -> Callable:
        env: dict[str, object] = {}
        args = ", ".join(f"v{i}" for i in range(self.n_inputs))
        lines = [f"def run({args}):"]
        for k, st in enumerate(self.steps):
            env[f"k{k}"] = (kernels or {}).get(k, st.fn)
            call_args = ", ".join(f"v{i}" for i in st.ins)
            if buffers and k in buffers:
                env[f"b{k}"] = buffers[k]
                call_args += (", " if call_args else "") + f"out=b{k}"
            targets = ", ".join(f"v{s}" for s in st.outs)
            lines.append(f"    {targets} = k{k}({call_args})")
        outs = ", ".join(f"v{s}" for s in self.out_slots)
        lines.append(f"    return [{outs}]")
        src = "\n".join(lines)
        exec(compile(src, "<hybridserve plan>", "exec"), env)
        return env["run"]

    def _resolved_steps(self, inputs: list[np.ndarray]) -> dict[int, Callable]:
        """Kernels of legacy creation ops bound to the shapes these inputs imply."""
        if not self._unresolved:
            return {}
        shapes = {n: tuple(x.shape) for n, x in zip(self.input_names, inputs)}
        attrs = resolve(self.symbol, self._unresolved, shapes)
        return {k: partial(st.node.op.kernel, attrs[id(st.node)])
                for k, st in enumerate(self.steps) if id(st.node) in attrs}

    def _run_resolving(self, *inputs):
        sig = tuple(x.shape for x in inputs)
        fn = self._by_sig.get(sig)
        if fn is None:
            fn = self._by_sig[sig] = self._generate(kernels=self._resolved_steps(list(inputs)))
        return fn(*inputs)

    def specialize(self, inputs: list[np.ndarray]) -> Callable:
        """static_alloc: a run function with output buffers planned for these input shapes."""
        return self.specialize_run(inputs)[0]

    def specialize_run(self, inputs: list[np.ndarray]) -> tuple[Callable, list[np.ndarray]]:
        """`specialize`, plus the outputs of the trial run it plans from (they are the graph's
        outputs for `inputs`: a first call at new shapes need not run the graph twice)."""
        fn, outs, _ = self.specialize_plan(inputs)
        return fn, outs

    def specialize_plan(self, inputs: list[np.ndarray]) -> tuple[Callable, list, MemoryPlan]:
        """`specialize_run`, plus its memory plan. The plan stays local to this call: the
        `Plan` is shared by every specialisation, so concurrent ones never see each other's."""
        vals: list = list(inputs) + [None] * (self.n_slots - self.n_inputs)
        kernels = self._resolved_steps(inputs)
        for k, st in enumerate(self.steps):
            self._store(vals, st, kernels.get(k, st.fn)(*[vals[i] for i in st.ins]))
        memory = plan_memory(self.steps, self.n_inputs, self.out_slots, vals)
        return self._generate(memory.buffers, kernels), [vals[s] for s in self.out_slots], memory

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        try:
            return self._fn(*inputs)
        except (OperatorError, ValueError, IndexError, TypeError) as e:
            raise self._locate(inputs, e) from None

    def _locate(self, inputs, err: Exception) -> Exception:
        """Re-run step by step to name the node and op that failed."""
        vals: list = list(inputs) + [None] * (self.n_slots - self.n_inputs)
        try:
            kernels = self._resolved_steps(list(inputs))
        except ValueError as e:
            return e
        for k, st in enumerate(self.steps):
            try:
                r = kernels.get(k, st.fn)(*[vals[i] for i in st.ins])
            except Exception as e:  # noqa: BLE001 - we re-raise with context
                shapes = [getattr(vals[i], "shape", None) for i in st.ins]
                return ShapeError(f"node '{st.node.name}' (op {st.node.opname}) failed on input "
                                  f"shapes {shapes}: {e}")
            self._store(vals, st, r)
        return err

    @staticmethod
    def _store(vals: list, st: Step, r) -> None:
        if len(st.outs) == 1:
            vals[st.outs[0]] = r[0] if isinstance(r, tuple) else r
        else:
            for s, v in zip(st.outs, r):
                vals[s] = v

    # -- the hooked path (op hooks, inspection) -------------------------------------------------
    def run_hooked(self, inputs: list[np.ndarray], callback: Callable[[str, str, np.ndarray], None],
                   monitor_all: bool = False) -> list[np.ndarray]:
        vals: list = list(inputs) + [None] * (self.n_slots - self.n_inputs)
        kernels = self._resolved_steps(list(inputs))
        for k, st in enumerate(self.steps):
            node = st.node
            if monitor_all:
                names = node.op.input_names(node.parsed)
                for j, s in enumerate(st.ins):
                    nm = names[j] if j < len(names) else f"input{j}"
                    callback(f"{node.name}_{nm}", node.opname, vals[s])
            self._store(vals, st, kernels.get(k, st.fn)(*[vals[i] for i in st.ins]))
            for i in range(node.num_visible()):
                callback(node.output_name(i), node.opname, vals[st.outs[i]])
        return [vals[s] for s in self.out_slots]
