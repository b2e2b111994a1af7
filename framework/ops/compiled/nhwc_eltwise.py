"""Channels-last element-wise kernels of the compiled graphs (see ops/compiled/nhwc.py): `_hs_affine`
(an unfolded inference BatchNorm with its activation), `_hs_chmax` (max with a per-channel
threshold: what remains of BatchNorm + ReLU once the affine part is folded into the following
1x1 convolution) and `_hs_concat` (channel concatenation into a preallocated output). Each splits
its rows over the intra-op helper threads (ops/parallel.py).
"""
from __future__ import annotations

import numpy as np

from .. import parallel
from ..nnutil import CF, prod
from ..attrs import Int, Str
from .nhwc import ACTS, _row_parts, apply_act
from ..registry import register


@register("_hs_affine", attrs={"axis": Int(-1), "act_type": Str("none", choices=ACTS),
                               "a_min": CF(0.0), "a_max": CF(6.0)},
          inputs=("data", "scale", "shift"), infer_shape=lambda a, s: [tuple(s[0])],
          strict=True, out=True, flops=lambda a, i, o: 2 * prod(i[0]))
def hs_affine(a, x, scale, shift, out=None):
    """act(x * scale + shift), scale/shift broadcast along `axis`."""
    ax = a.axis % x.ndim
    bs = [1] * x.ndim
    bs[ax] = x.shape[ax]
    dt = x.dtype
    if out is None or out.shape != x.shape or out.dtype != dt:
        out = np.empty(x.shape, dt)
    sc, sh = scale.reshape(bs), shift.reshape(bs)
    if x.ndim < 2 or ax == 0:
        np.multiply(x, sc, out=out)
        out += sh
        return apply_act(out, a.act_type, a.a_min, a.a_max)
    prts = _row_parts(x.shape[0], x.shape[1], x.size) if ax != 1 or x.shape[0] > 1 \
        else [(0, 1, 0, x.shape[1])]

    def run(i):
        n0, n1, r0, r1 = prts[i]
        o = out[n0:n1, r0:r1]
        np.multiply(x[n0:n1, r0:r1], sc if ax != 1 else sc[:, r0:r1], out=o)
        o += sh if ax != 1 else sh[:, r0:r1]
        apply_act(o, a.act_type, a.a_min, a.a_max)
    parallel.run(run, len(prts))
    return out


def _bshape(x, ax, v):
    bs = [1] * x.ndim
    bs[ax] = x.shape[ax]
    return v.reshape(bs)


@register("_hs_chmax", attrs={"axis": Int(-1)}, inputs=("data", "threshold"),
          infer_shape=lambda a, s: [tuple(s[0])], strict=True, out=True,
          flops=lambda a, i, o: prod(i[0]))
def hs_chmax(a, x, thr, out=None):
    """max(x, threshold[channel])."""
    ax = a.axis % x.ndim
    if out is None or out.shape != x.shape or out.dtype != x.dtype:
        out = np.empty(x.shape, x.dtype)
    t = _bshape(x, ax, thr)
    if x.ndim < 2 or ax <= 1:
        return np.maximum(x, t, out=out)
    prts = _row_parts(x.shape[0], x.shape[1], x.size)

    def run(i):
        n0, n1, r0, r1 = prts[i]
        np.maximum(x[n0:n1, r0:r1], t, out=out[n0:n1, r0:r1])
    parallel.run(run, len(prts))
    return out


def _concat_shape(a, s):
    ax = a.dim % len(s[0])
    o = list(s[0])
    o[ax] = sum(x[ax] for x in s)
    return [tuple(o)]


@register("_hs_concat", attrs={"num_args": Int(), "dim": Int(1)},
          inputs=lambda a: [f"arg{i}" for i in range(a.num_args)], infer_shape=_concat_shape,
          strict=True, out=True)
def hs_concat(a, *xs, out=None):
    """Concatenate along `dim`, writing each input into its slice of the output, rows split over
    the helper threads."""
    x0 = xs[0]
    ax = a.dim % x0.ndim
    shape = _concat_shape(a, [x.shape for x in xs])[0]
    dt = np.result_type(*xs)
    if out is None or out.shape != shape or out.dtype != dt:
        out = np.empty(shape, dt)
    offs = np.cumsum([0] + [x.shape[ax] for x in xs])
    if x0.ndim < 3 or ax <= 1:
        return np.concatenate(xs, axis=ax, out=out)
    prts = _row_parts(shape[0], shape[1], out.size)

    def run(i):
        n0, n1, r0, r1 = prts[i]
        o = out[n0:n1, r0:r1]
        for x, c0, c1 in zip(xs, offs[:-1], offs[1:]):
            idx = (Ellipsis,) + (slice(int(c0), int(c1)),) + (slice(None),) * (x0.ndim - 1 - ax)
            o[idx] = x[n0:n1, r0:r1]
    parallel.run(run, len(prts))
    return out
