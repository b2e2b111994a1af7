"""Sampling operators (`_npi_uniform`, `_npi_normal`, … and `_random_randint`): one draw per
run from `mx.random`'s generator, so a hybridized block samples afresh on every call instead of
replaying the values seen while tracing. A distribution parameter is an attribute when it is a
number and an input when it is an array (MXNet's `input1`/`input2` form); `size` is the sample
shape (default: the parameters' broadcast shape)."""
from __future__ import annotations

import numpy as np

from ... import random as _random
from ...base import OperatorError
from ..common import F32
from ..attrs import Bool, DType, Float, Shape, Str
from ..registry import expose, register

# `_npi_<stem>` → (NumPy Generator method, its parameters with MXNet's defaults, the parameters
# that must be positive (MXNet raises ValueError otherwise))
_DISTRIBUTIONS = {
    "uniform": ("uniform", (("low", 0.0), ("high", 1.0)), ()),
    "normal": ("normal", (("loc", 0.0), ("scale", 1.0)), ()),
    "gamma": ("gamma", (("shape", 1.0), ("scale", 1.0)), ("shape", "scale")),
    "exponential": ("exponential", (("scale", 1.0),), ("scale",)),
    "laplace": ("laplace", (("loc", 0.0), ("scale", 1.0)), ()),
    "logistic": ("logistic", (("loc", 0.0), ("scale", 1.0)), ()),
    "gumbel": ("gumbel", (("loc", 0.0), ("scale", 1.0)), ()),
    "weibull": ("weibull", (("a", 1.0),), ("a",)),
    "pareto": ("pareto", (("a", 1.0),), ("a",)),
    "powerd": ("power", (("a", 1.0),), ("a",)),
    "rayleigh": ("rayleigh", (("scale", 1.0),), ("scale",)),
}


def _tensor_params(params):
    """The parameters given as arrays: their attribute is None."""
    return lambda a: tuple(p for p, _ in params if getattr(a, p) is None)


def _sample_shape(a, s):
    return [tuple(a.size) if a.size is not None else np.broadcast_shapes(*map(tuple, s))]


def _sampler(stem: str, method: str, params, positive):
    def kernel(a, *tensors):
        it = iter(tensors)
        values = [next(it) if getattr(a, p) is None else getattr(a, p) for p, _ in params]
        for (p, _), v in zip(params, values):
            if p in positive and np.any(np.asarray(v) <= 0):
                raise OperatorError(f"_npi_{stem}: {p} must be positive, got {v}")
        size = tuple(a.size) if a.size is not None else (
            np.broadcast_shapes(*(t.shape for t in tensors)) if tensors else None)
        out = getattr(_random.generator(), method)(*values, size=size)
        return np.asarray(out, dtype=a.dtype or F32)
    kernel.__doc__ = f"Samples of NumPy's Generator.{method}({', '.join(p for p, _ in params)})."
    return kernel


for _stem, (_method, _params, _positive) in _DISTRIBUTIONS.items():
    register(f"_npi_{_stem}",
             attrs={**{p: Float(d, optional=True) for p, d in _params}, "size": Shape(None),
                    "ctx": Str(""), "dtype": DType(F32)},
             inputs=_tensor_params(_params), infer_shape=_sample_shape,
             infer_type=lambda a, d: [a.dtype or F32],
             random=True)(_sampler(_stem, _method, _params, _positive))


@register("_random_randint", "random_randint", "_npi_random_randint",
          attrs={"low": Float(0.0), "high": Float(), "shape": Shape(None), "ctx": Str(""),
                 "dtype": DType(np.dtype(np.int64))},
          inputs=(), infer_shape=lambda a, s: [tuple(a.shape or ())],
          infer_type=lambda a, d: [a.dtype or np.dtype(np.int64)], random=True)
def randint(a):
    """Integers drawn uniformly from [low, high) (MXNet names the sample shape `shape` here)."""
    return np.asarray(_random.generator().integers(int(a.low), int(a.high), a.shape),
                      dtype=a.dtype or np.int64)


def _bernoulli_inputs(a):
    return ("input1",) if a.prob is None and a.logit is None else ()


@register("_npi_bernoulli",
          attrs={"prob": Float(None, optional=True), "logit": Float(None, optional=True),
                 "is_logit": Bool(False), "size": Shape(None), "ctx": Str(""),
                 "dtype": DType(F32)},
          inputs=_bernoulli_inputs, infer_shape=_sample_shape,
          infer_type=lambda a, d: [a.dtype or F32], random=True)
def bernoulli(a, *tensor):
    """1 with probability `prob` (or sigmoid(`logit`) when `is_logit`), else 0."""
    v = tensor[0] if tensor else (a.logit if a.is_logit else a.prob)
    p = 1.0 / (1.0 + np.exp(-np.asarray(v, np.float64))) if a.is_logit else np.asarray(v)
    if not a.is_logit and (np.any(p < 0) or np.any(p > 1)):
        raise OperatorError(f"_npi_bernoulli: prob must be in [0, 1], got {v}")
    size = tuple(a.size) if a.size is not None else np.shape(p)
    return (_random.generator().random(size) < p).astype(a.dtype or F32)


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("uniform", "normal", "logistic", "gumbel", "gamma", "exponential", "laplace",
            "weibull", "pareto", "rayleigh"):
    expose(f"_npi_{_fn}", f"np.random.{_fn}")
expose("_npi_powerd", "np.random.power")
expose("_npi_bernoulli", "npx.random.bernoulli")
