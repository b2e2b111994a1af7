"""MXNet's executor API for forward passes: `Symbol._bind`, `bind`, `_simple_bind`, `simple_bind`
(bound to Symbol when the compiler is imported: the graph layer never imports the compiler).

An `Executor` holds one array per argument and auxiliary state (`arg_dict`, `aux_dict`) and runs
the graph's compiled plan on them. Gradients are not computed: asking for them (`backward`) raises
the project's inference-only error.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as _onp

from ..autograd import _MSG, TrainingNotSupportedError
from ..base import MXNetError
from ..ndarray import ndarray
from ..symbol.graph import Symbol
from .plan import Plan


def _as_dict(names: list[str], values, what: str) -> dict[str, ndarray]:
    if values is None:
        return {}
    if isinstance(values, Mapping):
        unknown = set(values) - set(names)
        if unknown:
            raise MXNetError(f"{what}: {sorted(unknown)} are not {what} of the symbol ({names})")
        return {k: v if isinstance(v, ndarray) else ndarray(_onp.asarray(v))
                for k, v in values.items()}
    if len(values) != len(names):
        raise MXNetError(f"{what}: expected {len(names)} arrays ({names}), got {len(values)}")
    return {k: v if isinstance(v, ndarray) else ndarray(_onp.asarray(v))
            for k, v in zip(names, values)}


class Executor:
    """A bound symbol: `forward(**new_args)` runs it and returns (and keeps) the outputs."""

    def __init__(self, sym: Symbol, device, args, aux_states=None):
        self._symbol, self._device = sym, device
        self.arg_dict = _as_dict(sym.list_arguments(), args, "arguments")
        self.aux_dict = _as_dict(sym.list_auxiliary_states(), aux_states, "auxiliary states")
        missing = [n for n in sym.list_inputs() if n not in self.arg_dict and n not in self.aux_dict]
        if missing:
            raise MXNetError(f"bind: no array given for {missing}")
        self._plan = Plan(sym, sym.list_inputs())
        self.outputs: list[ndarray] = []

    @property
    def arg_arrays(self) -> list[ndarray]:
        return [self.arg_dict[n] for n in self._symbol.list_arguments()]

    @property
    def aux_arrays(self) -> list[ndarray]:
        return [self.aux_dict[n] for n in self._symbol.list_auxiliary_states()]

    @property
    def grad_arrays(self) -> list:
        return [None] * len(self.arg_dict)

    def forward(self, is_train: bool = False, **kwargs) -> list[ndarray]:
        if is_train:
            raise TrainingNotSupportedError(_MSG)
        for k, v in kwargs.items():
            if k not in self.arg_dict:
                raise MXNetError(f"forward: unknown argument {k!r}")
            self.arg_dict[k][:] = v
        values = {**self.arg_dict, **self.aux_dict}
        outs = self._plan.run([values[n]._data for n in self._symbol.list_inputs()])
        self.outputs = [ndarray(_onp.array(o, copy=True)) for o in outs]
        return self.outputs

    def backward(self, out_grads=None, is_train: bool = True):
        raise TrainingNotSupportedError(_MSG)


def bind(sym: Symbol, ctx=None, args=None, args_grad=None, grad_req="write", aux_states=None,
         group2ctx=None, shared_exec=None) -> Executor:
    return Executor(sym, ctx, args, aux_states)


def simple_bind(sym: Symbol, ctx=None, grad_req="write", type_dict=None, stype_dict=None,
                group2ctx=None, shared_arg_names=None, shared_exec=None, shared_buffer=None,
                **shapes) -> Executor:
    """Allocate zero arrays of the inferred shapes (and `type_dict` dtypes), then bind."""
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    if arg_shapes is None:
        raise MXNetError(f"simple_bind: shapes of the inputs cannot be inferred from {shapes}")
    types = dict(type_dict or {})
    arg_types, _, aux_types = sym.infer_type(**types)

    def alloc(names: Sequence[str], shps, dts) -> dict[str, ndarray]:
        return {n: ndarray(_onp.zeros(s, dtype=d or _onp.float32))
                for n, s, d in zip(names, shps, dts)}
    return Executor(sym, ctx, alloc(sym.list_arguments(), arg_shapes, arg_types),
                    alloc(sym.list_auxiliary_states(), aux_shapes, aux_types))


def bind_methods() -> None:
    """`Symbol._bind`/`bind` and `_simple_bind`/`simple_bind` (MXNet's names for both)."""
    Symbol._bind = Symbol.bind = bind
    Symbol._simple_bind = Symbol.simple_bind = simple_bind
