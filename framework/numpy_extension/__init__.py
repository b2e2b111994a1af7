"""`framework.npx`: MXNet's `mxnet.numpy_extension` (neural-network operators, NumPy-semantics
switches, devices and parameter-file helpers).

Any other registered operator is reachable as `npx.<name>` when the registry exposes it as
`npx.<name>` (MXNet's naming rule included) or knows `<name>`: positional arguments are the inputs,
keyword arguments the attributes.
"""
from __future__ import annotations

from ..device import Device, cpu, cpu_pinned, current_device, gpu, num_gpus  # noqa: F401
import numpy as _onp

from ..dispatch import invoke
from ..ndarray import ndarray
from ..ops.registry import OpDef as _OpDef, find_front as _find_front, get_op, has_op
from ..symbol.graph import Symbol
from ._op import *  # noqa: F401,F403
from ._op import __all__ as _op_all
from ._op import _call
from .._np_state import (is_np_array, is_np_default_dtype, is_np_shape, reset_np,  # noqa: F401
                     set_np, set_np_default_dtype, set_np_shape, use_np, use_np_array,
                     use_np_default_dtype, use_np_shape)
from . import image, random  # noqa: F401
from .dlpack import from_dlpack, to_dlpack_for_read, to_dlpack_for_write  # noqa: F401
from .utils import from_numpy, gpu_memory_info, load, save, savez, waitall  # noqa: F401

_INPUT_TYPES = (ndarray, _onp.ndarray, Symbol)

__all__ = list(_op_all) + [
    "Device", "cpu", "cpu_pinned", "gpu", "num_gpus", "current_device", "set_np", "reset_np",
    "is_np_array", "is_np_shape", "is_np_default_dtype", "set_np_default_dtype", "use_np",
    "use_np_array", "use_np_shape", "use_np_default_dtype", "save", "savez", "load",
    "waitall", "from_numpy", "gpu_memory_info", "from_dlpack", "to_dlpack_for_read",
    "to_dlpack_for_write"]


def __getattr__(name: str):
    """`npx.foo(*inputs, **attrs)` for any operator exposed as `npx.foo` (or registered as foo)."""
    if name.startswith("__"):
        raise AttributeError(name)
    op = _find_front(f"npx.{name}") or (get_op(name) if has_op(name) else None)
    if op is None:
        raise AttributeError(f"module 'framework.numpy_extension' has no attribute '{name}'")

    def fn(*inputs, **attrs):
        attrs.pop("out", None)
        return _call_named(op, list(inputs), attrs, attrs.pop("name", None))
    fn.__name__ = name
    fn.__doc__ = f"npx.{name}: the `{op.name}` operator."
    return fn


def _call_named(op: _OpDef, inputs: list, kwargs: dict, name: str | None):
    """Inputs may also come by name (`data=x, weight=w`): keyword arguments that hold arrays or
    Symbols are the op's inputs, in its input order, after the positional ones."""
    named = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], _INPUT_TYPES)}
    if named:
        order = op.input_names(op.parse_attrs(kwargs))
        unknown = set(named) - set(order)
        if unknown:
            raise TypeError(f"npx: {op.name} has no input named {sorted(unknown)} "
                            f"(inputs: {order})")
        inputs = inputs + [named[n] for n in order[len(inputs):] if n in named]
    if "num_args" in op.attrs and "num_args" not in kwargs:   # variadic ops (add_n): count them
        kwargs["num_args"] = len(inputs)
    if name is not None and any(isinstance(x, Symbol) for x in inputs):
        return invoke(op, inputs, kwargs, name=name)
    return _call(op, inputs, kwargs)
