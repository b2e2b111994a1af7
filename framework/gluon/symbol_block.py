"""SymbolBlock: a HybridBlock made from a graph — MXNet exports, or internal outputs of one."""
from __future__ import annotations

import numpy as _onp

from ..ndarray import ndarray
from ..symbol import trace as _trace
from ..symbol.graph import Group, Node, Symbol
from ..symbol.json_io import load as _load_symbol
from .block import Block
from .hybrid_block import HybridBlock
from .nested import flatten
from .parameter import Parameter


class SymbolBlock(HybridBlock):
    """Construct a block from symbols: `SymbolBlock(outputs, inputs, params=None)`."""

    @staticmethod
    def imports(symbol_file: str, input_names, param_file: str | None = None, device=None,
                allow_missing: bool = False, ignore_extra: bool = False, ctx=None) -> "SymbolBlock":
        from ..symbol.graph import var
        sym = _load_symbol(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        inputs = [var(i, dtype="float32") if param_file is None else var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.load_parameters(param_file, device if device is not None else ctx, allow_missing,
                                ignore_extra, cast_dtype=True, dtype_source="saved")
        return ret

    def __repr__(self) -> str:
        s = "{name}(\n{modstr}\n)"
        modstr = "\n".join(f"  {k}" for k in [f"{self._cached_graph[1]!r} : "
                                                f"{len(self._cached_graph[0])} -> "
                                                f"{len(self._cached_graph[1])}"])
        return s.format(name=self.__class__.__name__, modstr=modstr.strip())

    def __init__(self, outputs, inputs, params: dict | None = None):
        super().__init__()
        if isinstance(inputs, Symbol) and len(inputs) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        if isinstance(outputs, (list, tuple)):
            outputs = Group(list(outputs))
        flat_in, self._in_format = flatten(inputs, "input")
        for s in flat_in:
            node = s.outputs[0][0]
            assert len(s) == 1 and node.is_var, (
                f"Input symbols must be variable, but {s.name} is an output of operators")
        input_names = [s.name for s in flat_in]
        self._input_names = input_names
        for n in outputs.topo():
            if n.is_var and n.attrs.get("__storage_type__") == "1":
                raise AssertionError(f"SymbolBlock doesn't support Parameter '{n.name}' because its "
                                     "storage type is 'row_sparse'.")
        arg_names = [a for a in outputs.list_arguments() if a not in input_names]
        aux_names = outputs.list_auxiliary_states()
        if params is not None:
            unused = set(params) - set(arg_names) - set(aux_names)
            if unused:
                raise ValueError(f"{unused} params are unused by the model.")
        dtypes = self._var_dtypes(outputs)
        for name in arg_names + aux_names:
            if params is not None and name in params:
                p = params[name]
            else:
                p = Parameter(name, allow_deferred_init=True, dtype=dtypes.get(name, _onp.float32),
                              grad_req="null" if name in aux_names else "write")
            p._var_name = name
            self._reg_params[name] = p
        self._out_format = 0 if len(outputs) == 1 else [0] * len(outputs)
        in_syms = [s for s in flat_in]
        self._cached_graph = (in_syms, outputs)

    @staticmethod
    def _var_dtypes(sym: Symbol) -> dict:
        from ..io.dtypes import dtype_from_flag
        out = {}
        for n in sym.topo():
            if n.is_var and "__dtype__" in n.attrs:
                try:
                    out[n.name] = _onp.dtype(dtype_from_flag(int(n.attrs["__dtype__"]))).type
                except (ValueError, KeyError):
                    pass
        return out

    def _clear_cached_op(self) -> None:
        if hasattr(self, "_cached_op"):
            self._cached_op = None       # the graph itself stays
            self._first_forward = True

    def __call__(self, x, *args):
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
        if isinstance(x, Symbol):
            return self._compose(x, *args)
        raise AssertionError("HybridBlock requires the first argument to forward be either "
                             f"Symbol or NDArray, but got {type(x)}")

    def _compose(self, *args) -> Symbol:
        from ..symbol.graph import rename_vars  # noqa: F401
        flat, fmt = flatten(args, "input")
        assert fmt == self._in_format, "Invalid input format"
        subst = {name: s.outputs[0] for name, s in zip(self._input_names, flat)}
        new: dict[int, Node] = {}
        out = self._cached_graph[1]

        def entry(src, i):
            if src.is_var and src.name in subst:
                return subst[src.name]
            return new[id(src)], i

        for n in out.topo():
            if n.is_var and n.name in subst:
                continue
            c = Node(n.opname, n.name, n.attrs, op=n.op)
            c.inputs = [entry(s, i) for s, i in n.inputs]
            new[id(n)] = c
        return Symbol([entry(n, i) for n, i in out.outputs])

    def _build_cache(self, *args, update_graph: bool = True) -> None:
        in_syms, out = self._cached_graph
        flat, _ = flatten(args, "input")
        real = [a for a in flat if a is not None]
        data_idx = {name: i for i, name in enumerate(self._input_names)}
        missing = [p for p in self._reg_params.values() if p._data is None]
        if missing:
            from ..symbol.infer import infer_shape
            known = {n: a.shape for n, a in zip(self._input_names, real)}
            shapes = infer_shape(out, _as_dict=True, **known)
            for p in missing:
                shp = shapes.get(p.name)
                if shp is not None:
                    p.shape = shp
                p._finish_deferred_init()
        for p in self._reg_params.values():
            if p.shape is None and p._data is not None:
                p._shape = p._data[0].shape
        by_var = dict(self._reg_params)
        if self._backend:
            out, by_var = self._apply_backend(out, by_var)
            if update_graph:
                self._cached_graph = (in_syms, out)
        names = out.list_inputs()
        for n in names:
            assert n in data_idx or n in by_var, f"Unknown input to HybridBlock: {n}"
        self._cached_op_args = [(True, data_idx[n]) if n in data_idx else (False, by_var[n])
                                for n in names]
        from ..compiler.cached_op import CachedOp
        self._cached_op = CachedOp(out, names, dict(self._flags))

    def infer_shape(self, *args) -> None:
        from ..symbol.infer import infer_shape
        flat, _ = flatten(args, "input")
        known = {n: a.shape for n, a in zip(self._input_names, [a for a in flat if a is not None])}
        shapes = infer_shape(self._cached_graph[1], _as_dict=True, **known)
        for name, p in self._reg_params.items():
            if shapes.get(name) is not None:
                p.shape = shapes[name]

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
