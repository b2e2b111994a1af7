"""Block: the base of every layer and model (Gluon 2.0 semantics, structural parameter names)."""
from __future__ import annotations

import re
import warnings
import weakref
from collections import OrderedDict
from typing import Any, Callable

from .. import initializer
from ..base import brief_list
from ..io.dtypes import narrow_bfloat16
from ..io.params_file import detect_format, load_params, save_params
from ..symbol.graph import Symbol, _Symbol
from .parameter import Parameter
from .summary import summary


class HookHandle:
    """Returned by `register_forward_hook`; `detach()` removes the hook."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict: dict, hook: Callable) -> None:
        assert not self._hooks_dict_ref, "The same handle cannot be attached twice."
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def _device_kw(device, ctx):
    return device if device is not None else ctx


def _indent(s: str, n: int = 2) -> str:
    lines = s.split("\n")
    return lines[0] + "".join("\n" + " " * n + ln for ln in lines[1:])


class Block:
    """Base class of all neural network layers and models."""

    _summary_row = True          # summary() gives the block a row of its own

    def __init__(self):
        self._children: OrderedDict[str, weakref.ref] = OrderedDict()
        self._reg_params: dict[str, Parameter] = {}
        self._forward_hooks: OrderedDict = OrderedDict()
        self._forward_pre_hooks: OrderedDict = OrderedDict()

    # -- registration -------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def register_child(self, block: "Block", name: str | None = None) -> None:
        if name is None:
            name = str(len(self._children))
        self._children[name] = weakref.ref(block)

    def _child_items(self):
        for k, ref in self._children.items():
            yield k, ref()

    def __repr__(self) -> str:
        modstr = "\n".join(f"  ({k}): {_indent(repr(v), 2)}"
                           for k, v in self.__dict__.items() if isinstance(v, Block))
        return f"{self.__class__.__name__}(\n{modstr}\n)"

    @property
    def params(self) -> dict[str, Parameter]:
        return self._reg_params

    def _check_container_with_block(self) -> None:
        children = {id(c) for _, c in self._child_items()}

        def has_unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(has_unregistered(x) for x in data)
            if isinstance(data, dict):
                return any(has_unregistered(x) for x in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if has_unregistered(v):
                    warnings.warn(
                        f'"{self.__class__.__name__}.{k}" is an unregistered container with Blocks. '
                        "Note that Blocks inside the list, tuple or dict will not be registered "
                        "automatically. Make sure to register them using register_child() or "
                        "switching to nn.Sequential/nn.HybridSequential instead. ", stacklevel=3)

    def collect_params(self, select: str | None = None) -> dict[str, Parameter]:
        self._check_container_with_block()
        return self._collect_params_with_prefix(select=re.compile(select) if select else None)

    def _collect_params_with_prefix(self, prefix: str = "", select=None) -> dict[str, Parameter]:
        if prefix:
            prefix += "."
        ret = {}
        for k, v in self._reg_params.items():
            if select is None or select.match(prefix + k):
                ret[prefix + k] = v
        for name, child in self._child_items():
            if child is None:
                raise TypeError("weak object has gone away")
            ret.update(child._collect_params_with_prefix(prefix + name, select))
        return ret

    # -- hooks ----------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable) -> HookHandle:
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook: Callable) -> HookHandle:
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn: Callable[["Block"], Any]) -> "Block":
        for _, child in self._child_items():
            child.apply(fn)
        fn(self)
        return self

    # -- initialisation and devices --------------------------------------------------------------
    def initialize(self, init=None, device=None, verbose: bool = False,
                   force_reinit: bool = False, ctx=None) -> None:
        init = initializer.Uniform() if init is None else initializer.create(init)
        device = _device_kw(device, ctx)
        params = self.collect_params()
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in params.values():
            v.initialize(None, device, init, force_reinit=force_reinit)

    def hybridize(self, active: bool = True, **kwargs) -> None:
        for _, child in self._child_items():
            child.hybridize(active, **kwargs)

    def cast(self, dtype) -> None:
        for _, child in self._child_items():
            child.cast(dtype)
        for p in self.params.values():
            p.cast(dtype)

    def zero_grad(self) -> None:
        for p in self.collect_params().values():
            p.zero_grad()

    def reset_device(self, device) -> None:
        for p in self.collect_params().values():
            p.reset_device(device)

    def reset_ctx(self, ctx) -> None:
        warnings.warn("Block.reset_ctx has been renamed to Block.reset_device",
                      DeprecationWarning, stacklevel=2)
        self.reset_device(ctx)

    def setattr(self, name: str, value: Any) -> None:
        for p in self.collect_params().values():
            setattr(p, name, value)

    def share_parameters(self, shared: dict | None) -> "Block":
        if shared is None:
            return self
        if not isinstance(shared, (dict, OrderedDict)):
            raise ValueError(f"'shared' should be in type of Dict. Get type {type(shared)}!")
        shared_set = set(shared)
        self._shared_parameters(shared, shared_set)
        for name in shared_set:
            warnings.warn(f"Parameter name {name} is not in the current model!", stacklevel=2)
        return self

    def _shared_parameters(self, shared, shared_set, prefix: str = "") -> None:
        if prefix:
            prefix += "."
        for name in list(self._reg_params):
            key = prefix + name
            if key in shared:
                setattr(self, name, shared[key])
                shared_set.discard(key)
        for name, child in self._child_items():
            child._shared_parameters(shared, shared_set, prefix + name)

    # -- parameters on disk -------------------------------------------------------------------
    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """npz of structural names; `deduplicate` keeps each shared Parameter once, under its last
        name, in the order of its first appearance (MXNet's double dict inversion)."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            last = {id(p): k for k, p in params.items()}
            params = {last[id(p)]: p for p in params.values()}
        arrays = {k: p._reduce()._data for k, p in params.items()}
        save_params(filename, narrow_bfloat16(arrays, {k for k, p in params.items() if p._bf16}),
                    format="npz")

    def load_parameters(self, filename: str, device=None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False,
                        dtype_source: str = "current", ctx=None) -> None:
        loaded = load_params(filename)
        if not loaded:
            return
        with open(filename, "rb") as f:
            if isinstance(loaded, dict) and detect_format(f.read(4)) == "npz":
                loaded = dict(sorted(loaded.items()))    # MXNet's npz reader yields sorted keys
        self._load_dict(loaded, f"file: {filename}", _device_kw(device, ctx), allow_missing,
                        ignore_extra, cast_dtype, dtype_source)

    def load_dict(self, param_dict: dict, device=None, allow_missing: bool = False,
                  ignore_extra: bool = False, cast_dtype: bool = False,
                  dtype_source: str = "current") -> None:
        self._load_dict(param_dict, "param_dict", device, allow_missing, ignore_extra,
                        cast_dtype, dtype_source)

    def _load_dict(self, loaded: dict, source: str, device, allow_missing, ignore_extra,
                   cast_dtype, dtype_source) -> None:
        if isinstance(loaded, list):
            raise ValueError(f"{source} holds an unnamed list of arrays, not named parameters")
        loaded = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in loaded.items()}
        params = self.collect_params()
        if not allow_missing:
            names_of: dict[int, list[str]] = {}
            for name, p in params.items():
                names_of.setdefault(id(p), []).append(name)
            for name, p in params.items():
                if not any(n in loaded for n in names_of[id(p)]):
                    raise AssertionError(
                        f"Parameter '{name}' is missing in '{source}', which contains parameters: "
                        f"{brief_list(loaded.keys())}. Set allow_missing=True to ignore missing "
                        "parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ValueError(
                        f"Parameter '{name}' loaded from '{source}' is not present in Dict, which "
                        f"contains parameters {brief_list(params.keys())}. Set ignore_extra=True "
                        "to ignore. ")
                continue
            params[name]._load_init(value, device, cast_dtype=cast_dtype,
                                    dtype_source=dtype_source)
        self.apply(lambda b: getattr(b, "_params_reloaded", lambda: None)())

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args):
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        _check_outputs(out)
        return out

    def forward(self, *args):
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        for _, child in self._child_items():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs) -> None:
        summary(self, *inputs)

    def __getstate__(self):
        raise TypeError("Blocks cannot be pickled; use save_parameters/export")


def _check_outputs(out) -> None:
    """Numpy mode: outputs must be numpy arrays or numpy symbols (a legacy Symbol is rejected)."""
    if isinstance(out, Symbol) and not isinstance(out, _Symbol):
        raise TypeError("Block's output ndarrays/symbols must be of type `mxnet.numpy.ndarray` or "
                        f"`mxnet.symbol.numpy._Symbol`, while got output type {type(out)}")
    if isinstance(out, (list, tuple)):
        for o in out:
            _check_outputs(o)
