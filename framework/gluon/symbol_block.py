"""SymbolBlock: a HybridBlock made from a graph — MXNet exports, or internal outputs of one."""
from __future__ import annotations

import numpy as _onp

import warnings

from ..compiler.passes.unknown_dims import resolve, unresolved_nodes
from ..io.dtypes import dtype_from_flag, held_dtype
from ..ndarray import ndarray
from ..symbol import trace as _trace
from ..symbol.graph import Group, Node, Symbol, var
from ..symbol.infer import infer_type
from ..symbol.json_io import load as _load_symbol
from .hybrid_block import HybridBlock
from .nested import flatten, regroup
from .parameter import Parameter


class SymbolBlock(HybridBlock):
    """Construct a block from symbols: `SymbolBlock(outputs, inputs, params=None)`."""

    @staticmethod
    def imports(symbol_file: str, input_names, param_file: str | None = None, device=None,
                allow_missing: bool = False, ignore_extra: bool = False, ctx=None) -> "SymbolBlock":
        """Load a graph exported by `HybridBlock.export` (either MXNet generation)."""
        ret = SymbolBlock._of_graph(_load_symbol(symbol_file), input_names, param_file is None)
        if param_file is not None:
            ret.load_parameters(param_file, device if device is not None else ctx, allow_missing,
                                ignore_extra, cast_dtype=True, dtype_source="saved")
        return ret

    @staticmethod
    def from_graph(sym: Symbol, input_names, params: dict | None = None, device=None,
                   allow_missing: bool = False, ignore_extra: bool = False) -> "SymbolBlock":
        """`imports` for a graph and named arrays already in memory (e.g. parsed once under
        size limits): no file is read again, no second copy of the parameters is parsed."""
        ret = SymbolBlock._of_graph(sym, input_names, params is None)
        if params is not None:
            ret.load_dict(params, device, allow_missing, ignore_extra, cast_dtype=True,
                          dtype_source="saved")
        return ret

    @staticmethod
    def _of_graph(sym: Symbol, input_names, typed: bool) -> "SymbolBlock":
        if isinstance(input_names, str):
            input_names = [input_names]
        if typed:
            inputs = [var(i, dtype="float32") for i in input_names]   # no params: fp32 inference
        else:
            inputs = [var(i).as_np_ndarray() for i in input_names]   # types come from the params
        return SymbolBlock(sym.as_np_ndarray(), inputs, _types_from_file=not typed)

    def __repr__(self) -> str:
        graph = self._cached_graph[1]
        return (f"{self.__class__.__name__}(\n{graph!r} : {len(self._cached_graph[0])} -> "
                f"{len(graph.list_outputs())}\n)")

    def __init__(self, outputs, inputs, params: dict | None = None, *,
                 _types_from_file: bool = False):
        super().__init__()
        if isinstance(inputs, Symbol) and len(inputs) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = flatten(inputs, "input")
        outs, self._out_format = flatten(outputs, "output")
        for s in syms:
            assert len(s.get_internals()) == 1, \
                f"Input symbols must be variable, but {s!r} is an output of operators"
        input_names = {s.name for s in syms}
        for o in outs:
            for n in o.topo():
                if n.is_var and n.attrs.get("__storage_type__") == "1":
                    raise AssertionError(f"SymbolBlock doesn't support Parameter '{n.name}' "
                                         "because its storage type is 'row_sparse'.")
        out = Group(outs) if len(outs) > 1 else outs[0]
        arg_names, aux_names = out.list_arguments(), out.list_auxiliary_states()
        params = dict(params or {})
        # MXNet warns about an untyped input even when every parameter's dtype comes from given
        # params or a params file; warn only when the user can act (parameters created here)
        created = set(arg_names + aux_names) - set(params) - input_names
        types = _infer_param_types(syms, out, warn=bool(created) and not _types_from_file)
        unused = set(params) - set(arg_names) - set(aux_names)
        if unused:
            raise ValueError(f"{unused} params are unused by the model.")
        self._reg_params = params
        for name in arg_names + aux_names:
            dtype = types.get(name, _onp.float32)
            extra = {"grad_req": "null"} if name in aux_names else {}
            if name in params:
                p = params[name]
                if p.dtype is not None:
                    assert _onp.dtype(dtype) == _onp.dtype(p.dtype), (
                        f"Cannot retrieve Parameter '{p.name}' because desired attribute does not "
                        f"match with stored for attribute 'dtype': desired '{dtype}' vs stored "
                        f"'{p.dtype}'.")
                if extra:
                    p.grad_req = "null"
                if p._var is None:              # not yet a graph variable: adopt the graph's name
                    p._var_name = name
            elif name not in input_names:
                p = Parameter(name, allow_deferred_init=True, dtype=dtype, **extra)
                p._var_name = name
                params[name] = p
        self._cached_graph = (syms, out)

    def _clear_cached_op(self) -> None:
        if hasattr(self, "_cached_op"):
            self._cached_op = None       # the graph itself stays
            self._first_forward = True

    def __call__(self, x, *args):
        fast = self._fast
        if (fast is not None and not args and x.__class__ is ndarray and not self._forward_hooks
                and not self._forward_pre_hooks and _trace.current() is None):
            return fast(x)
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, [x, *args])
        out = self.forward(x, *args)
        for hook in list(self._forward_hooks.values()):
            hook(self, [x, *args], out)
        return out

    def forward(self, x, *args):
        if _trace.is_deferred_compute():
            raise RuntimeError("Calling a SymbolBlock from within HybridBlock is not yet "
                               "supported in Gluon 2.")
        if isinstance(x, ndarray):
            return self._call_cached_op(x, *args)
        if isinstance(x, Symbol):         # no ndarray ⇒ symbolic composition
            return self._compose(x, *args)
        raise AssertionError("HybridBlock requires the first argument to forward be either "
                             f"Symbol or NDArray, but got {type(x)}")

    def _compose(self, *args):
        """Symbol inputs: substitute them for the graph's input variables (MXNet's compose)."""
        flat, fmt = flatten(list(args), "input")
        assert fmt == self._in_format, "Invalid input format"
        subst = {s.name: a.outputs[0] for s, a in zip(self._cached_graph[0], flat)}
        new: dict[int, Node] = {}

        def entry(src, i):
            if src.is_var and src.name in subst:
                return subst[src.name]
            return new[id(src)], i

        out = self._cached_graph[1]
        for n in out.topo():
            if not (n.is_var and n.name in subst):
                c = Node(n.opname, n.name, n.attrs, op=n.op)
                c.inputs = [entry(src, i) for src, i in n.inputs]
                c.subgraphs = n.subgraphs
                new[id(n)] = c
        ret = type(out)([entry(n, i) for n, i in out.outputs])
        return regroup(list(ret), self._out_format)[0]

    def infer_shape(self, *args) -> None:
        """Graph-based: fills every parameter shape the graph determines from the inputs (MXNet
        1.x zero-batch state creators get the batch these inputs imply meanwhile)."""
        out = self._cached_graph[1]
        nodes = unresolved_nodes(out.topo())
        if not nodes:
            return self._infer_attrs("shape", *args)
        real = [a for a in flatten(args, "input")[0] if a is not None]
        attrs = resolve(out, nodes, {s.name: tuple(a.shape)
                                     for s, a in zip(self._cached_graph[0], real)})
        saved = [(n, n._parsed) for n in nodes]
        try:
            for n in nodes:
                n._parsed = attrs[id(n)]
            self._infer_attrs("shape", *args)
        finally:
            for n, p in saved:
                n._parsed = p

    def cast(self, dtype) -> None:
        self._clear_cached_op()
        super().cast(dtype)
        if _onp.dtype(dtype) == _onp.float16:
            names = set(self._reg_params)
            for name, p in self._reg_params.items():
                for stat, sibs in (("running_var", ("running_mean", "gamma", "beta")),
                                   ("moving_var", ("moving_mean", "gamma", "beta"))):
                    if name.endswith(stat):
                        base = name[: -len(stat)]
                        if all(base + s in names for s in sibs):
                            for s in (stat,) + sibs:
                                self._reg_params[base + s].cast("float32")


def _infer_param_types(inputs: list[Symbol], out: Symbol, warn: bool = True) -> dict:
    """Parameter dtypes from the input variables' dtypes (float32 when an input is untyped)."""
    known = {}
    for s in inputs:
        flag = s.outputs[0][0].attrs.get("__dtype__")
        if flag is None:
            if not warn:
                return {}
            unknown = [f"{a}: None" for a in s.list_arguments()][:10]
            warnings.warn("Cannot decide type for the following arguments. Consider providing "
                          "them as input:\n\t" + "\n\t".join(unknown), stacklevel=3)
            return {}
        known[s.name] = held_dtype(dtype_from_flag(int(flag)))
    try:
        found = infer_type(out, _as_dict=True, **known)
    except Exception:  # noqa: BLE001 - MXNet falls back to float32 when inference fails
        return {}
    if any(v is None for v in found.values()):
        return {}
    return {k: _onp.dtype(v).type for k, v in found.items()}
