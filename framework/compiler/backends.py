"""`optimize_for` backends: named pass pipelines `(Symbol, args, aux, **opts) -> (Symbol, args, aux)`.

A backend sees the graph and the parameter values (arguments and auxiliary states) and may
rewrite both; parameters it invents come back in the returned dicts. `MKLDNN`/`ONEDNN` are
accepted as aliases so code written for MXNet's CPU backend runs unchanged.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..base import MXNetError
from ..symbol.graph import Symbol

Backend = Callable[..., tuple]
_BACKENDS: dict[str, Backend] = {}


def register_backend(*names: str):
    def deco(fn: Backend) -> Backend:
        for n in names:
            _BACKENDS[n] = fn
        return fn
    return deco


def get_backend(name: str) -> Backend:
    try:
        return _BACKENDS[name]
    except KeyError:
        raise MXNetError(f"Cannot find backend {name!r}; registered backends: "
                         f"{sorted(_BACKENDS)}") from None


def list_backends() -> list[str]:
    return sorted(_BACKENDS)


def _split(sym: Symbol, params: dict[str, np.ndarray]):
    aux = set(sym.list_auxiliary_states())
    return ({k: v for k, v in params.items() if k not in aux},
            {k: v for k, v in params.items() if k in aux})


@register_backend("fold_bn", "BNFold")
def fold_bn_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **_):
    """Fold inference BatchNorm into the preceding Convolution/FullyConnected."""
    from .passes.fold_batchnorm import fold_batchnorm
    params = {**(args or {}), **(aux or {})}
    out, params = fold_batchnorm(sym, params)
    return (out, *_split(out, params))


@register_backend("simplify")
def simplify_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **_):
    """Remove inference identities and fold constant subgraphs (constants become parameters)."""
    from .passes.simplify import consts_to_params, simplify
    out, params = consts_to_params(simplify(sym), {**(args or {}), **(aux or {})})
    return (out, *_split(out, params))


@register_backend("hybridserve", "MKLDNN", "ONEDNN", "MKLDNN_QUANTIZE")
def default_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **opts):
    """The inference pipeline: every rewrite that keeps outputs within float32 tolerance."""
    from .passes.fold_batchnorm import fold_batchnorm
    from .passes.layout import shares_weight
    sym, args, aux = simplify_backend(sym, args, aux)
    # 1x1 convolutions keep their BatchNorm: the layout pass applies it as a per-channel scale
    # so that the graph shares the block's weight instead of holding a folded copy
    sym, params = fold_batchnorm(sym, {**args, **aux}, keep=lambda n: n.opname == "Convolution"
                                 and shares_weight(n.parsed))
    return channels_last_backend(sym, *_split(sym, params), **opts)


@register_backend("channels_last", "NHWC")
def channels_last_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None,
                          data_shapes: dict | None = None, **_):
    """Channels-last internal layout (GEMM-ready conv weights, unfolded BatchNorms as
    precomputed affines), then bias/residual/activation fused into the conv epilogues.
    `data_shapes` (the example inputs' shapes) lets each convolution pick its algorithm."""
    from .passes.fold_preact import fold_preact
    from .passes.fuse import fuse_epilogues
    from .passes.layout import to_channels_last
    out, params = to_channels_last(sym, {**(args or {}), **(aux or {})}, data_shapes)
    known = {**{k: v.shape for k, v in params.items()}, **(data_shapes or {})} \
        if data_shapes else None
    out, params = fold_preact(fuse_epilogues(out, known), params)
    used = set(out.list_inputs())
    return (out, *_split(out, {k: v for k, v in params.items() if k in used}))


@register_backend("onnxruntime", "ORT")
def onnxruntime_backend(sym: Symbol, args: dict | None = None, aux: dict | None = None, **opts):
    """Maximal ONNX-expressible regions become subgraph nodes run by warm ONNX Runtime sessions
    (framework/onnx/partition.py); options: `providers`, `intra_op_threads`, `spinning`,
    `min_nodes`. Needs the `onnxruntime` package."""
    from ..onnx.partition import partition_onnxruntime
    return partition_onnxruntime(sym, args, aux, **opts)
