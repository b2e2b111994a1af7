"""Parameter and Constant (Gluon 2.0 semantics: unknown dims are -1, deferred initialisation)."""
from __future__ import annotations

import uuid
import warnings

import numpy as _onp

from .. import initializer as _init
from ..base import DeferredInitializationError
from ..device import Device, cpu, current_device
from ..io.dtypes import bfloat16_to_float32, dtype_flag, held_dtype, is_bfloat16, round_to_bfloat16
from ..ndarray import ndarray
from ..symbol import trace as _trace
from ..symbol.graph import Node, _Symbol

_GRAD_REQS = ("write", "add", "null")
_STYPES = ("default", "row_sparse", "csr")


def _known(shape) -> bool:
    """Known shape: not None and no unknown (-1/0) dimension (`()` is a known scalar shape)."""
    return shape is not None and all(d > 0 for d in shape)


class Parameter:
    """A learnable (or fixed) array owned by a Block."""

    def __init__(self, name: str = "weight", grad_req: str = "write", shape=None,
                 dtype=_onp.float32, lr_mult: float = 1.0, wd_mult: float = 1.0, init=None,
                 allow_deferred_init: bool = False, differentiable: bool = True,
                 stype: str = "default", grad_stype: str = "default"):
        self._var = None
        self._uuid = str(uuid.uuid4())
        self._var_name = None
        self._data: list[ndarray] | None = None
        self._grad = None
        self._device_list: list[Device] | None = None
        self._deferred_init: tuple = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self._name = name
        # bfloat16 is held as float32 with bfloat16 values; `_bf16` keeps what files say (flag 12)
        self._bf16 = is_bfloat16(dtype)
        self._dtype = held_dtype(dtype).type if self._bf16 else dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.init = init
        for kind, st in (("stype", stype), ("grad_stype", grad_stype)):
            assert st in _STYPES, (f"{kind} for Parameter must be one of 'default', 'row_sparse', "
                                   f"or 'csr', but got '{st}'")
        self._stype = stype
        self._grad_stype = grad_stype
        self.grad_req = grad_req

    def __repr__(self) -> str:
        return f"Parameter (shape={self.shape}, dtype={self.dtype})"

    # -- properties ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def grad_req(self) -> str:
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        assert req in _GRAD_REQS, \
            f"grad_req must be one of 'write', 'add', or 'null', but got '{req}'"
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        self._grad = None                      # dropped; allocated lazily if needed again

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype) -> None:
        self.cast(dtype)

    @property
    def shape(self):
        if self._shape is None:
            return None
        return tuple(-1 if d == 0 else d for d in self._shape)

    @shape.setter
    def shape(self, new_shape) -> None:
        if isinstance(new_shape, int):
            new_shape = (new_shape,)
        if self._shape is None:
            self._shape = tuple(new_shape)
            return
        ok = len(self._shape) == len(new_shape) and \
            all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape))
        assert ok, (f"Expected shape {new_shape} is incompatible with given shape "
                    f"{self._shape} for Parameter {self.name}.")
        self._shape = tuple(new_shape)

    @property
    def stype(self) -> str:
        return self._stype

    # -- initialisation -----------------------------------------------------------------------
    def initialize(self, init=None, device=None, default_init=None, force_reinit: bool = False,
                   ctx=None) -> None:
        if default_init is None:
            default_init = _init.Uniform()
        device = device if device is not None else ctx
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. "
                          "Set force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if device is None:
            device = [current_device()]
        if isinstance(device, Device):
            device = [device]
        if self._stype != "default":
            raise ValueError(f"Currently stype {self._stype} is not supported in NumPy interface and Gluon2.0")
        if hasattr(self.init, "set_initializer"):   # a fused RNN vector: pieces take `init`
            self.init.set_initializer(init if init else default_init)
            init = default_init = self.init
        if init is None:
            init = default_init if self.init is None else self.init
        if not _known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, device, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {self.shape}.")
        self._deferred_init = (init, device, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        if not self._deferred_init:
            return
        init, device, default_init, data = self._deferred_init
        self._deferred_init = ()
        assert _known(self.shape), (
            f"Cannot initialize Parameter '{self.name}' because it has invalid shape: "
            f"{self.shape}. Please specify in_units, in_channels, etc for `Block`s.")
        if data is None:
            arr = _onp.zeros(self.shape, dtype=_onp.dtype(self.dtype))
            ini = _init.create(init) if init is not None else _init.create(default_init)
            ini._init_weight(_init.InitDesc(self.name, {"__init__": init}), arr)
            data = arr
        else:
            data = _onp.asarray(data._data if isinstance(data, ndarray) else data)
            data = data.astype(_onp.dtype(self.dtype), copy=True)
        self._init_impl(data, device)

    def _init_impl(self, data: _onp.ndarray, device_list) -> None:
        self._device_list = list(device_list)
        self._data = [ndarray(data if i == 0 else data.copy()) for i in range(len(device_list))]
        self._data[0]._data = data
        self._grad = None                      # allocated on first grad() (see _grads)

    # -- data access --------------------------------------------------------------------------
    def _check_and_get(self, arr_list, device):
        if arr_list is not None:
            if device is None or len(arr_list) == 1:
                return arr_list[0]
            for d, a in zip(self._device_list, arr_list):
                if d == device:
                    return a
            raise RuntimeError(f"Parameter '{self.name}' was not initialized on device {device}. "
                               f"It was only initialized on {self._device_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization was "
                "deferred. Actual initialization happens during the first forward pass. Please pass "
                "one batch of data through the network before accessing Parameters. You can also "
                "avoid deferred initialization by specifying in_units, num_features, etc., for "
                "network layers.")
        raise RuntimeError(
            f"Parameter '{self.name}' has not been initialized. Note that you should initialize "
            "parameters and create Trainer with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of nested child Blocks")

    def data(self, device=None, ctx=None) -> ndarray:
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on device "
                               f"{device} via data() because its storage type is {self._stype}. "
                               "Please use row_sparse_data() instead.")
        arr = self._check_and_get(self._data, device if device is not None else ctx)
        tracer = _trace.current()
        if tracer is not None and not tracer.has(arr):
            tracer.bind(arr, self.var().outputs[0])     # the array is this graph variable
        return arr

    def list_data(self) -> list[ndarray]:
        self._check_and_get(self._data, None)
        return list(self._data)

    def _grads(self):
        """Gradient buffers, allocated on first use: inference never needs them, and a
        ResNet-50 would otherwise carry ~100 MB of zeros."""
        if self._data is not None:
            if self._grad_req == "null":
                raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                                   "because grad_req='null'")
            if self._grad is None:
                self._grad = [ndarray(_onp.zeros_like(d._data)) for d in self._data]
        return self._grad

    def grad(self, device=None):
        return self._check_and_get(self._grads(), device)

    def list_grad(self):
        grads = self._grads()
        self._check_and_get(grads, None)
        return list(grads)

    def list_device(self) -> list[Device]:
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized")
        return list(self._device_list)

    list_ctx = list_device

    def set_data(self, data) -> None:
        self.shape = tuple(data.shape)
        if self._data is None:
            assert self._deferred_init, f"Parameter '{self.name}' has not been initialized"
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        src = _onp.asarray(data._data if isinstance(data, ndarray) else data)
        for d in self._data:
            if d._data.shape == src.shape and d._data.dtype == src.dtype:
                _onp.copyto(d._data, src)
            else:
                d._data = src.astype(d._data.dtype, copy=True).reshape(d._data.shape) \
                    if d._data.size == src.size else src.astype(d._data.dtype, copy=True)

    def zero_grad(self) -> None:
        if self._grad is not None:
            for g in self._grad:
                g._data[...] = 0

    def reset_device(self, device) -> None:
        if isinstance(device, Device):
            device = [device]
        if self._data is not None:
            self._device_list = list(device)
            d0 = self._data[0]._data
            self._data = [ndarray(d0 if i == 0 else d0.copy()) for i in range(len(device))]
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, device, default_init, data)
        else:
            raise ValueError(f"Cannot reset device for Parameter '{self.name}' because it has "
                             "not been initialized.")

    def reset_ctx(self, ctx) -> None:
        warnings.warn("Parameter.reset_ctx has been renamed to Parameter.reset_device",
                      DeprecationWarning, stacklevel=2)
        self.reset_device(ctx)

    def cast(self, dtype) -> None:
        self._var = None
        self._bf16 = is_bfloat16(dtype)
        self._dtype = held_dtype(dtype).type if self._bf16 else dtype
        if self._data is None:
            return
        nd = _onp.dtype(self._dtype)
        for d in self._data:
            d._data = round_to_bfloat16(d._data) if self._bf16 else d._data.astype(nd)
        if self._grad is not None:
            for g in self._grad:
                g._data = g._data.astype(nd)

    def _reduce(self) -> ndarray:
        data = self._check_and_get(self._data, None)
        if len(self._data) == 1:
            return data
        return ndarray(_onp.mean([d._data for d in self._data], axis=0).astype(data._data.dtype))

    def _load_init(self, data, device=None, cast_dtype: bool = False,
                   dtype_source: str = "current") -> None:
        """Load `data` (from a file) into this parameter, checking shape and dtype."""
        src = _onp.asarray(data._data if isinstance(data, ndarray) else data)
        if is_bfloat16(src.dtype):              # held as float32 (exact); saved back as bf16
            src = bfloat16_to_float32(src)
            if self._bf16 or dtype_source == "saved":
                self._bf16, self._dtype, self._var = True, _onp.float32, None
        if self.shape:
            unknown = -1
            for self_dim, data_dim in zip(self.shape, src.shape):
                assert self_dim in (unknown, data_dim), (
                    f"Failed loading Parameter '{self.name}' from saved params: shape incompatible "
                    f"expected {self.shape} vs saved {src.shape}")
            assert len(self.shape) == src.ndim, (
                f"Failed loading Parameter '{self.name}' from saved params: shape incompatible "
                f"expected {self.shape} vs saved {src.shape}")
            self.shape = tuple(i if i != unknown else j for i, j in zip(self.shape, src.shape))
        if self.dtype is not None and _onp.dtype(self.dtype) != src.dtype:
            if cast_dtype:
                if dtype_source == "current":
                    src = src.astype(_onp.dtype(self.dtype))
                elif dtype_source == "saved":
                    self._dtype = src.dtype.type
                    self._var = None
            else:
                raise AssertionError(
                    f"Failed loading Parameter '{self.name}' from saved params: dtype incompatible "
                    f"expected {_onp.dtype(self.dtype)} vs saved {src.dtype}. Set cast_dtype=True to "
                    "cast the dtype of saved params.")
        if self._data is None:
            if self._deferred_init:
                device = self._deferred_init[1]
            elif device is None:
                device = [cpu()]
            if isinstance(device, Device):
                device = [device]
            self._init_impl(_onp.array(src, copy=True), device)
        else:
            if device is not None:
                dl = [device] if isinstance(device, Device) else list(device)
                assert set(dl) == set(self._device_list), (
                    f"Failed to load Parameter '{self.name}' on {dl} because it was previous "
                    f"initialized on {self._device_list}.")
            self.set_data(src)
        self._deferred_init = ()

    # -- graph variable -----------------------------------------------------------------------
    def var_name(self) -> str:
        if self._var_name is None:
            self._var_name = f"{self._uuid.replace('-', '_')}_{self._name}"
        return self._var_name

    def _var_attrs(self) -> dict[str, str]:
        """The hidden attrs MXNet's `Parameter.var()` gives the graph variable (via `symbol.var`)."""
        attrs = {"__profiler_scope__": _trace.PROFILER_SCOPE}
        if self.shape is not None:
            attrs["__shape__"] = str(tuple(self.shape))
        if self.dtype is not None:
            attrs["__dtype__"] = "12" if self._bf16 else str(dtype_flag(_onp.dtype(self.dtype)))
        attrs["__lr_mult__"] = str(self.lr_mult)
        attrs["__wd_mult__"] = str(self.wd_mult)
        if self.init is not None:
            attrs["__init__"] = self.init if isinstance(self.init, str) else self.init.dumps()
        attrs["__storage_type__"] = str(_STYPES.index(self._stype))
        return attrs

    def var(self):
        """The cached graph variable (attrs as of its creation; `cast` drops it)."""
        if self._var is None:
            self._var = _Symbol([(Node("null", self.var_name(), self._var_attrs()), 0)])
        return self._var


class Constant(Parameter):
    """A parameter with a fixed value and grad_req 'null'."""

    def __init__(self, value):
        if not isinstance(value, ndarray):
            value = ndarray(_onp.array(value, dtype=_onp.float32)
                            if not isinstance(value, _onp.ndarray) else value)
        self.value = value
        init_name = f"Constant_{id(self)}"

        class _CInit(_init.Initializer):
            def _init_weight(s, _, arr):
                arr[...] = value._data

        _init._REGISTRY[init_name.lower()] = _CInit
        super().__init__(name="const", grad_req="null", shape=value.shape,
                         dtype=value.dtype, init=init_name)

    def __repr__(self) -> str:
        return f"Constant (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other than '
                          f'"null", and new value "{req}" is ignored.', stacklevel=2)
        self._grad_req = "null"
