"""`framework.np.random`: sampling with the framework's shared generator (`mx.random.seed`).

The common distributions and `randint` are sampling operators of the registry, so a hybridized
block draws afresh on every call; the rest are plain NumPy draws wrapped as framework arrays.
Samples are float32 (float64 under `npx.set_np(dtype=True)`) unless a dtype is given, like
MXNet.
"""
from __future__ import annotations

import numpy as _onp

from ..frontend import op as _op
from .. import random as _rnd
from ..ndarray import ndarray
from ..dispatch import invoke
from ._math import exp as _exp
from ..symbol.graph import Symbol
from ._base import default_float, dtype_of

__all__ = ["seed", "uniform", "normal", "randn", "rand", "randint", "shuffle", "choice",
           "gamma", "beta", "exponential", "laplace", "multinomial", "permutation",
           "lognormal", "logistic", "gumbel", "weibull", "pareto", "power", "rayleigh",
           "chisquare", "f", "bernoulli"]


def seed(seed=None, device="all", ctx="all"):
    """Seed the shared generator (same effect as `mx.random.seed`)."""
    _rnd.seed(0 if seed is None else seed)


def _gen():
    return _rnd.generator()


def _val(v):
    return v._data if isinstance(v, ndarray) else v


def _wrap(x, dtype, default=None):
    dt = dtype_of(dtype) or (_onp.dtype(default) if default is not None else default_float())
    return ndarray(_onp.asarray(x, dtype=dt))


def _size(size):
    if size is None:
        return None
    return (size,) if isinstance(size, int) else tuple(size)


def _draw(dist: str, params: dict, size, dtype, out=None):
    """One sampling operator call: number parameters are attributes, arrays are inputs."""
    attrs = {"size": _size(size), "dtype": dtype_of(dtype) or default_float()}
    inputs = []
    for name, v in params.items():
        if isinstance(v, (ndarray, Symbol, _onp.ndarray, list, tuple)):
            attrs[name] = None
            inputs.append(v if isinstance(v, (ndarray, Symbol)) else _onp.asarray(v))
        else:
            attrs[name] = float(v)
    r = invoke(_op(f"np.random.{dist}"), inputs, attrs)
    if out is not None:
        out._data[...] = r._data
        return out
    return r


def uniform(low=0.0, high=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
    return _draw("uniform", {"low": low, "high": high}, size, dtype, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
    return _draw("normal", {"loc": loc, "scale": scale}, size, dtype, out)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, device=None, out=None):
    return _exp(_draw("normal", {"loc": mean, "scale": sigma}, size, dtype))


def logistic(loc=0.0, scale=1.0, size=None, device=None, out=None):
    return _draw("logistic", {"loc": loc, "scale": scale}, size, None, out)


def gumbel(loc=0.0, scale=1.0, size=None, device=None, out=None):
    return _draw("gumbel", {"loc": loc, "scale": scale}, size, None, out)


def randn(*size, **kwargs):
    return _draw("normal", {"loc": 0.0, "scale": 1.0}, size or None, kwargs.get("dtype"))


def rand(*size, **kwargs):
    return _draw("uniform", {"low": 0.0, "high": 1.0}, size or None, kwargs.get("dtype"))


def randint(low, high=None, size=None, dtype=None, device=None, ctx=None, out=None):
    if high is None:
        low, high = 0, low
    return invoke("_random_randint", [], {"low": low, "high": high, "shape": _size(size),
                                              "dtype": dtype_of(dtype) or _onp.dtype(_onp.int64)})


def shuffle(x):
    """Shuffle a framework array in place along its first axis."""
    data = x._data if isinstance(x, ndarray) else x
    _gen().shuffle(data)


def permutation(x):
    if isinstance(x, int):
        return ndarray(_gen().permutation(x).astype(_onp.int64))
    data = x._data if isinstance(x, ndarray) else _onp.asarray(x)
    return ndarray(_gen().permutation(data))


def choice(a, size=None, replace=True, p=None, device=None, out=None):
    pa = _val(p)
    if isinstance(a, int):
        return ndarray(_onp.asarray(_gen().choice(a, _size(size), replace, pa), dtype=_onp.int64))
    return ndarray(_onp.asarray(_gen().choice(_val(a), _size(size), replace, pa)))


def gamma(shape, scale=1.0, size=None, dtype=None, device=None, out=None):
    return _draw("gamma", {"shape": shape, "scale": scale}, size, dtype, out)


def beta(a, b, size=None, dtype=None, device=None):
    """X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b) (as MXNet composes it: traceable)."""
    x = _draw("gamma", {"shape": a, "scale": 1.0}, size, dtype)
    y = _draw("gamma", {"shape": b, "scale": 1.0}, size, dtype)
    return x / (x + y)


def exponential(scale=1.0, size=None, device=None, out=None):
    return _draw("exponential", {"scale": scale}, size, None, out)


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, device=None, out=None):
    return _draw("laplace", {"loc": loc, "scale": scale}, size, dtype, out)


def weibull(a, size=None, device=None, out=None):
    return _draw("weibull", {"a": a}, size, None, out)


def pareto(a, size=None, device=None, out=None):
    return _draw("pareto", {"a": a}, size, None, out)


def power(a, size=None, device=None, out=None):
    return _draw("power", {"a": a}, size, None, out)


def rayleigh(scale=1.0, size=None, device=None, out=None):
    return _draw("rayleigh", {"scale": scale}, size, None, out)


def chisquare(df, size=None, dtype=None, device=None):
    """Gamma(df / 2, scale 2)."""
    return _draw("gamma", {"shape": df / 2, "scale": 2.0}, size, dtype)


def f(dfnum, dfden, size=None, device=None):
    """(χ²(dfnum) / dfnum) / (χ²(dfden) / dfden)."""
    return (chisquare(dfnum, size) / dfnum) / (chisquare(dfden, size) / dfden)


def bernoulli(prob=None, logit=None, size=None, dtype=None, device=None, out=None):
    if prob is None:
        prob = 1.0 / (1.0 + _onp.exp(-_onp.asarray(_val(logit), dtype=_onp.float64)))
    return _wrap(_gen().random(_size(size) or _onp.shape(_val(prob))) < _val(prob), dtype)


def multinomial(n, pvals, size=None):
    p = _onp.array(_val(pvals), dtype=_onp.float64)
    if p.size == 0:         # MXNet: no categories, no counts (NumPy's Generator refuses)
        sz = _size(size)
        sz = () if sz is None else (sz,) if isinstance(sz, int) else tuple(sz)
        return ndarray(_onp.zeros(sz + (0,), dtype=_onp.int64))
    head = p[:-1].sum() if p.size else 0.0
    if 1.0 < head <= 1.0 + 1e-6:      # float32 probabilities summing to 1 up to rounding
        p[:-1] /= head
    return ndarray(_onp.asarray(_gen().multinomial(n, p, _size(size)), dtype=_onp.int64))
