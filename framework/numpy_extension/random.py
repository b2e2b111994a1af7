"""`npx.random`: MXNet 2's extra sampling functions — `seed`, `bernoulli`, and `uniform_n` /
`normal_n`, which draw a batch of `batch_shape` samples per parameter (output shape
`batch_shape + broadcast(parameter shapes)`). All are registry sampling operators."""
from __future__ import annotations

import numpy as _onp

from ..frontend import op as _op
from .. import random as _rnd
from ..dispatch import invoke
from ..ndarray import ndarray
from ..numpy.random import _draw
from ..symbol.graph import Symbol

__all__ = ["seed", "bernoulli", "uniform_n", "normal_n"]


def seed(seed, device="all"):  # noqa: A002 (MXNet's name)
    """Seed the shared generator (as `mx.random.seed`)."""
    _rnd.seed(seed)


def bernoulli(prob=None, logit=None, size=None, dtype=None, device=None, out=None):
    """0/1 samples with probability `prob`, or sigmoid(`logit`): exactly one of them."""
    if (prob is None) == (logit is None):
        raise ValueError("Either `prob` or `logit` must be specified, but not both. "
                         f"Received prob={prob}, logit={logit}")
    v, is_logit = (logit, True) if prob is None else (prob, False)
    attrs = {"prob": None, "logit": None, "is_logit": is_logit, "dtype": dtype or "float32",
             "size": None if size is None else tuple(_onp.atleast_1d(size).tolist())}
    if isinstance(v, (ndarray, Symbol)):
        return invoke(_op("npx.random.bernoulli"), [v], attrs)
    attrs["logit" if is_logit else "prob"] = float(v)
    return invoke(_op("npx.random.bernoulli"), [], attrs)


def _batched(dist: str, params: dict, batch_shape, dtype):
    batch = () if batch_shape is None else tuple(_onp.atleast_1d(batch_shape).tolist())
    shapes = [v.shape for v in params.values() if isinstance(v, (ndarray, Symbol))]
    return _draw(dist, params, batch + _onp.broadcast_shapes(*shapes), dtype)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, device=None):
    return _batched("uniform", {"low": low, "high": high}, batch_shape, dtype)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, device=None):
    return _batched("normal", {"loc": loc, "scale": scale}, batch_shape, dtype)
