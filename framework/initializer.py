"""Weight initializers (`mx.init`): Uniform, Normal, Xavier, MSRAPrelu, Zero, One, Constant, ….

Gluon always hands an initializer the parameter's own `init` through `InitDesc.attrs['__init__']`,
so initializers are applied to every parameter alike (no name-suffix dispatch): that is why a
bare `Parameter('bias')` gets uniform values, as in MXNet 2.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as _onp

from .random import generator

_REGISTRY: dict[str, type] = {}


def register(klass: type) -> type:
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names: str):
    def deco(klass):
        for n in names:
            _REGISTRY[n] = klass
        return klass
    return deco


class InitDesc(str):
    """A parameter name carrying attributes (MXNet's InitDesc)."""

    def __new__(cls, name: str, attrs: dict | None = None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


class Initializer:
    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False

    def set_verbosity(self, verbose: bool = False, print_func=None) -> "Initializer":
        self._verbose = verbose
        return self

    def dumps(self) -> str:
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr) -> None:
        """Fill `arr` (a NumPy array or framework array) in place."""
        data = arr._data if hasattr(arr, "_data") else arr
        init = getattr(desc, "attrs", {}).get("__init__") if desc is not None else None
        (create(init) if init else self)._init_weight(desc, data)

    def _init_weight(self, name, arr: _onp.ndarray) -> None:
        raise NotImplementedError("Must override it")

    def __eq__(self, other) -> bool:
        return isinstance(other, Initializer) and self.dumps() == other.dumps()

    __hash__ = object.__hash__


def _fill(arr: _onp.ndarray, values) -> None:
    arr[...] = _onp.asarray(values, dtype=arr.dtype) if arr.dtype.kind != "V" else values


def _sample(arr: _onp.ndarray, kind: str, a: float, b: float) -> None:
    """Fill `arr` in place with U(a, b) or N(a, b) samples. Big models' initialisation is
    dominated by sampling: float32 arrays are drawn in float32, straight into the array."""
    g = generator()
    if arr.dtype in (_onp.float32, _onp.float64) and arr.flags.c_contiguous:
        out, dt = arr, arr.dtype.type
    else:
        dt = _onp.float32 if arr.dtype == _onp.float16 else _onp.float64
        out = _onp.empty(arr.shape, dt)
    if kind == "uniform":
        g.random(dtype=dt, out=out)
        out *= dt(b - a)
    else:
        g.standard_normal(dtype=dt, out=out)
        out *= dt(b)
    out += dt(a)
    if out is not arr:
        _fill(arr, out)


@register
class Uniform(Initializer):
    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _sample(arr, "uniform", -self.scale, self.scale)


@register
class Normal(Initializer):
    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _sample(arr, "normal", 0.0, self.sigma)


@register
@alias("zeros")
class Zero(Initializer):
    def _init_weight(self, _, arr):
        arr[...] = 0


@register
@alias("ones")
class One(Initializer):
    def _init_weight(self, _, arr):
        arr[...] = 1


@register
class Constant(Initializer):
    def __init__(self, value: Any = 0.0):
        super().__init__(value=value.tolist() if hasattr(value, "tolist") else value)
        self.value = value

    def _init_weight(self, _, arr):
        v = self.value._data if hasattr(self.value, "_data") else self.value
        arr[...] = v


@register
class Xavier(Initializer):
    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type, self.factor_type, self.magnitude = rnd_type, factor_type, float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        hw = float(_onp.prod(shape[2:])) if len(shape) > 2 else 1.0
        if len(shape) < 2:
            raise ValueError(f"Xavier initializer cannot be applied to vector {name}. It requires at least 2D.")
        fan_in, fan_out = shape[1] * hw, shape[0] * hw
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}.get(self.factor_type)
        if factor is None:
            raise ValueError("Incorrect factor type")
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _sample(arr, "uniform", -scale, scale)
        elif self.rnd_type == "gaussian":
            _sample(arr, "normal", 0.0, scale)
        else:
            raise ValueError("Unknown random type")


@register
class MSRAPrelu(Xavier):
    def __init__(self, factor_type: str = "avg", slope: float = 0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Orthogonal(Initializer):
    def __init__(self, scale: float = 1.414, rand_type: str = "uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale, self.rand_type = scale, rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(_onp.prod(arr.shape[1:]))
        g = generator()
        tmp = g.uniform(-1, 1, (nout, nin)) if self.rand_type == "uniform" else g.normal(0, 1, (nout, nin))
        u, _s, v = _onp.linalg.svd(tmp, full_matrices=False)
        q = u if u.shape == tmp.shape else v
        _fill(arr, (self.scale * q).reshape(arr.shape))


@register
class Bilinear(Initializer):
    """Bilinear upsampling kernel for deconvolution weights (MXNet's formula, including its
    true division when computing the row coordinate)."""

    def _init_weight(self, _, arr):
        shape = arr.shape
        f = _onp.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        i = _onp.arange(int(_onp.prod(shape)), dtype=_onp.float64)
        x = i % shape[3]
        y = (i / shape[3]) % shape[2]
        w = (1 - _onp.abs(x / f - c)) * (1 - _onp.abs(y / f - c))
        _fill(arr, w.astype(_onp.float32).reshape(shape))


def create(init: Any) -> Initializer:
    """An initializer from an instance, a registered name (`'zeros'`), or a dumps() JSON text."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        s = init.strip()
        if s.startswith("["):
            name, kwargs = json.loads(s)
            return _REGISTRY[name.lower()](**kwargs)
        key = s.lower()
        if key in ("zero",):
            key = "zeros"
        if key in ("one",):
            key = "ones"
        if key not in _REGISTRY:
            raise ValueError(f"Cannot find initializer {init!r}; known: {sorted(_REGISTRY)}")
        return _REGISTRY[key]()
    if isinstance(init, type) and issubclass(init, Initializer):
        return init()
    raise TypeError(f"Cannot create an initializer from {init!r}")


_REGISTRY["zero"] = Zero
_REGISTRY["one"] = One
