"""`framework.np.random`: sampling with the framework's shared generator (`mx.random.seed`).

Samples are plain NumPy draws wrapped as framework arrays (not graph ops): float32 unless a
dtype is given, like MXNet.
"""
from __future__ import annotations

import numpy as _onp

from .. import random as _rnd
from ..ndarray import ndarray
from ._base import dtype_of

__all__ = ["seed", "uniform", "normal", "randn", "rand", "randint", "shuffle", "choice",
           "gamma", "beta", "exponential", "laplace", "multinomial", "permutation",
           "lognormal", "logistic", "gumbel", "weibull", "pareto", "power", "rayleigh",
           "chisquare", "bernoulli"]


def seed(seed=None, device="all", ctx="all"):
    """Seed the shared generator (same effect as `mx.random.seed`)."""
    _rnd.seed(0 if seed is None else seed)


def _gen():
    return _rnd.generator()


def _val(v):
    return v._data if isinstance(v, ndarray) else v


def _wrap(x, dtype, default=_onp.float32):
    dt = dtype_of(dtype) or _onp.dtype(default)
    return ndarray(_onp.asarray(x, dtype=dt))


def _size(size):
    if size is None:
        return None
    return (size,) if isinstance(size, int) else tuple(size)


def uniform(low=0.0, high=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
    r = _wrap(_gen().uniform(_val(low), _val(high), _size(size)), dtype)
    if out is not None:
        out._data[...] = r._data
        return out
    return r


def normal(loc=0.0, scale=1.0, size=None, dtype=None, device=None, ctx=None, out=None):
    r = _wrap(_gen().normal(_val(loc), _val(scale), _size(size)), dtype)
    if out is not None:
        out._data[...] = r._data
        return out
    return r


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, device=None, out=None):
    return _wrap(_gen().lognormal(_val(mean), _val(sigma), _size(size)), dtype)


def logistic(loc=0.0, scale=1.0, size=None, device=None, out=None):
    return _wrap(_gen().logistic(_val(loc), _val(scale), _size(size)), None)


def gumbel(loc=0.0, scale=1.0, size=None, device=None, out=None):
    return _wrap(_gen().gumbel(_val(loc), _val(scale), _size(size)), None)


def randn(*size, **kwargs):
    return _wrap(_gen().standard_normal(size if size else None), kwargs.get("dtype"))


def rand(*size, **kwargs):
    return _wrap(_gen().random(size if size else None), kwargs.get("dtype"))


def randint(low, high=None, size=None, dtype=None, device=None, ctx=None, out=None):
    if high is None:
        low, high = 0, low
    return _wrap(_gen().integers(low, high, _size(size)), dtype, _onp.int64)


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
    return _wrap(_gen().gamma(_val(shape), _val(scale), _size(size)), dtype)


def beta(a, b, size=None, dtype=None, device=None):
    return _wrap(_gen().beta(_val(a), _val(b), _size(size)), dtype)


def exponential(scale=1.0, size=None, device=None, out=None):
    return _wrap(_gen().exponential(_val(scale), _size(size)), None)


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, device=None, out=None):
    return _wrap(_gen().laplace(_val(loc), _val(scale), _size(size)), dtype)


def weibull(a, size=None, device=None, out=None):
    return _wrap(_gen().weibull(_val(a), _size(size)), None)


def pareto(a, size=None, device=None, out=None):
    return _wrap(_gen().pareto(_val(a), _size(size)), None)


def power(a, size=None, device=None, out=None):
    return _wrap(_gen().power(_val(a), _size(size)), None)


def rayleigh(scale=1.0, size=None, device=None, out=None):
    return _wrap(_gen().rayleigh(_val(scale), _size(size)), None)


def chisquare(df, size=None, dtype=None, device=None):
    return _wrap(_gen().chisquare(_val(df), _size(size)), dtype)


def bernoulli(prob=None, logit=None, size=None, dtype=None, device=None, out=None):
    if prob is None:
        prob = 1.0 / (1.0 + _onp.exp(-_onp.asarray(_val(logit), dtype=_onp.float64)))
    return _wrap(_gen().random(_size(size) or _onp.shape(_val(prob))) < _val(prob), dtype)


def multinomial(n, pvals, size=None):
    return ndarray(_onp.asarray(_gen().multinomial(n, _val(pvals), _size(size)), dtype=_onp.int64))
