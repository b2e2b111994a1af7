"""The array type of `framework.np`: a thin handle on a NumPy array.

It is not a NumPy subclass on purpose: every operator on it goes through the operator registry, so
the same code runs imperatively and under tracing (hybridize). `np.asarray(x)` returns the
underlying buffer without a copy; `asnumpy()` returns a copy, as in MXNet.
"""
from __future__ import annotations

from typing import Any

import numpy as _onp

from .device import Device


class ndarray:
    """MXNet-style `np.ndarray` on the CPU."""

    __slots__ = ("_data", "_grad", "__weakref__")
    __array_ufunc__ = None      # NumPy defers `onp_array + x` to our reflected operators
    __array_priority__ = 1000.0

    def __init__(self, data: _onp.ndarray):
        self._data = data
        self._grad = None

    # -- NumPy interop ------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        d = self._data
        if dtype is not None and d.dtype != dtype:
            return d.astype(dtype)
        return d.copy() if copy else d

    def __dlpack__(self, stream=None, **kwargs):
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def to_dlpack_for_read(self):
        from .numpy_extension.dlpack import to_dlpack_for_read
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        from .numpy_extension.dlpack import to_dlpack_for_write
        return to_dlpack_for_write(self)

    def __array_namespace__(self, api_version: str | None = None):
        """`framework.numpy` (MXNet answers the 2021 array API versions only)."""
        if api_version is not None:
            year, _, month = str(api_version).partition(".")
            if year != "2021" or not month.isdigit() or not 1 <= int(month) <= 12:
                raise ValueError(f"Unrecognized array API version: {api_version!r}")
        from . import numpy
        return numpy

    def asnumpy(self) -> _onp.ndarray:
        return _onp.array(self._data, copy=True)

    def wait_to_read(self) -> None:
        """Execution is synchronous; kept for API compatibility."""

    def wait_to_write(self) -> None:
        """Execution is synchronous; kept for API compatibility."""

    # -- properties ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> _onp.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def device(self) -> Device:
        return Device("cpu", 0)

    ctx = context = device

    @property
    def stype(self) -> str:
        return "default"

    @property
    def grad(self):
        return self._grad

    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        """Gradients need training support, which hybridserve does not have: a clear error
        rather than a gradient buffer that nothing would ever fill."""
        from .autograd import _MSG, TrainingNotSupportedError
        raise TrainingNotSupportedError(_MSG)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True) -> None:
        from .autograd import _MSG, TrainingNotSupportedError
        raise TrainingNotSupportedError(_MSG)

    def detach(self) -> "ndarray":
        return ndarray(self._data)

    # -- printing (MXNet's rules: float32 is the default dtype and is not shown) ---------------
    def __repr__(self) -> str:
        s = repr(self._data)
        if "dtype=" in s:
            if self._data.dtype == _onp.float32:
                s = s[: s.rindex(",")] + ")"
        elif self._data.dtype not in (_onp.float32, _onp.bool_):
            s = s[:-1] + f", dtype={self._data.dtype})"
        return s

    def __str__(self) -> str:
        return str(self._data)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        if spec:
            raise TypeError("Cannot format mxnet.numpy.ndarray with format_spec")
        return str(self)

    # -- conversions --------------------------------------------------------------------------
    def item(self, *args):
        return self._data.item(*args)

    def tolist(self):
        return self._data.tolist()

    def __float__(self) -> float:
        if self._data.size != 1:      # MXNet: any size-1 array converts, whatever its ndim
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return float(self._data.item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return int(self._data.item())

    def __index__(self) -> int:
        return self._data.__index__()

    def __bool__(self) -> bool:
        return bool(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __hash__(self) -> int:
        return id(self)

    def copyto(self, other):
        if isinstance(other, ndarray):
            _onp.copyto(other._data, self._data)
            return other
        return self.copy()

    def as_in_context(self, device) -> "ndarray":
        """Same device: this array; another (`cpu(1)`, `cpu_pinned`): a copy, as MXNet gives."""
        if device is None or device == Device("cpu", 0):
            return self
        return ndarray(self._data.copy())

    as_in_ctx = to_device = as_in_context

    def as_np_ndarray(self) -> "ndarray":
        return self

    def as_nd_ndarray(self) -> "ndarray":
        return self

    def tostype(self, stype: str) -> "ndarray":
        if stype != "default":
            raise ValueError(f"storage type {stype!r} is not supported")
        return self


def wrap(data: Any) -> ndarray:
    """Wrap a NumPy array (zero-copy) as a framework array."""
    return ndarray(data if isinstance(data, _onp.ndarray) else _onp.asarray(data))

