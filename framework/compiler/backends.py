"""`optimize_for` backends: named pass pipelines `(Symbol, args, aux, **opts) -> (Symbol, args, aux)`.

Each registers with the graph layer's backend table (symbol/backends.py), which
`Symbol.optimize_for` and `HybridBlock.optimize_for` read: the graph never imports its passes.
A backend sees the graph and the parameter values (arguments and auxiliary states) and may
rewrite both; parameters it invents come back in the returned dicts. `MKLDNN`/`ONEDNN` are
accepted as aliases so code written for MXNet's CPU backend runs unchanged.
"""
from __future__ import annotations

import numpy as np

from ..ops.nn.conv import convolution as CONVOLUTION
from ..symbol.backends import get_backend, list_backends, register_backend  # noqa: F401
from ..symbol.graph import Symbol
from .passes.fold_batchnorm import fold_batchnorm
from .passes.fold_preact import fold_preact
from .passes.fuse import fuse_epilogues
from .passes.layout import shares_weight, to_channels_last
from .passes.simplify import consts_to_params, simplify

def _split(sym: Symbol, params: dict[str, np.ndarray]):
    aux = set(sym.list_auxiliary_states())
    return ({k: v for k, v in params.items() if k not in aux},
            {k: v for k, v in params.items() if k in aux})


@register_backend("fold_bn", "BNFold")
def fold_bn_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **_):
    """Fold inference BatchNorm into the preceding Convolution/FullyConnected."""
    params = {**(args or {}), **(aux or {})}
    out, params = fold_batchnorm(sym, params)
    return (out, *_split(out, params))


@register_backend("simplify")
def simplify_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **_):
    """Remove inference identities and fold constant subgraphs (constants become parameters)."""
    out, params = consts_to_params(simplify(sym), {**(args or {}), **(aux or {})})
    return (out, *_split(out, params))


@register_backend("hybridserve", "MKLDNN", "ONEDNN", "MKLDNN_QUANTIZE")
def default_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **opts):
    """The inference pipeline: every rewrite that keeps outputs within float32 tolerance."""
    sym, args, aux = simplify_backend(sym, args, aux)
    # 1x1 convolutions keep their BatchNorm: the layout pass applies it as a per-channel scale
    # so that the graph shares the block's weight instead of holding a folded copy
    sym, params = fold_batchnorm(sym, {**args, **aux}, keep=lambda n: n.op is CONVOLUTION
                                 and shares_weight(n.parsed))
    return channels_last_backend(sym, *_split(sym, params), **opts)


@register_backend("channels_last", "NHWC")
def channels_last_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None,
                          data_shapes: dict | None = None, **_):
    """Channels-last internal layout (GEMM-ready conv weights, unfolded BatchNorms as
    precomputed affines), then bias/residual/activation fused into the conv epilogues.
    `data_shapes` (the example inputs' shapes) lets each convolution pick its algorithm."""
    out, params = to_channels_last(sym, {**(args or {}), **(aux or {})}, data_shapes)
    known = {**{k: v.shape for k, v in params.items()}, **(data_shapes or {})} \
        if data_shapes else None
    out, params = fold_preact(fuse_epilogues(out, known), params)
    used = set(out.list_inputs())
    return (out, *_split(out, {k: v for k, v in params.items() if k in used}))
